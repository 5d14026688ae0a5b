"""Stream-copied clips: from the keyframe before the window, shown from the window's start (an
MP4 edit list), every frame the source's own pixels at its source time, with and without
B-frames, in H.264 and HEVC, and turned as the source is turned."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import av
import numpy as np
import pytest

from stress.media.corpus import encode
from synthetic import lobby_scene, render_frame, scale_scene, write_video
from tasks.export.copy import copy_clip
from tasks.export.cut import Rgb

FPS = 10
SCENE = replace(scale_scene(lobby_scene(), width=320, height=240, duration_s=8), noise=0.0)
CODECS = {
    "h264-bframes": ("libx264", {"bf": "3", "g": "20"}),
    "h264-no-bframes": ("libx264", {"bf": "0", "g": "20"}),
    "hevc": ("libx265", {"x265-params": "keyint=20:min-keyint=20:bframes=4:log-level=error"}),
}


@pytest.fixture(scope="module", params=sorted(CODECS))
def source(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    codec, options = CODECS[request.param]
    if codec not in av.codecs_available:
        pytest.skip(f"no {codec} encoder here")
    frames = (render_frame(SCENE, i) for i in range(SCENE.frame_count))
    path = tmp_path_factory.mktemp("copy") / f"{request.param}.mp4"
    return encode(path, frames, codec=codec, options=options, fps=FPS)


def _decoded(path: Path) -> list[tuple[float, Rgb]]:
    with av.open(str(path)) as container:
        return [(float(f.time), f.to_ndarray(format="rgb24")) for f in container.decode(video=0)]


def _source_frames(path: Path) -> dict[int, Rgb]:
    return {round(t * FPS): rgb for t, rgb in _decoded(path)}


@pytest.mark.parametrize(
    "window",
    [(2.5, 4.0), (2.55, 3.33), (0.0, 1.2), (4.0, 7.9), (6.3, 8.0)],
)
def test_a_copied_clip_shows_the_sources_own_frames_from_the_windows_start(
    source: Path, window: tuple[float, float], tmp_path: Path
) -> None:
    clip = copy_clip(source, window, tmp_path / "clip.mp4")
    frames = _decoded(clip.path)
    original = _source_frames(source)

    first = min(i for i in original if i / FPS >= window[0] - 1e-6)
    assert clip.start_s == pytest.approx(first / FPS, abs=1e-3)
    last = round(clip.end_s * FPS)
    assert last >= round(window[1] * FPS) or last == max(original)  # the window's end is held
    assert last - round(window[1] * FPS) <= 4  # and at most a B-frame group after it
    assert [round((clip.start_s + t) * FPS) for t, _ in frames] == list(range(first, last + 1))
    for t, picture in frames:
        index = round((clip.start_s + t) * FPS)
        assert np.array_equal(picture, original[index]), t  # the same pixels: no re-encode
        truth = render_frame(SCENE, index).astype(np.int16)
        assert np.abs(picture.astype(np.int16) - truth).mean() < 6, t  # the known content
    assert clip.frame_times == pytest.approx([clip.start_s + t for t, _ in frames], abs=1e-3)


def test_a_window_past_the_end_is_refused_and_leaves_nothing(source: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no frame"):
        copy_clip(source, (60.0, 61.0), tmp_path / "none.mp4")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("rotation", [90, 270])
def test_a_copied_clip_keeps_the_sources_display_matrix(rotation: int, tmp_path: Path) -> None:
    frames = (render_frame(SCENE, i) for i in range(30))
    turned = encode(tmp_path / "turned.mp4", frames, rotation=rotation, fps=FPS)
    clip = copy_clip(turned, (1.0, 2.0), tmp_path / "clip.mp4")
    with av.open(str(clip.path)) as container:
        frame = next(container.decode(video=0))
    assert round(float(frame.rotation)) % 360 == rotation
    assert (frame.width, frame.height) == (SCENE.width, SCENE.height)


@pytest.mark.parametrize("suffix", [".ts", ".mkv", ".mov"])
def test_a_clip_is_copied_into_mp4_from_other_containers(suffix: str, tmp_path: Path) -> None:
    """An HLS source is MPEG-TS (H.264 in Annex B), a phone's is MOV: the MP4 clip still shows
    the source's own frames from the window's first frame."""
    source = tmp_path / f"source{suffix}"
    write_video(SCENE, source)
    clip = copy_clip(source, (2.55, 4.0), tmp_path / "clip.mp4")
    original = {round(t * FPS): rgb for t, rgb in _decoded(source)}
    frames = _decoded(clip.path)
    assert clip.start_s == pytest.approx(2.6, abs=1e-3) and frames[0][0] == 0.0
    for t, picture in frames:
        assert np.array_equal(picture, original[round((clip.start_s + t) * FPS)]), t
