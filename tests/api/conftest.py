"""API fixtures: a media server on this machine serving a small real video and an HLS copy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.hls import write_hls
from tests.fixtures.media_server import MediaServer
from ves.synthetic import SceneSpec, write_video


@pytest.fixture(scope="session")
def media_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("media")
    write_video(SceneSpec(duration_s=2.0), root / "clip.mp4")
    write_hls(root / "clip.mp4", root / "hls")
    (root / "not-a-playlist.m3u8").write_text("<html>hello</html>")
    return root


@pytest.fixture
def media(media_root: Path) -> Iterator[MediaServer]:
    with MediaServer(media_root) as server:
        yield server
