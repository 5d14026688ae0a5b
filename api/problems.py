"""RFC 9457 problem+json: the one place where errors become HTTP responses.

Every response carries an ``X-Request-ID``; problem bodies repeat it as ``request_id`` so a user can
quote it and an operator can find the log line. Stack traces never reach the client.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path

from ves.errors import (
    Conflict,
    InvalidRequest,
    MethodNotAllowed,
    NotFound,
    NotUnderstood,
    PayloadTooLarge,
    PlanLimitExceeded,
    RangeNotSatisfiable,
    RateLimited,
    RequestTimeout,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
    VesError,
)

log = logging.getLogger("ves.api")

PROBLEM_TYPE_BASE = "https://docs.ves.example/problems/"
PROBLEM_MEDIA_TYPE = "application/problem+json"

# Errors Starlette raises itself (unknown route, wrong method ...) mapped onto our hierarchy.
_STATUS_ERRORS: dict[int, type[VesError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    404: NotFound,
    405: MethodNotAllowed,
    408: RequestTimeout,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: ValidationFailed,
}


class Problem(BaseModel):
    """An RFC 9457 problem document."""

    type: str = Field(examples=[PROBLEM_TYPE_BASE + "not_found"])
    title: str = Field(examples=["Not found"])
    status: int = Field(examples=[404])
    detail: str = Field(examples=["no video vid_01jd3k8m2q7x4r5t6y7u8i9o0p"])
    code: str = Field(examples=["not_found"])
    request_id: str | None = Field(None, examples=["req_01jd3k8m2q7x4r5t6y7u8i9o0p"])
    errors: list[dict[str, Any]] | None = None
    limit: str | None = Field(None, description="For 402: the plan limit that was reached.")
    value: float | None = Field(None, description="For 402: that limit's value in the plan.")
    used: float | None = Field(None, description="For 402: how much of it is used.")
    interpreted: dict[str, Any] | None = Field(
        None,
        description="For 422 `not_understood`: what the search did understand of the free text.",
    )


# A listing's cursor: unpadded base64url, as every listing writes it (api/operations/videos.py,
# search/engine.py). Which values are valid is known only to the call that gave one, so the
# pattern says the alphabet and a length bound; the server's own check stays (400).
CURSOR_DESCRIPTION = (
    "`next_cursor` of the previous page (opaque, unpadded base64url); any other value is a 400 "
    "`invalid_request`."
)
CURSOR_SCHEMA: dict[str, Any] = {"pattern": "^[A-Za-z0-9_-]{0,1024}$"}
CursorQuery = Annotated[
    str | None, Query(description=CURSOR_DESCRIPTION, json_schema_extra=CURSOR_SCHEMA)
]


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries documenting the problem answers a route can give."""
    return {
        status: {"model": Problem, "content": {PROBLEM_MEDIA_TYPE: {}}, "description": "Problem"}
        for status in statuses
    }


def problem_body(error: VesError, request_id: str | None) -> dict[str, Any]:
    """The JSON body for ``error``."""
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + error.code,
        "title": error.title,
        "status": error.status,
        "detail": error.detail,
        "code": error.code,
        "request_id": request_id,
    }
    if error.errors is not None:
        body["errors"] = error.errors
    if isinstance(error, PlanLimitExceeded):
        body.update(limit=error.limit, value=error.value, used=error.used)
    if isinstance(error, NotUnderstood):
        body["interpreted"] = error.interpreted
    return body


def problem_response(error: VesError, request_id: str | None) -> JSONResponse:
    """The whole HTTP response for ``error``, with the headers its status calls for."""
    headers = {"X-Request-ID": request_id} if request_id else {}
    if isinstance(error, Unauthorized):
        headers["WWW-Authenticate"] = "Bearer"
    if isinstance(error, RateLimited):
        headers["Retry-After"] = str(error.retry_after_s)
    if isinstance(error, RangeNotSatisfiable):
        headers["Content-Range"] = f"bytes */{error.size}"
    return JSONResponse(
        problem_body(error, request_id),
        status_code=error.status,
        headers=headers,
        media_type=PROBLEM_MEDIA_TYPE,
    )


def allowed_methods(request: Request) -> list[str]:
    """Every method some route answers on the request's path: what a 405 names in ``Allow``
    (Starlette names the first matching route's methods only)."""
    methods: set[str] = set()
    for context in iter_route_contexts(request.app.routes):
        if context.path is None or not context.methods:
            continue
        if compile_path(context.path)[0].match(request.url.path):
            methods |= set(context.methods)
    return sorted(methods)


def request_id_of(request: Request) -> str | None:
    """The id the request-id middleware gave this request."""
    return getattr(request.state, "request_id", None)


def _from_validation(exc: RequestValidationError) -> VesError:
    errors = [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
        for e in exc.errors()
    ]
    if any(e["type"] == "json_invalid" for e in errors):
        return InvalidRequest("the request body is not valid JSON", errors=errors)
    return ValidationFailed("the request does not match the schema", errors=errors)


def _from_http_exception(exc: StarletteHTTPException) -> VesError:
    error_class = _STATUS_ERRORS.get(exc.status_code, VesError)
    detail = exc.detail if isinstance(exc.detail, str) else error_class.title
    return error_class(detail)


def install_problem_handlers(app: FastAPI) -> None:
    """Route every error through ``problem_response``."""

    async def on_ves_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, VesError)
        if type(exc) is VesError:
            log.error("internal error (request %s): %s", request_id_of(request), exc.detail)
            exc = VesError("an internal error occurred; quote the request id when reporting it")
        return problem_response(exc, request_id_of(request))

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return problem_response(_from_validation(exc), request_id_of(request))

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        response = problem_response(_from_http_exception(exc), request_id_of(request))
        response.headers.update(exc.headers or {})
        if exc.status_code == 405:
            response.headers["Allow"] = ", ".join(allowed_methods(request))
        return response

    app.add_exception_handler(VesError, on_ves_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
