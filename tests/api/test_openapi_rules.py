"""The served OpenAPI states the rules the server enforces (issue 45): a request body the server
refuses for its own shape is one the schema calls invalid, the documented examples are valid, and
the rules that depend on the deployment (a YOLO model set by the operator) are this deployment's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from api.app import create_app
from api.schemas.onboarding import EMAIL_PATTERN
from api.schemas.videos import HTTP_URL_PATTERN, NOT_BLANK_PATTERN, PLAIN_LINE_PATTERN, not_blank
from tests.api.helpers import expect_problem
from tests.api.test_runs import BAD_EXECUTE_BODIES
from ves.settings import Settings

TAKEN_EXECUTE_BODIES = [
    {},
    {"detector": "motion+person"},
    {"detector": "yolo", "yolo_model": "yolov8n.onnx"},
    {"detector": "yolo+ocr", "yolo_model": "coco/..v8.onnx"},
    {"skip_still": "keyframes", "sample_fps": 2},
]


def _spec(data_dir: Path, **settings: Any) -> dict[str, Any]:
    app = create_app(Settings(data_dir=data_dir, **settings))
    spec: dict[str, Any] = app.openapi()
    return spec


def _validator(spec: dict[str, Any], schema: dict[str, Any]) -> Draft202012Validator:
    """A validator of ``schema`` whose ``#/components/...`` references resolve in ``spec``."""
    return Draft202012Validator({**spec, **schema})


def _run_options(spec: dict[str, Any]) -> Draft202012Validator:
    return _validator(spec, {"$ref": "#/components/schemas/RunOptions"})


@pytest.mark.parametrize("body", BAD_EXECUTE_BODIES)
def test_what_execute_refuses_for_its_shape_the_schema_calls_invalid(
    tmp_path: Path, body: dict[str, Any]
) -> None:
    assert not _run_options(_spec(tmp_path)).is_valid(body)


@pytest.mark.parametrize("body", TAKEN_EXECUTE_BODIES)
def test_what_execute_takes_the_schema_calls_valid(tmp_path: Path, body: dict[str, Any]) -> None:
    assert _run_options(_spec(tmp_path)).is_valid(body)


def test_a_yolo_detector_needs_a_model_only_where_the_operator_set_none(
    tmp_path: Path, client_with: Any
) -> None:
    """Without ``VES_YOLO_MODEL`` the schema requires ``yolo_model`` beside a yolo detector, as
    the server does; with one set, neither does (the run uses the operator's model)."""
    bare = _spec(tmp_path / "bare")
    assert not _run_options(bare).is_valid({"detector": "yolo+face"})
    equipped = _spec(tmp_path / "equipped", yolo_model=Path("models/m.onnx"))
    assert _run_options(equipped).is_valid({"detector": "yolo+face"})
    assert "allOf" not in equipped["components"]["schemas"]["RunOptions"]
    served: httpx.Client = client_with()
    assert "allOf" in served.get("/openapi.json").json()["components"]["schemas"]["RunOptions"]


def _request_examples(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any], Any]]:
    """Every documented example of a JSON request body: (operation, its schema, the example)."""
    found = []
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            media = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if not media:
                continue
            schema = media["schema"]
            named = [e["value"] for e in media.get("examples", {}).values() if "value" in e]
            target = schema
            if "$ref" in schema:
                target = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
            for example in [*named, *target.get("examples", [])]:
                found.append((f"{method.upper()} {path}", schema, example))
    return found


def test_every_documented_request_example_is_valid_under_its_schema(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    examples = _request_examples(spec)
    assert len(examples) >= 10  # add, execute, exports, webhooks, ask, notes, onboarding ...
    invalid = [
        (operation, example)
        for operation, schema, example in examples
        if not _validator(spec, schema).is_valid(example)
    ]
    assert invalid == []


def test_an_upload_larger_than_this_deployment_takes_is_invalid(tmp_path: Path) -> None:
    spec = _spec(tmp_path, max_upload_bytes=1_000_000, max_body_bytes=1_000)
    upload = _validator(spec, {"$ref": "#/components/schemas/UploadSpec"})
    declared = {"filename": "rec.mp4", "content_type": "video/mp4"}
    assert upload.is_valid({**declared, "size_bytes": 1_000_000})
    assert not upload.is_valid({**declared, "size_bytes": 1_000_001})  # the server's 413


@pytest.mark.parametrize("text", ["\x1f", "\x85 ", "\u3000\t", " \u2028", "\ufeff", " a ", "x"])
def test_white_space_is_the_same_to_the_schema_and_the_server(text: str) -> None:
    """ECMA 262's ``\\s`` is not Python's white space (U+001C-U+001F, U+0085): the patterns name
    the characters ``not_blank`` strips, so a text is blank to both or to neither."""
    try:
        not_blank(text, "text")
        taken = True
    except ValueError:
        taken = False
    assert bool(re.search(NOT_BLANK_PATTERN, text)) == taken
    assert bool(re.search(PLAIN_LINE_PATTERN, text)) == (taken and text.isprintable())
    has_blank = any(c.isspace() for c in text)
    assert bool(re.match(EMAIL_PATTERN, f"ada{text}@example.com")) == (not has_blank)
    assert bool(re.match(HTTP_URL_PATTERN, f"https://example.com/{text}")) == (not has_blank)


def test_a_one_value_query_parameter_given_twice_is_422(client: httpx.Client) -> None:
    """The schema says one value; the last of several is not silently taken (the fuzz run
    searched ``title=false&title=false``). Parameters that take several values still do."""
    twice = client.get("/api/product/videos", params=[("limit", "1"), ("limit", "2")])
    body = expect_problem(twice, 422, "validation_error")
    assert body["errors"] == [{"loc": ["query", "limit"], "msg": "takes one value"}]
    titles = client.get("/api/product/search", params=[("title", "a"), ("title", "a")])
    expect_problem(titles, 422, "validation_error")
    classes = client.get("/api/product/search", params=[("class", "person"), ("class", "text")])
    assert classes.status_code == 200, classes.text
    assert client.get("/api/product/videos", params={"limit": 1}).status_code == 200
