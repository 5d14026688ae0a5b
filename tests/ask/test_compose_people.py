"""How an answer names a person: by what they wear, never a colour put before "person"."""

from __future__ import annotations

import dataclasses

from ask.compose import describe
from ask.world import Thing


def _thing(cls: str, colour: str | None) -> Thing:
    fields = {f.name: None for f in dataclasses.fields(Thing)}
    base = {**fields, "object_id": "obj_1", "cls": cls, "colour": colour}
    base["colour_confidence"] = 1.0 if colour else 0.0
    return Thing(**base)


def test_a_person_is_named_by_the_colour_they_wear() -> None:
    assert describe(_thing("person", "black")) == "a person in black (obj_1)"
    assert describe(_thing("person", None)) == "a person (obj_1)"
    assert describe(_thing("motion", "red")) == "a red moving object (obj_1)"
