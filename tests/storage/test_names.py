"""Object names: one rule, table-driven, over rows as ``objects.parquet`` holds them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from storage.artifacts.names import name_objects


def _obj(
    object_id: str,
    kind: str,
    first_s: float,
    *,
    colour: str | None = None,
    identity: str | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    attributes = {"text": text} if text is not None else {}
    return {
        "object_id": object_id,
        "class": kind,
        "first_seen_s": first_s,
        "colour": colour,
        "identity_id": identity,
        "attributes": json.dumps(attributes),
    }


CASES: list[tuple[str, list[dict[str, Any]], dict[str, str]]] = [
    (
        "people numbered per identity in order of first appearance",
        [
            _obj("obj_b", "person", 5.0, identity="idn_2"),
            _obj("obj_a", "person", 1.0, identity="idn_1"),
            _obj("obj_c", "person", 9.0, identity="idn_1"),  # idn_1 came back
            _obj("obj_d", "person", 7.0),  # no identity: a person of its own
        ],
        {"obj_a": "person 1", "obj_b": "person 2", "obj_c": "person 1", "obj_d": "person 3"},
    ),
    (
        "movers by colour, numbered only when two share it; without colour, numbered",
        [
            _obj("obj_r1", "motion", 1.0, colour="red"),
            _obj("obj_g", "motion", 2.0, colour="green"),
            _obj("obj_r2", "motion", 3.0, colour="red"),
            _obj("obj_x", "motion", 4.0),
            _obj("obj_y", "motion", 6.0),
            _obj("obj_car", "car", 5.0, colour="blue"),
        ],
        {
            "obj_r1": "red object 1",
            "obj_g": "green object",
            "obj_r2": "red object 2",
            "obj_x": "object 1",
            "obj_y": "object 2",
            "obj_car": "blue car",
        },
    ),
    (
        "an identity's appearances share a colour name without counting twice",
        [
            _obj("obj_1", "motion", 1.0, colour="red", identity="idn_r"),
            _obj("obj_2", "motion", 8.0, colour="red", identity="idn_r"),
        ],
        {"obj_1": "red object", "obj_2": "red object"},
    ),
    (
        "texts by what was read (quoted), else numbered; faces numbered",
        [
            _obj("obj_t1", "text", 0.0, text="GATE 7"),
            _obj("obj_t2", "text", 1.0, text=""),
            _obj("obj_t3", "text", 2.0, text="EXIT"),
            _obj("obj_t4", "text", 3.0, text="EXIT"),
            _obj("obj_f", "face", 4.0),
        ],
        {
            "obj_t1": '"GATE 7"',
            "obj_t2": "text 1",
            "obj_t3": '"EXIT" 1',
            "obj_t4": '"EXIT" 2',
            "obj_f": "face 1",
        },
    ),
]


@pytest.mark.parametrize(("rows", "names"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_object_gets_the_name_people_read(
    rows: list[dict[str, Any]], names: dict[str, str]
) -> None:
    assert name_objects(rows) == names


def test_attributes_may_come_parsed() -> None:
    row = _obj("obj_t", "text", 0.0) | {"attributes": {"text": "LOBBY"}}
    assert name_objects([row]) == {"obj_t": '"LOBBY"'}
