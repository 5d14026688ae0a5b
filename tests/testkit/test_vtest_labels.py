"""The hand labels of people in ``vtest.avi`` are complete, sane and sit on real things.

Truth check against the video: the median of 50 frames spread over the video is its empty
background (everybody moves at some time). Every non-difficult box must differ clearly from it,
unless it is marked ``"still": true``; and no sizeable changed blob may lie outside all boxes, which
is what a missed person would leave.

Identity check: every box carries the id of one of the 12 people in ``vtest_identities.json``, once
per frame, and only at times when that person is in the video.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import av
import cv2
import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[2] / "testkit" / "data"
LABELS = DATA / "vtest_people.json"
IDENTITIES = DATA / "vtest_identities.json"
WIDTH, HEIGHT = 768, 576
FRAMES = list(range(10, 800, 20))
BACKGROUND_FRAMES = 50
CHANGED = 30  # grey levels from the background that count as a changed pixel
MIN_CHANGED_SHARE = 0.15  # of a box's pixels (the labels' lowest is 0.30)
MARGIN = 6  # px around a box that a person's edge may still touch
MAX_STRAY_BLOB = 200  # px of changed pixels outside every box (a far person is ~500)


def _labels() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(LABELS.read_text())
    return data


def test_labels_are_complete_and_sane() -> None:
    data = _labels()
    assert data["video"] == "vtest.avi"
    assert data["size"] == [WIDTH, HEIGHT]
    for key in ("counting", "labelled_by", "method"):
        assert isinstance(data[key], str) and data[key]
    assert [f["frame"] for f in data["frames"]] == FRAMES
    for frame in data["frames"]:
        assert frame["t_s"] == pytest.approx(frame["frame"] / 10)
        assert frame["people"], f"frame {frame['frame']} has nobody"
        for person in frame["people"]:
            x1, y1, x2, y2 = person["box"]
            assert all(isinstance(v, int) for v in person["box"])
            assert 0 <= x1 < x2 <= WIDTH and 0 <= y1 < y2 <= HEIGHT, (frame["frame"], person)
            assert 15 <= y2 - y1 <= 400, (frame["frame"], person)
            assert isinstance(person["difficult"], bool)
            assert isinstance(person.get("still", False), bool)


def _identities() -> dict[int, tuple[float, float]]:
    """Person id -> (first_s, last_s) from the identities file."""
    data = json.loads(IDENTITIES.read_text())
    return {p["id"]: (p["first_s"], p["last_s"]) for p in data["people"]}


def test_every_box_has_an_identity_once_per_frame() -> None:
    data = _labels()
    assert isinstance(data["ids"], str) and data["ids"]
    for frame in data["frames"]:
        ids = [person["id"] for person in frame["people"]]
        for pid in ids:
            assert type(pid) is int and 1 <= pid <= 12, (frame["frame"], pid)
        assert len(set(ids)) == len(ids), (frame["frame"], ids)


def test_ids_are_the_twelve_people_of_the_identities_file() -> None:
    people = _identities()
    assert sorted(people) == list(range(1, 13))
    seen = {person["id"] for frame in _labels()["frames"] for person in frame["people"]}
    assert seen == set(people)


def test_ids_appear_only_while_the_person_is_in_the_video() -> None:
    people = _identities()
    outside = [
        (frame["frame"], person["id"])
        for frame in _labels()["frames"]
        for person in frame["people"]
        if not people[person["id"]][0] <= frame["t_s"] <= people[person["id"]][1]
    ]
    assert not outside, f"ids outside their [first_s, last_s] (frame, id): {outside}"


def _grey_frames(path: Path, wanted: set[int]) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """The wanted frames (decoding order from 0) in grey, and the median background."""
    sample = set(np.linspace(0, 794, BACKGROUND_FRAMES).astype(int).tolist())
    kept: dict[int, np.ndarray] = {}
    count = 0
    with av.open(str(path)) as container:
        for index, frame in enumerate(container.decode(video=0)):
            count += 1
            if index in sample or index in wanted:
                kept[index] = frame.to_ndarray(format="gray").astype(np.int16)
    assert count == 795
    background = np.median(np.stack([kept[i] for i in sorted(sample)]), axis=0)
    return {i: kept[i] for i in wanted}, background


@pytest.mark.slow
def test_labels_sit_on_real_things(vtest_avi: Path) -> None:
    data = _labels()
    frames, background = _grey_frames(vtest_avi, {f["frame"] for f in data["frames"]})
    weak: list[tuple[int, list[int], float]] = []
    stray: list[tuple[int, list[int]]] = []
    for frame in data["frames"]:
        changed = (np.abs(frames[frame["frame"]] - background) > CHANGED).astype(np.uint8)
        outside = changed.copy()
        for person in frame["people"]:
            x1, y1, x2, y2 = person["box"]
            share = float(changed[y1:y2, x1:x2].mean())
            if not person["difficult"] and not person.get("still") and share < MIN_CHANGED_SHARE:
                weak.append((frame["frame"], person["box"], round(share, 2)))
            outside[max(0, y1 - MARGIN) : y2 + MARGIN, max(0, x1 - MARGIN) : x2 + MARGIN] = 0
        outside = cv2.morphologyEx(outside, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        _, _, stats, _ = cv2.connectedComponentsWithStats(outside)
        stray += [
            (frame["frame"], [int(x), int(y), int(x + w), int(y + h)])
            for x, y, w, h, area in stats[1:]
            if area >= MAX_STRAY_BLOB
        ]
    assert not weak, f"boxes on nothing that moves (frame, box, changed share): {weak}"
    assert not stray, f"changed blobs outside every box (a missed person?): {stray}"
