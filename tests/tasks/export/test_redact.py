"""Redaction against known truth: lfw_subset faces pasted at known places (at frame and at
thumbnail scale), and a text box with a known place and interval on a noise frame."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.export.redact import Redactor, Region, TextBox, text_boxes_of
from testkit.redaction_truth import score_redaction

# Floors a little under benchmarks/redaction.py's figures (docs/how-to/exports.md, "Redaction").
CASES = [  # face side on the canvas, canvas, thumbnail width, recall floor
    pytest.param(25, 1280, None, 0.9, id="25px-in-a-1280px-frame"),  # measured 0.97
    pytest.param(50, 1280, 320, 0.85, id="12px-in-a-320px-thumbnail"),  # measured 0.92
]


@pytest.mark.slow  # 20-30 s each: CenterFace on 40 canvases
@pytest.mark.parametrize(("side", "canvas", "thumb", "floor"), CASES)
def test_pasted_faces_are_pixelated_with_little_else(
    side: int, canvas: int, thumb: int | None, floor: float
) -> None:
    redactor = Redactor(frozenset({"faces"}))
    score = score_redaction(lambda im: redactor.frame(im, 0.0)[0], side, canvas, thumb, faces=40)
    assert score.recall >= floor, score
    assert score.collateral < 0.02, score


TEXT = TextBox("obj_sign", (0.25, 0.25, 0.5, 0.5), start_s=2.0, end_s=4.0, pad_s=0.5)
GROWN = (74, 54, 166, 126)  # the box in 320 x 240 pixels, grown by 10 % of its 60 px height


@pytest.mark.parametrize(("t_s", "shown"), [(1.0, False), (1.6, True), (3.0, True), (5.0, False)])
def test_a_text_box_is_pixelated_only_while_it_is_shown(t_s: float, shown: bool) -> None:
    frame = np.random.default_rng(1).integers(0, 256, (240, 320, 3), dtype=np.uint8)
    out, regions = Redactor(frozenset({"text"}), [TEXT]).frame(frame, t_s)
    changed = np.any(out != frame, axis=2)
    x1, y1, x2, y2 = GROWN
    inside = np.zeros_like(changed)
    inside[y1:y2, x1:x2] = True
    assert not changed[~inside].any()
    if shown:
        assert regions == [Region("text", GROWN)]
        assert changed[inside].mean() > 0.95
    else:
        assert regions == [] and not changed.any()


def test_a_text_object_is_the_union_of_its_tracked_boxes_over_its_sightings() -> None:
    rows = [
        {"class": "text", "track_id": "obj_a", "t_s": 4.0, "bbox": [0.1, 0.2, 0.3, 0.3]},
        {"class": "text", "track_id": "obj_a", "t_s": 8.0, "bbox": [0.12, 0.18, 0.31, 0.3]},
        {"class": "motion", "track_id": "obj_b", "t_s": 5.0, "bbox": [0.5, 0.5, 0.6, 0.6]},
    ]
    (text,) = text_boxes_of(rows)
    assert (text.object_id, text.start_s, text.end_s) == ("obj_a", 4.0, 8.0)
    assert text.box == pytest.approx((0.1, 0.18, 0.31, 0.3))


def test_only_faces_and_text_can_be_redacted() -> None:
    with pytest.raises(ValueError, match="plates"):
        Redactor(frozenset({"plates"}))
