"""The artifact response models agree with the Parquet schemas they are read from.

Each response model is compared field by field with its artifact's pyarrow schema (names,
types, nullability), so a schema change cannot silently drift from the API. The few places
where the API reshapes a column on purpose are listed here, each with the reason.
"""

from __future__ import annotations

import types
import typing
from typing import Any

import pyarrow as pa
import pytest
from pydantic import BaseModel

from api.schemas.artifacts import (
    EventPublic,
    EvidenceSpan,
    ObjectPublic,
    RefreshMarker,
    RelationPublic,
    StillStretch,
    TimelineEntry,
    ZonePublic,
)
from storage.artifacts import schemas

# (response model, artifact schema, API name -> column name, columns the model leaves out,
#  columns whose type the API changes on purpose -> the API's type)
CASES: list[tuple[type[BaseModel], pa.Schema, dict[str, str], set[str], dict[str, str]]] = [
    # attributes: a JSON object kept as a string column, answered as an object.
    (ObjectPublic, schemas.OBJECTS, {"class_": "class"}, set(), {"attributes": "dict"}),
    (ZonePublic, schemas.ZONES, {}, set(), {}),
    (EventPublic, schemas.EVENTS, {}, set(), {}),
    (RelationPublic, schemas.RELATIONS, {}, set(), {}),
    # Timeline rows are events, refresh markers or still stretches (``kind``); an event's id
    # and type are set; a still stretch runs from ``t_s`` (its ``start_s``) to ``end_s``.
    (
        TimelineEntry,
        schemas.TIMELINE,
        {"confidence": "score"},
        {"kind", "reason", "end_s"},
        {"event_id": "str", "type": "str", "score": "float"},
    ),
    (
        RefreshMarker,
        schemas.TIMELINE,
        {},
        {"kind", "event_id", "type", "object_id", "zone_id", "label", "end_s"},
        {"reason": "str", "score": "float"},
    ),
    (
        StillStretch,
        schemas.TIMELINE,
        {"start_s": "t_s"},
        {"kind", "event_id", "type", "object_id", "zone_id", "label", "score"},
        {"reason": "str", "end_s": "float"},
    ),
    # frames: thumbnails are answered as URLs the caller can fetch, not paths in the run;
    # review_notes: people's notes (from the catalog) are added as served, with their verdict.
    (
        EvidenceSpan,
        schemas.EVIDENCE,
        {},
        set(),
        {
            "review_notes": "list[{author: str, created_at: str, note_id: str, "
            "supersedes: str | None, text: str, verdict: str | None}]"
        },
    ),
]
# Fields the API adds to an artifact's rows, each with the reason (not columns of the run).
SERVED_ONLY: dict[type[BaseModel], set[str]] = {
    # the current verdict of people's notes, the span's hash as its run published it, and the
    # name of what it is about (storage.artifacts.names, computed from objects as served)
    EvidenceSpan: {"verdict", "published_sha256", "object_name"},
    # names are computed from the objects' rows as served (storage.artifacts.names)
    ObjectPublic: {"name"},
    TimelineEntry: {"object_name"},
}
RENAMED_IN_STRUCTS = {"thumbnail_url": "thumbnail"}


def arrow_type(t: pa.DataType, nullable: bool) -> str:
    """A type written the way ``model_type`` writes an annotation."""
    if pa.types.is_floating(t):
        name = "float"
    elif pa.types.is_integer(t):
        name = "int"
    elif pa.types.is_string(t):
        name = "str"
    elif pa.types.is_boolean(t):
        name = "bool"
    elif pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        name = f"list[{arrow_type(t.value_type, False)}]"
    elif pa.types.is_struct(t):
        fields = {f.name: (f.type, f.nullable) for f in t}
        name = "{" + ", ".join(f"{n}: {arrow_type(*fields[n])}" for n in sorted(fields)) + "}"
    else:
        raise AssertionError(f"no API type for {t}")
    return f"{name} | None" if nullable else name


def model_type(annotation: Any) -> str:
    """An annotation of a response model, in the same notation."""
    args = typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        inner = [a for a in args if a is not type(None)]
        assert len(inner) == 1, annotation
        return f"{model_type(inner[0])} | None"
    if typing.get_origin(annotation) is list:
        return f"list[{model_type(args[0])}]"
    if typing.get_origin(annotation) is dict:
        return "dict"
    if typing.get_origin(annotation) is typing.Literal:
        return "str"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = {RENAMED_IN_STRUCTS.get(n, n): f for n, f in annotation.model_fields.items()}
        return (
            "{"
            + ", ".join(f"{n}: {model_type(fields[n].annotation)}" for n in sorted(fields))
            + "}"
        )
    return str(annotation.__name__)


def drift(
    model: type[BaseModel],
    schema: pa.Schema,
    renamed: dict[str, str],
    left_out: set[str],
    reshaped: dict[str, str],
) -> list[str]:
    """Every difference between ``model`` and ``schema``, in words (empty: they agree)."""
    found = []
    columns = {f.name: f for f in schema}
    fields = {renamed.get(name, name): f for name, f in model.model_fields.items()}
    for name in sorted(set(columns) - left_out - set(fields)):
        found.append(f"column {name} is missing from {model.__name__}")
    for name in sorted(set(fields) - set(columns) - SERVED_ONLY.get(model, set())):
        found.append(f"{model.__name__}.{name} has no column")
    for name in sorted(set(fields) & set(columns)):
        column = columns[name]
        expected = reshaped.get(name) or arrow_type(column.type, column.nullable)
        actual = model_type(fields[name].annotation)
        if expected != actual:
            found.append(f"{model.__name__}.{name} is {actual}, the column is {expected}")
    return found


@pytest.mark.parametrize(
    ("model", "schema", "renamed", "left_out", "reshaped"),
    CASES,
    ids=[case[0].__name__ for case in CASES],
)
def test_every_artifact_model_agrees_with_its_parquet_schema(
    model: type[BaseModel],
    schema: pa.Schema,
    renamed: dict[str, str],
    left_out: set[str],
    reshaped: dict[str, str],
) -> None:
    assert drift(model, schema, renamed, left_out, reshaped) == []


class _Drifted(BaseModel):
    zone_id: str
    name: str | None  # the column is not nullable
    polygon: list[list[int]]  # the column holds floats
    area: float  # no such column


def test_the_check_names_every_kind_of_drift() -> None:
    found = drift(_Drifted, schemas.ZONES, {}, set(), {})
    assert found == [
        "_Drifted.area has no column",
        "_Drifted.name is str | None, the column is str",
        "_Drifted.polygon is list[list[int]], the column is list[list[float]]",
    ]
    narrower = pa.schema([*schemas.ZONES, pa.field("colour", pa.string())])
    assert "column colour is missing from ZonePublic" in drift(ZonePublic, narrower, {}, set(), {})
