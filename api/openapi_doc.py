"""The served OpenAPI, made exact: every status a route can answer, with its model and headers.

FastAPI documents what a route declares; the answers that come from elsewhere (the request guard
middleware's 413 and 415, the problem handlers' 400 and 422, the key check's 401) and the headers
every answer carries would otherwise be missing, and a problem's model would sit under
``application/json`` while the body is sent as ``application/problem+json``. A client generated
from the description, or a fuzzer checking answers against it (``stress/fuzz/run.py``), would then
be told less than the service does. This module completes the description once, from the route
table, so a new route is documented the same way without repeating it.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from api.problems import PROBLEM_MEDIA_TYPE, Problem, problem_body
from ves.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    NotReady,
    NotUnderstood,
    PayloadTooLarge,
    PlanLimitExceeded,
    RateLimited,
    RequestTimeout,
    SourceRejected,
    SourceUnreachable,
    Unauthorized,
    Unavailable,
    UnsupportedMediaType,
    ValidationFailed,
    VesError,
)
from ves.settings import Settings

_PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
_BODY_METHODS = {"post", "put", "patch"}

# Why each status is answered, for the statuses the guard and handlers add to a route.
PROBLEM_DESCRIPTIONS: dict[int, str] = {
    400: "`invalid_request`: the body is not valid JSON, or a parameter cannot be read.",
    401: "`unauthorized`: no key, or an unknown or revoked one (`WWW-Authenticate: Bearer`).",
    402: "`plan_limit_exceeded`: the plan's `limit` is reached (`value`, `used`).",
    404: "`not_found`: no such resource in this workspace (another tenant's too).",
    408: "`request_timeout`: the body did not arrive in time (`VES_BODY_TIMEOUT_S`, "
    "`VES_BODY_MIN_RATE`); the connection is closed.",
    409: "`conflict` or `not_ready`: the resource is not in a state that allows this.",
    413: "`payload_too_large`: the body exceeds the limit (`VES_MAX_BODY_BYTES`).",
    415: "`unsupported_media_type`: the body is not sent with the media type the route takes.",
    422: "`validation_failed`: the request does not match the schema; `errors` says where.",
    429: "`rate_limited`: too many requests (or too many failed keys from this address); retry"
    " after `Retry-After` seconds.",
    503: "`unavailable`: a part the service needs is down; retry later.",
}

_EXAMPLE_REQUEST_ID = "req_01jd3k8m2q7x4r5t6y7u8i9o0p"
_VIDEO = "vid_01jd3k8m2qa7x4r5t6y7v8w9z0"
# One example problem per way a status is answered, rendered by the handler's own
# ``problem_body``, so that every refusal a client can meet (the state ones too: an unknown id,
# a run already going, a video not ready, a plan's limit, a rate) is shown with its `type`.
PROBLEM_EXAMPLES: dict[int, dict[str, VesError]] = {
    400: {
        "invalid_request": InvalidRequest("the cursor is not valid; use next_cursor from a listing")
    },
    401: {"unauthorized": Unauthorized("missing or unknown API key")},
    402: {
        "plan_limit_exceeded": PlanLimitExceeded(
            "the plan's executions_per_month (50) is reached",
            limit="executions_per_month",
            value=50,
            used=50,
        )
    },
    403: {"forbidden": Forbidden("the signed URL has expired")},
    404: {"not_found": NotFound(f"no video {_VIDEO}")},
    408: {"request_timeout": RequestTimeout("the body did not arrive in time")},
    409: {
        "conflict": Conflict(f"video {_VIDEO} already has a run queued or running"),
        "not_ready": NotReady(f"video {_VIDEO} has no succeeded run yet (state: running)"),
    },
    413: {"payload_too_large": PayloadTooLarge("the body exceeds 1048576 bytes")},
    415: {"unsupported_media_type": UnsupportedMediaType("send the body as application/json")},
    422: {
        "validation_error": ValidationFailed(
            "the request does not match the schema",
            errors=[{"loc": ["body", "title"], "msg": "Field required", "type": "missing"}],
        ),
        "not_understood": NotUnderstood(
            "could not read 'blorp' in the question", {"classes": ["person"]}
        ),
        "source_unreachable": SourceUnreachable("the host 'media.example.com' does not resolve"),
        "source_rejected": SourceRejected(
            "the host 'internal' resolves to 10.0.0.5, a private address, which is refused"
        ),
    },
    429: {"rate_limited": RateLimited("too many requests; retry in 60 s", retry_after_s=60)},
    503: {"unavailable": Unavailable("the orchestrator cannot be reached; retry later")},
}


def problem_examples(status: int) -> dict[str, dict[str, Any]]:
    """OpenAPI ``examples`` of the problems answered with ``status``, by ``code``."""
    return {
        code: {"summary": f"`{code}`", "value": problem_body(error, _EXAMPLE_REQUEST_ID)}
        for code, error in PROBLEM_EXAMPLES.get(status, {}).items()
    }


_REQUEST_ID_HEADER = {
    "description": "The request's id (the client's own when it sent a sane one); problem "
    "bodies repeat it as `request_id`.",
    "required": True,
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,64}$"},
}
_STATUS_HEADERS: dict[str, dict[str, Any]] = {
    "401": {
        "WWW-Authenticate": {
            "description": "The scheme to authenticate with.",
            "required": True,
            "schema": {"type": "string", "enum": ["Bearer"]},
        }
    },
    "429": {
        "Retry-After": {
            "description": "Seconds to wait before retrying.",
            "required": True,
            "schema": {"type": "string", "pattern": "^[0-9]+$"},
        }
    },
}


def problem_entry(status: int, examples: dict[str, Any] | None = None) -> dict[str, Any]:
    """The OpenAPI response of a problem answer with ``status``, with ``examples`` (by
    default those of ``PROBLEM_EXAMPLES``)."""
    media: dict[str, Any] = {"schema": dict(_PROBLEM_REF)}
    shown = examples or problem_examples(status)
    if shown:
        media["examples"] = shown
    return {
        "description": PROBLEM_DESCRIPTIONS.get(status, "Problem"),
        "content": {PROBLEM_MEDIA_TYPE: media},
    }


def _examples_of(response: dict[str, Any]) -> dict[str, Any] | None:
    """The examples a route gave its problem answer itself, if any."""
    for media in response.get("content", {}).values():
        if media.get("examples"):
            return dict(media["examples"])
        if "example" in media:
            return {"example": {"value": media["example"]}}
    return None


def _statuses_of(operation: dict[str, Any], method: str) -> set[int]:
    """The problem statuses the guard, the handlers and the key check can answer here."""
    statuses: set[int] = set()
    if operation.get("security"):
        statuses.update({401, 429})  # 429: too many failed keys from the address (api/auth.py)
    if method in _BODY_METHODS and "requestBody" in operation:
        statuses.update({400, 408, 413, 415, 422})
    if operation.get("parameters"):
        statuses.add(422)
    return statuses


def _is_problem(response: dict[str, Any]) -> bool:
    content = response.get("content", {})
    schemas = [media.get("schema", {}) for media in content.values()]
    refs = {schema.get("$ref", "") for schema in schemas}
    return PROBLEM_MEDIA_TYPE in content or any(
        ref.endswith(("/Problem", "/HTTPValidationError")) for ref in refs
    )


def _complete_operation(operation: dict[str, Any], method: str) -> None:
    """Problems under their media type with their model, missing statuses added, headers
    documented on every answer."""
    responses: dict[str, Any] = operation.setdefault("responses", {})
    for status, response in list(responses.items()):
        if status.isdigit() and int(status) >= 400 and _is_problem(response):
            described = response.get("description")
            responses[status] = problem_entry(int(status), _examples_of(response))
            if described and described not in {"Problem", "Validation Error"}:
                responses[status]["description"] = described
    for added in sorted(_statuses_of(operation, method)):
        responses.setdefault(str(added), problem_entry(added))
    operation["responses"] = responses = dict(sorted(responses.items()))
    for status, response in responses.items():
        headers = response.setdefault("headers", {})
        headers.setdefault("X-Request-ID", _REQUEST_ID_HEADER)
        for name, header in _STATUS_HEADERS.get(status, {}).items():
            headers.setdefault(name, header)


def _deployment_rules(schemas: dict[str, Any], settings: Settings | None) -> None:
    """The rules that hold in this deployment (``settings``): an upload's declared size is at
    most ``VES_MAX_UPLOAD_BYTES``, and with no ``VES_YOLO_MODEL`` set by the operator a ``yolo``
    detector needs the request's ``yolo_model`` (the service refuses either otherwise)."""
    if settings is None:
        return
    upload = schemas.get("UploadSpec")
    if upload is not None:
        upload["properties"]["size_bytes"]["maximum"] = settings.max_upload_bytes
    options = schemas.get("RunOptions")
    if settings.yolo_model is not None or options is None:
        return
    yolo = options["then"]["properties"]["detector"]["enum"]
    options["allOf"] = [
        {
            "if": {"required": ["detector"], "properties": {"detector": {"enum": yolo}}},
            "then": {
                "required": ["yolo_model"],
                "properties": {"yolo_model": {"type": "string"}},
            },
        }
    ]


def exact_openapi(app: FastAPI, settings: Settings | None = None) -> dict[str, Any]:
    """FastAPI's description of ``app``, completed as this module's docstring says, with the
    rules of the deployment that ``settings`` make (``_deployment_rules``)."""
    spec = get_openapi(
        title=app.title,
        version=app.version,
        description=app.description,
        routes=app.routes,
    )
    for operations in spec.get("paths", {}).values():
        for method, operation in operations.items():
            _complete_operation(operation, method)
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    schemas["Problem"] = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    _deployment_rules(schemas, settings)
    return spec


def install_exact_openapi(app: FastAPI, settings: Settings | None = None) -> None:
    """Serve ``exact_openapi(app)`` at ``/openapi.json`` (computed once, on first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = exact_openapi(app, settings)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
