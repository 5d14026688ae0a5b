"""The refusals of schema-valid requests that the fuzz run lets through (``stress.fuzz.run``).

``positive_data_acceptance`` fails a request the OpenAPI calls valid that is refused with a 4xx
other than 401, 403, 404, 409 or 429. A few refusals are right and yet no schema of the request
can state them; each is listed here with its kind, and each route documents the refusal's
problem with an example (tests/stress/test_fuzz.py checks both):

- ``earlier calls``: what an earlier call made or declared (an upload's size and digest, a
  cursor of an earlier page, the video's length and the cost model the earlier runs taught,
  the workspace's plan);
- ``the network``: whether a host resolves, and to which address, at the time of the call;
- ``two values``: a rule between two values of one request (an end before its start, names
  unique within a list, a parameter that needs another), which no JSON Schema keyword compares
  and OpenAPI 3.1 cannot tie between query parameters;
- ``free text``: a question or query that the reader cannot read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["earlier calls", "the network", "two values", "free text"]


@dataclass(frozen=True)
class AllowedRefusal:
    """A refusal of a schema-valid request that ``check`` may not count: the request is
    refused for a reason no schema of it can state (``kind``). Only a problem with this ``code``
    whose ``detail`` holds ``detail`` is let through (its ``detail`` or one of its ``errors``'
    messages); the route documents the status with that problem's example."""

    operation: str
    check: str
    code: str  # the problem's `code`; its `type` is PROBLEM_TYPE_BASE + code
    detail: str  # a part of the problem's `detail`, so that only this refusal passes
    reason: str
    kind: Kind = "earlier calls"


_ACCEPTANCE = "positive_data_acceptance"
# Kept short on purpose (tests/stress/test_fuzz.py asserts its size and that each is documented).
ALLOWED_REFUSALS = (
    AllowedRefusal(
        "PUT /api/videos/{video_id}/content",
        _ACCEPTANCE,
        "validation_error",
        "declared",
        "the bytes must have the size and sha256 that the earlier add declared",
    ),
    AllowedRefusal(
        "POST /api/product/videos/{video_id}/execute",
        _ACCEPTANCE,
        "validation_error",
        "does not cover the start of the run",
        "max_compute_s below the estimate for the video's first seconds: the estimate comes from "
        "the video (its length, its source) and the cost model the earlier runs taught",
    ),
    AllowedRefusal(
        "POST /api/product/videos/{video_id}/execute",
        _ACCEPTANCE,
        "plan_limit_exceeded",
        "",
        "the bounds of execute's options (max_duration_s, window_s, ...) are the tenant's plan, "
        "set by the operator per workspace; the schema is one for every plan",
    ),
    *(
        AllowedRefusal(
            operation,
            _ACCEPTANCE,
            "invalid_request",
            "cursor",
            "a cursor is next_cursor of an earlier page; its pattern says its alphabet and "
            "length, not which values an earlier call gave",
        )
        for operation in (
            "GET /api/product/videos",
            "GET /api/product/videos/{video_id}/audit",
            "GET /api/product/search",
        )
    ),
    *(
        AllowedRefusal(
            operation,
            _ACCEPTANCE,
            code,
            "",
            "whether a host resolves, and to which address, is the network's answer at the "
            "time of the call (and the operator's VES_ALLOW_PRIVATE_SOURCES), not the request's",
            "the network",
        )
        for operation in ("POST /api/videos/add", "POST /api/product/webhooks")
        for code in ("source_unreachable", "source_rejected")
    ),
    # No JSON Schema keyword compares two values, nor can OpenAPI 3.1 tie query parameters to
    # each other: these rules are in the descriptions, and the server's 422 says which.
    *(
        AllowedRefusal(
            operation,
            _ACCEPTANCE,
            "validation_error",
            "before start_s",
            "end_s before start_s: a rule between two values, which no schema keyword states",
            "two values",
        )
        for operation in (
            "GET /api/product/videos/{video_id}/tracks",
            "POST /api/product/videos/{video_id}/exports",
            "GET /api/product/search",
        )
    ),
    AllowedRefusal(
        "POST /api/product/videos/{video_id}/execute",
        _ACCEPTANCE,
        "validation_error",
        "zone names must be unique",
        "zone names unique: uniqueItems compares whole items, not one member of each",
        "two values",
    ),
    AllowedRefusal(
        "GET /api/product/search",
        _ACCEPTANCE,
        "validation_error",
        "recorded_before is before recorded_after",
        "recorded_before before recorded_after: a rule between two values",
        "two values",
    ),
    AllowedRefusal(
        "GET /api/product/search",
        _ACCEPTANCE,
        "validation_error",
        "min_dwell_s applies to dwell events",
        "min_dwell_s beside event types without dwell: a rule between two parameters, which "
        "OpenAPI 3.1 cannot tie to each other",
        "two values",
    ),
    AllowedRefusal(
        "GET /api/product/search",
        _ACCEPTANCE,
        "not_understood",
        "",
        "free text is read as Ask reads a question, with the workspace's vocabulary (the "
        "classes and zones of its earlier runs); a schema cannot say which sentences are read",
        "free text",
    ),
)


def allowed_refusal(operation: str, check: str, problem: dict[str, Any]) -> AllowedRefusal | None:
    """The entry of ``ALLOWED_REFUSALS`` that lets this refusal through, if one does."""
    code = str(problem.get("code", ""))
    messages = [str(error.get("msg", "")) for error in problem.get("errors") or []]
    detail = " ".join([str(problem.get("detail", "")), *messages])
    for entry in ALLOWED_REFUSALS:
        same = (entry.operation, entry.check, entry.code) == (operation, check, code)
        if same and entry.detail in detail:
            return entry
    return None
