"""The idle-heavy clips of ``benchmarks/pipeline.py --cases idle``: their truth is the file's.

The benchmark scores the activity gate's recall against the planted events, so the events must
be exactly where the truth says: pixels differ from the still room only inside the boxes of the
events in effect, every event in effect changes its box, and the stitched file (still GOPs are
copies) shows at every frame what the renderer drew for that frame.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import av
import numpy as np
import pytest

from benchmarks._idle import FPS, IdleScene, IdleSpec, make_idle_clip, plan_pieces, plant_events
from benchmarks._idle_recall import find_events
from synthetic import render_frame

SMALL = IdleSpec(seconds=20, active=0.5, gop_s=2, bframes=True, noisy=False, height=360)


@pytest.fixture(scope="module")
def scene() -> IdleScene:
    return plant_events(SMALL)


def _allowed(scene: IdleScene, index: int) -> np.ndarray:
    """Where frame ``index`` may differ from the still room: the boxes of events in effect."""
    truth, mask = scene.truth(), np.zeros((SMALL.height, SMALL.width), bool)
    for event in scene.events:
        box = event.box_at(truth, index)
        if box is not None:
            x1, y1, x2, y2 = (math.floor(box[0]), math.floor(box[1]), *map(math.ceil, box[2:]))
            mask[max(y1, 0) : y2, max(x1, 0) : x2] = True
    return mask


def test_every_kind_is_planted_once_and_the_share_is_kept(scene: IdleScene) -> None:
    kinds = [e.kind for e in scene.events]
    assert {"pass", "walker", "sign", "light"} == set(kinds)
    assert kinds.count("walker") == kinds.count("sign") == kinds.count("light") == 1
    assert scene.active_s == pytest.approx(SMALL.active * SMALL.seconds, abs=0.5)
    assert all(0 < e.start_s <= e.end_s <= SMALL.seconds for e in scene.events)
    assert any(p.look is not None for p in plan_pieces(scene)), "no still GOP to copy"


def test_pixels_change_only_inside_the_events_in_effect(scene: IdleScene) -> None:
    room = replace(scene.spec, objects=(), signs=(), lighting=())
    truth = scene.truth()
    for index in range(0, truth.frame_count, 2):
        changed = np.any(render_frame(scene.spec, index) != render_frame(room, index), axis=2)
        assert not np.any(changed & ~_allowed(scene, index)), f"frame {index}"
        for event in scene.events:
            box = event.box_at(truth, index)
            if box is not None and box[2] - box[0] >= 2:
                x1, y1, x2, y2 = (int(v) for v in box)
                assert changed[y1:y2, x1:x2].any(), f"{event.name} unseen in frame {index}"


def test_the_stitched_file_shows_what_was_rendered(scene: IdleScene, tmp_path: Path) -> None:
    path, _ = make_idle_clip(SMALL, cache=tmp_path)
    with av.open(str(path)) as container:
        frames = list(container.decode(video=0))
    assert len(frames) == SMALL.seconds * FPS
    for index, frame in enumerate(frames):
        assert round(float(frame.time or 0) * FPS) == index
        if index % 5 == 0:
            decoded = frame.to_ndarray(format="rgb24").astype(np.int16)
            error = np.abs(decoded - render_frame(scene.spec, index)).mean()
            assert error < 4.0, f"frame {index} differs from its render by {error:.1f}"


def test_recall_finds_an_event_by_place_and_time(scene: IdleScene) -> None:
    truth, interval = scene.truth(), 0.2
    walker = next(e for e in scene.events if e.kind == "walker")
    middle = round((walker.start_s + walker.end_s) / 2 * FPS)
    x1, y1, x2, y2 = truth.object_named("walker").boxes[middle]
    on = [x1 / SMALL.width, y1 / SMALL.height, x2 / SMALL.width, y2 / SMALL.height]
    off = [0.0, 0.0, 0.01, 0.01]
    cases = [
        ([{"t_s": middle / FPS, "bbox": on}], True),
        ([{"t_s": middle / FPS, "bbox": off}], False),
    ]
    cases.append(([{"t_s": walker.end_s + 3 * interval, "bbox": on}], False))
    for detections, expected in cases:
        found = find_events(scene, detections, [], interval)
        assert (found["walker"] is not None) == expected, detections
    light = next(e for e in scene.events if e.kind == "light")
    still = [{"t_s": light.start_s - 1.0, "scene_score": 0.02}]
    for score, held, expected in ((0.05, False, True), (0.01, False, False), (0.05, True, False)):
        frames = [*still, {"t_s": light.start_s + 0.1, "scene_score": score, "held": held}]
        light_seen = find_events(scene, [], frames, interval)["light"]
        assert (light_seen is not None) == expected, (score, held)
