"""Held frames' rows: each held frame gets a copy of its source frame's rows, at its own index
and time, and nothing else moves."""

from __future__ import annotations

import numpy as np

from tasks.detect.held import analysed, carry_to_held, held_sources
from tasks.detections import Detections

# Frames 0-6 at 5 fps; 2-3 held after 1, 5-6 held after 4.
FRAMES = [{"sample_index": i, "t_s": i / 5, "held": i in (2, 3, 5, 6)} for i in range(7)]


def _rows(frames: list[int], xs: list[float]) -> Detections:
    n = len(frames)
    boxes = np.asarray([[x, 0.1, x + 0.1, 0.4] for x in xs], np.float32)
    return Detections(
        boxes=boxes,
        scores=np.linspace(0.5, 0.9, n).astype(np.float32),
        class_ids=np.zeros(n, np.int64),
        frame_index=np.asarray(frames, np.int64),
        t_s=np.asarray([f / 5 for f in frames], np.float32),
    )


def test_each_held_frame_has_the_last_decoded_frame_before_it_as_source() -> None:
    assert held_sources(FRAMES) == {2: 1, 3: 1, 5: 4, 6: 4}
    assert [r["sample_index"] for r in analysed(FRAMES)] == [0, 1, 4]
    assert held_sources([{"sample_index": 0, "held": True}]) == {}  # nothing before it


def test_held_frames_carry_their_source_rows_at_their_own_time() -> None:
    found = _rows([0, 1, 1, 4], [0.0, 0.2, 0.6, 0.3])
    times = {r["sample_index"]: r["t_s"] for r in FRAMES}
    carried = carry_to_held(found, held_sources(FRAMES), times)
    assert carried.frame_index.tolist() == [0, 1, 1, 2, 2, 3, 3, 4, 5, 6]
    assert np.allclose(carried.t_s, [times[i] for i in carried.frame_index.tolist()])
    for held, source in ((2, 1), (3, 1), (5, 4), (6, 4)):
        mine, theirs = carried.frame_index == held, carried.frame_index == source
        assert np.array_equal(carried.boxes[mine], carried.boxes[theirs])
        assert np.array_equal(carried.scores[mine], carried.scores[theirs])


def test_a_source_with_no_rows_leaves_its_held_frames_empty() -> None:
    found = _rows([4], [0.3])
    carried = carry_to_held(found, held_sources(FRAMES), {i: i / 5 for i in range(7)})
    assert carried.frame_index.tolist() == [4, 5, 6]
    assert len(carry_to_held(_rows([], []), {2: 1}, {2: 0.4})) == 0
