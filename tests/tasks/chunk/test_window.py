"""A live window as a chunk: its times on the session's clock, its lead-in, its linked copy."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from synthetic import lobby_scene
from tasks.chunk.window import analyse_window, linked
from tasks.context import RunContext, SourceRef
from tasks.decode.live import WindowBytes
from tasks.options import RunOptions
from testkit.hls import write_hls
from ves.settings import Settings


def _window(root: Path, lead: int | None, own: list[int], start_s: float) -> WindowBytes:
    parts = ([lead] if lead is not None else []) + own
    data = b"".join((root / f"segment_{n:03d}.ts").read_bytes() for n in parts)
    path = root / "window.ts"
    path.write_bytes(data)
    lead_s = 2.0 if lead is not None else 0.0
    return WindowBytes(
        path,
        start_s,
        2.0 * len(own),
        lead_s,
        own[0],
        own[-1] + 1,
        len(own),
        hashlib.sha256(data).hexdigest(),
        len(data),
    )


def test_a_window_is_a_chunk_on_the_session_clock(tmp_path: Path, settings: Settings) -> None:
    root = tmp_path / "hls"
    write_hls(lobby_scene(), root, 2.0)
    ctx = RunContext(
        settings, "run_w", "ten_w", "vid_w", SourceRef("hls", "http://h/x", None), RunOptions()
    )
    # Segments 3 and 4 (scene 6-10 s) with segment 2 as lead-in; the session began at scene 2 s.
    window = _window(root, 2, [3, 4], start_s=4.0)
    source, result = analyse_window(ctx, window, 1, tmp_path / "w1")
    assert (result.chunk.decode_from_s, result.chunk.start_s, result.chunk.end_s) == (
        2.0,
        4.0,
        8.0,
    )
    times = [row["t_s"] for row in result.sampled.rows]
    assert times[0] == pytest.approx(2.0) and 7.5 < times[-1] < 8.0
    motion = result.found["motion"]
    assert len(motion) and float(motion.t_s.min()) >= 2.0 - 1e-4
    assert source.sha256 == window.sha256

    copy = linked(result, tmp_path / "copy")
    moved = copy.sampled.thumbnail_path(0)
    moved.replace(tmp_path / "taken.jpg")  # what the join does with a thumbnail
    assert result.sampled.thumbnail_path(0).is_file()  # the window keeps its own
