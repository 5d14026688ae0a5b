"""Where a long video is split: at keyframes, about a chunk apart, each with a lead-in."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from synthetic import lobby_scene, write_video
from tasks.chunk.plan import (
    Chunk,
    borders,
    keyframe_times,
    lead_start,
    plan,
    plan_chunks,
    seekable,
)
from tasks.context import SourceRef
from tasks.decode.stage import SourceInfo, decode_source
from tasks.sample.gate import Gate
from ves.settings import Settings

EVERY_2S = [float(t) for t in range(0, 60, 2)]


def test_borders_are_keyframes_near_each_multiple_of_the_chunk_length() -> None:
    chunks = plan(EVERY_2S, 60.0, chunk_s=15.0, lead_s=3.0)
    assert [c.start_s for c in chunks] == [0.0, 14.0, 30.0, 44.0]  # nearest keyframes, ties down
    assert [c.end_s for c in chunks] == [14.0, 30.0, 44.0, math.inf]
    # Each lead-in starts at the latest keyframe at least 3 s before the border.
    assert [c.decode_from_s for c in chunks] == [0.0, 10.0, 26.0, 40.0]
    assert all(c.decode_from_s in EVERY_2S for c in chunks)


def test_a_video_no_longer_than_a_chunk_or_without_keyframes_is_one_piece() -> None:
    assert plan(EVERY_2S, 30.0, chunk_s=30.0, lead_s=3.0) == [Chunk(0, 0.0, 0.0, math.inf)]
    assert plan([0.0], 600.0, chunk_s=30.0, lead_s=3.0) == [Chunk(0, 0.0, 0.0, math.inf)]
    assert plan(EVERY_2S, 60.0, chunk_s=0.0, lead_s=3.0) == [Chunk(0, 0.0, 0.0, math.inf)]


def test_no_chunk_is_shorter_than_half_a_chunk() -> None:
    # Keyframes only at 0, 25 and 29 s in 32 s: the border near 10 s would be at 0, the one
    # near 30 s would leave a 3 s chunk: only 25 s remains a border.
    chunks = plan([0.0, 25.0, 29.0], 32.0, chunk_s=10.0, lead_s=2.0)
    assert [c.start_s for c in chunks] == [0.0, 25.0]


def test_a_lead_in_is_given_up_where_keyframes_are_too_far_apart() -> None:
    assert lead_start([0.0, 10.0, 20.0], border=20.0, lead_s=4.0) == 10.0  # 10 s back: kept
    assert lead_start([0.0, 20.0], border=20.0, lead_s=4.0) == 20.0  # 20 s back: none
    assert lead_start([0.0, 20.0], border=20.0, lead_s=0.0) == 20.0


def test_keyframes_are_read_from_the_container(tmp_path: Path) -> None:
    path = tmp_path / "lobby.mp4"
    write_video(lobby_scene(), path)  # 20 s at 10 fps, a keyframe every 2 s
    assert keyframe_times(path) == pytest.approx([float(t) for t in range(0, 20, 2)])


def test_the_plan_of_a_file_follows_its_keyframes_and_the_run_bound(tmp_path: Path) -> None:
    path = tmp_path / "lobby.mkv"
    write_video(lobby_scene(), path)
    source = decode_source(SourceRef("upload", None, str(path)), tmp_path, Settings())
    chunks = plan_chunks(source, horizon_s=600.0, chunk_s=5.0, lead_s=1.0)
    assert [c.start_s for c in chunks] == pytest.approx([0.0, 4.0, 10.0, 14.0])
    assert [c.decode_from_s for c in chunks] == pytest.approx([0.0, 2.0, 8.0, 12.0])
    bounded = plan_chunks(source, horizon_s=9.0, chunk_s=5.0, lead_s=1.0)
    assert [c.start_s for c in bounded] == pytest.approx([0.0, 4.0])


def test_a_container_without_a_seek_index_is_never_split(tmp_path: Path) -> None:
    # An MPEG-TS of ten minutes (never opened: the container's name decides).
    source = SourceInfo(str(tmp_path / "x.ts"), "", 0, 600.0, 320, 240, 10.0, "h264", "mpegts")
    assert plan_chunks(source, 600.0, chunk_s=60.0, lead_s=5.0) == [Chunk(0, 0.0, 0.0, math.inf)]
    assert seekable("mov,mp4,m4a,3gp,3g2,mj2") and seekable("matroska,webm")
    assert not seekable("mpegts") and not seekable("hls")


def test_with_the_activity_gate_borders_move_to_still_keyframes_near_the_multiple() -> None:
    """Keyframes every 2 s; the gate calls 110-116 s and 236-250 s still: the borders move
    there (no event is cut, the lead-in costs no decoding) but never further than a quarter
    chunk, and fall back to the nearest keyframe where nothing near is still."""
    keyframes = [2.0 * i for i in range(300)]
    gate = Gate.of_spans([(0.0, 110.0), (116.0, 236.0), (250.0, 600.0)], keyframes, end_s=600.0)
    still = [t for t in keyframes if gate.is_still(t)]
    assert still == [110.0, 112.0, 114.0, 236.0, 238.0, 240.0, 242.0, 244.0, 246.0, 248.0]
    assert borders(keyframes, 600.0, 120.0, still) == [114.0, 240.0, 360.0, 480.0]
    assert borders(keyframes, 600.0, 120.0) == [120.0, 240.0, 360.0, 480.0]
