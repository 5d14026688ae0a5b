"""The perception scorer against hand-made runs of a scene with known truth.

Each case builds the rows a run would publish (``objects``, ``tracks``) from the truth itself,
then spoils them in one known way, and checks that exactly that mistake is counted.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from synthetic import GroundTruth, MovingObject, SceneSpec, TextSign, ground_truth
from synthetic.scoring import interval_iou, score_scene
from synthetic.summary import summarise

FPS = 10
WIDE, HIGH = 320, 240


@pytest.fixture(scope="module")
def truth() -> GroundTruth:
    red = MovingObject("red", (220, 40, 40), (30, 60), ((1.0, 20.0, 60.0), (6.0, 300.0, 60.0)))
    blue = MovingObject("blue", (40, 40, 220), (30, 30), ((2.0, 160.0, 200.0), (9.0, 160.0, 20.0)))
    sign = TextSign("EXIT 3", 3.0, 8.0, (160, 120), font_px=28)
    spec = SceneSpec(width=WIDE, height=HIGH, fps=FPS, objects=(red, blue), signs=(sign,))
    return ground_truth(spec)


def _object(
    object_id: str, first: float, last: float, cls: str = "motion", text: str = ""
) -> dict[str, Any]:
    attributes = json.dumps({"text": text} if text else {})
    return {
        "object_id": object_id,
        "class": cls,
        "first_seen_s": first,
        "last_seen_s": last,
        "attributes": attributes,
    }


def perfect_run(truth: GroundTruth) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of a run that saw exactly the truth, tracked at every frame."""
    objects, tracks = [], []
    for k, obj in enumerate(truth.objects):
        objects.append(_object(f"obj_{k}", obj.first_seen_s, obj.last_seen_s))
        for frame, (x1, y1, x2, y2) in obj.boxes.items():
            box = [x1 / WIDE, y1 / HIGH, x2 / WIDE, y2 / HIGH]
            tracks.append({"t_s": frame / FPS, "bbox": box, "track_id": f"obj_{k}"})
    text = truth.texts[0]
    objects.append(_object("obj_t", text.start_s, text.end_s, "text", " exit  3"))
    return objects, tracks


def frames(truth: GroundTruth) -> list[int]:
    return list(range(0, truth.frame_count, 2))


def test_a_run_that_saw_the_truth_scores_perfectly(truth: GroundTruth) -> None:
    objects, tracks = perfect_run(truth)
    score = score_scene(truth, objects, tracks, frames(truth), asked_count=2)
    assert (score.matched_objects, score.phantoms, score.count_exact) == (2, 0, True)
    assert (score.matched_texts, score.texts_in_time, score.id_switches) == (1, 1, 0)
    assert score.idtp == score.truth_boxes == score.tracked_boxes > 0
    assert summarise([score]).idf1 == 1.0 and score.ask_exact


def test_an_invented_object_is_a_phantom_and_breaks_the_count(truth: GroundTruth) -> None:
    objects, tracks = perfect_run(truth)
    objects.append(_object("obj_x", 0.0, 9.0))
    tracks += [
        {"t_s": f / FPS, "bbox": [0.0, 0.0, 0.1, 0.1], "track_id": "obj_x"} for f in range(90)
    ]
    score = score_scene(truth, objects, tracks, frames(truth))
    assert (score.phantoms, score.count_exact, score.matched_objects) == (1, False, 2)
    assert summarise([score]).phantoms_per_100 == 100.0


def test_an_object_seen_in_the_wrong_place_is_not_matched(truth: GroundTruth) -> None:
    objects, tracks = perfect_run(truth)
    for row in tracks:
        if row["track_id"] == "obj_1":
            row["bbox"] = [0.8, 0.0, 0.9, 0.1]
    score = score_scene(truth, objects, tracks, frames(truth))
    assert (score.matched_objects, score.phantoms) == (1, 1)


def test_a_swap_of_identities_halfway_counts_one_switch_each(truth: GroundTruth) -> None:
    objects, tracks = perfect_run(truth)
    for row in tracks:
        if row["t_s"] >= 4.0:
            row["track_id"] = {"obj_0": "obj_1", "obj_1": "obj_0"}[row["track_id"]]
    score = score_scene(truth, objects, tracks, frames(truth))
    assert score.id_switches == 2
    assert 0.4 < summarise([score]).idf1 < 0.8


