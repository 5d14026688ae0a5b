"""The motion detector where text was read (``forget_text``), against KNOWN truth.

A sign whose text the OCR reads is no motion while it is there; a thing that walks in front of
it is, and stays one box. Scenes sampled at 5 fps like the pipeline, as in ``test_motion``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from synthetic import GroundTruth, MovingObject, SceneSpec, TextSign, ground_truth, render_frame
from tasks.detect.detectors.motion import MotionConfig, MotionDetector
from tests.tasks.detect.test_motion import SAMPLE_FPS, WIDTH, iou, small_frame


def walk_past_sign(
    sign: TextSign, walker: MovingObject
) -> tuple[GroundTruth, npt.NDArray[np.float32]]:
    """An 8 s scene of ``walker`` and ``sign``, and the sign's box as the OCR reads it."""
    spec = SceneSpec(
        width=WIDTH, height=180, fps=SAMPLE_FPS, duration_s=8.0, signs=(sign,), objects=(walker,)
    )
    truth = ground_truth(spec)
    x1, y1, x2, y2 = truth.texts[0].box
    return truth, np.array([[x1 / WIDTH, y1 / 180, x2 / WIDTH, y2 / 180]], dtype=np.float32)


def test_change_inside_ignored_boxes_does_not_count() -> None:
    """Where text was read, a sign appearing is no motion, and it does not swallow an object
    that walks past it into one box."""
    sign = TextSign("EXIT 3", 1.0, 8.0, (160, 40), font_px=28)
    walker = MovingObject(
        "walker", (40, 40, 220), (24, 48), ((0.0, -20.0, 60.0), (8.0, 340.0, 60.0))
    )
    truth, text_box = walk_past_sign(sign, walker)
    detector = MotionDetector(MotionConfig())
    for i in range(40):
        shown = truth.texts[0].start_s <= i / SAMPLE_FPS <= truth.texts[0].end_s
        small = small_frame(render_frame(truth.spec, i), grey=False)
        dets = detector.detect_frame(i, i / SAMPLE_FPS, small, ignore=text_box if shown else None)
        width = dets.boxes[:, 2] - dets.boxes[:, 0]
        assert (width < 0.25).all(), (i, dets.boxes)  # never the walker and the sign together


def test_a_walker_crossing_in_front_of_read_text_stays_one_box_on_its_truth() -> None:
    """A walker taller than a sign walks in front of it while its text is read: its region
    reaches out of the ignored box, so it is kept whole (it was cut into a top and a bottom
    part, or lost, while it crossed)."""
    sign = TextSign("PLATFORM 61", 0.0, 8.0, (160, 90), font_px=24)
    walker = MovingObject(
        "walker", (220, 200, 30), (30, 90), ((0.0, -20.0, 90.0), (8.0, 340.0, 90.0)), "texture"
    )
    truth, text_box = walk_past_sign(sign, walker)
    spec, (x1, _, x2, _) = truth.spec, truth.texts[0].box
    detector = MotionDetector(MotionConfig())
    crossing = 0
    for i in range(40):
        small = small_frame(render_frame(spec, i), grey=False)
        dets = detector.detect_frame(i, i / SAMPLE_FPS, small, ignore=text_box)
        b = truth.objects[0].boxes.get(i)
        if i and b is not None and b[2] > x1 and b[0] < x2:  # in front of the sign
            crossing += 1
            here = (b[0] / WIDTH, b[1] / 180, b[2] / WIDTH, b[3] / 180)
            assert len(dets) == 1 and iou(tuple(dets.boxes[0].tolist()), here) > 0.7, (i, dets)
    assert crossing >= 10