def test_a_blob_named_person_is_counted_though_it_matches(truth: GroundTruth) -> None:
    """No synthetic object is a person: each one named so is one mistake of the class vote."""
    objects, tracks = perfect_run(truth)
    objects[0]["class"] = "person"
    score = score_scene(truth, objects, tracks, frames(truth))
    assert (score.matched_objects, score.named_person) == (2, 1)
    summary = summarise([score, score_scene(truth, *perfect_run(truth), frames(truth))])
    assert summary.named_person_objects == 1 and summary.named_person == 0.25


def test_texts_match_by_string_and_time(truth: GroundTruth) -> None:
    objects, tracks = perfect_run(truth)
    objects[-1] = _object("obj_t", 4.5, 8.0, "text", "EXIT 8")
    score = score_scene(truth, objects, tracks, frames(truth))
    assert (score.truth_texts, score.predicted_texts, score.matched_texts) == (1, 1, 0)
    objects[-1] = _object("obj_t", 4.5, 8.0, "text", "exit 3")
    late = score_scene(truth, objects, tracks, frames(truth))
    assert (late.matched_texts, late.texts_in_time) == (1, 0)  # first seen 1.5 s late


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [((0, 2), (1, 3), 1 / 3), ((0, 1), (2, 3), 0.0), ((0, 4), (1, 2), 0.25), ((1, 1), (1, 1), 1.0)],
)
def test_interval_iou(a: tuple[float, float], b: tuple[float, float], expected: float) -> None:
    assert interval_iou(a, b) == pytest.approx(expected)


@pytest.fixture(scope="module")
def returning() -> GroundTruth:
    """A red thing that leaves at the right and comes back (one identity, two appearances),
    and a blue one that stays."""
    out = ((0.0, 20.0, 60.0), (3.0, 360.0, 60.0))
    back = ((6.0, 360.0, 60.0), (9.0, 100.0, 60.0))
    red = MovingObject("red", (220, 40, 40), (30, 60), out, identity="red")
    again = MovingObject("red-back", (220, 40, 40), (30, 60), back, identity="red")
    blue = MovingObject("blue", (40, 40, 220), (30, 30), ((0.0, 160.0, 200.0), (9.0, 160.0, 20.0)))
    spec = SceneSpec(width=WIDE, height=HIGH, fps=FPS, objects=(red, again, blue))
    return ground_truth(spec)


def identified_run(truth: GroundTruth, identities: list[str]) -> list[dict[str, Any]]:
    """A perfect run's objects, the k-th physical one carrying ``identities[k]``."""
    objects = perfect_run_objects(truth)
    for row, identity in zip(objects, identities, strict=True):
        row["identity_id"] = identity
    return objects


def perfect_run_objects(truth: GroundTruth) -> list[dict[str, Any]]:
    return [_object(f"obj_{k}", o.first_seen_s, o.last_seen_s) for k, o in enumerate(truth.objects)]


def _tracks(truth: GroundTruth) -> list[dict[str, Any]]:
    return [
        {
            "t_s": f / FPS,
            "bbox": [b[0] / WIDE, b[1] / HIGH, b[2] / WIDE, b[3] / HIGH],
            "track_id": f"obj_{k}",
        }
        for k, obj in enumerate(truth.objects)
        for f, b in obj.boxes.items()
    ]


def test_truth_counts_appearances_and_identities(returning: GroundTruth) -> None:
    assert returning.identities == ("red", "blue")
    assert [o.identity for o in returning.objects] == ["red", "red", "blue"]
    score = score_scene(
        returning, perfect_run_objects(returning), _tracks(returning), frames(returning)
    )
    assert (score.truth_objects, score.truth_identities, score.returns) == (3, 2, 1)
    assert score.predicted_identities is None and score.identities_exact is None
    assert summarise([score]).rows()[-1] == (
        "distinct identities (the run has no identity_id)",
        "not scored",
        "",
    )


@pytest.mark.parametrize(
    ("identities", "exact", "recognised"),
    [
        (["id_a", "id_a", "id_b"], True, 1),  # the return is recognised
        (["id_a", "id_c", "id_b"], False, 0),  # counted once per appearance
        (["id_a", "id_a", "id_a"], False, 0),  # everything merged into one identity
    ],
)
def test_identities_are_scored_when_the_run_carries_them(
    returning: GroundTruth, identities: list[str], exact: bool, recognised: int
) -> None:
    objects = identified_run(returning, identities)
    score = score_scene(returning, objects, _tracks(returning), frames(returning))
    assert (score.identities_exact, score.returns_recognised) == (exact, recognised)
    summary = summarise([score])
    assert summary.identity_scenes == 1
    assert summary.returns_recognised == f"{recognised} of 1"


def test_an_object_with_a_null_identity_counts_for_no_identity(returning: GroundTruth) -> None:
    objects = identified_run(returning, ["id_a", "id_a", "id_b"])
    objects.append({**_object("obj_face", 1.0, 2.0, "face"), "identity_id": None})
    score = score_scene(returning, objects, _tracks(returning), frames(returning))
    assert (score.predicted_identities, score.identities_exact, score.returns_recognised) == (
        2,
        True,
        1,
    )


def test_asked_counts_are_scored_against_things_where_the_run_has_identities(
    returning: GroundTruth,
) -> None:
    """Ask counts identities when a run has them ("2 different objects appeared"), so its count
    is right when it says the distinct things; without identities it counts appearances."""
    objects = identified_run(returning, ["id_a", "id_a", "id_b"])
    things = score_scene(returning, objects, _tracks(returning), frames(returning), asked_count=2)
    per_look = score_scene(returning, objects, _tracks(returning), frames(returning), asked_count=3)
    assert things.ask_exact and not per_look.ask_exact
    plain = perfect_run_objects(returning)
    old = score_scene(returning, plain, _tracks(returning), frames(returning), asked_count=3)
    assert old.ask_exact


@pytest.fixture(scope="module")
def pictured() -> GroundTruth:
    """The red walker of ``truth`` before the ``camera`` photo, whose man is a don't-care region."""
    red = MovingObject("red", (220, 40, 40), (30, 60), ((1.0, 20.0, 60.0), (6.0, 300.0, 60.0)))
    spec = SceneSpec(WIDE, HIGH, FPS, objects=(red,), backdrop_photo="camera")
    return ground_truth(spec)


def _on_the_man(truth: GroundTruth, first: float, last: float) -> list[dict[str, Any]]:
    (man,) = truth.dont_care
    x1, y1, x2, y2 = man.boxes[0]
    box = [x1 / WIDE, y1 / HIGH, x2 / WIDE, y2 / HIGH]
    count = round((last - first) * FPS) + 1
    return [{"t_s": first + k / FPS, "bbox": box, "track_id": "obj_man"} for k in range(count)]


def test_a_person_found_on_a_pictured_person_counts_neither_way(pictured: GroundTruth) -> None:
    """Like a PETS difficult label: no phantom, no wrong class, not in Ask's count, no IDF1
    box; and the walker is still scored as before."""
    objects = [*perfect_run_objects(pictured), _object("obj_man", 0.0, 2.0, "person")]
    tracks = _tracks(pictured) + _on_the_man(pictured, 0.0, 2.0)
    score = score_scene(pictured, objects, tracks, frames(pictured), asked_count=2)
    assert (score.matched_objects, score.phantoms, score.count_exact) == (1, 0, True)
    assert (score.named_person, score.dont_care_found, score.ask_exact) == (0, 1, True)
    assert score.idtp == score.truth_boxes == score.tracked_boxes > 0
    assert summarise([score]).dont_care_found == 1


def test_a_phantom_beside_a_pictured_person_is_still_one(pictured: GroundTruth) -> None:
    objects = [*perfect_run_objects(pictured), _object("obj_x", 0.0, 2.0, "person")]
    tracks = _tracks(pictured) + [
        {"t_s": f / FPS, "bbox": [0.9, 0.0, 1.0, 0.1], "track_id": "obj_x"} for f in range(21)
    ]
    score = score_scene(pictured, objects, tracks, frames(pictured), asked_count=2)
    assert (score.phantoms, score.named_person, score.ask_exact) == (1, 1, False)
