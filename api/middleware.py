"""One ASGI middleware guarding every request before routing.

It gives each request an id (``X-Request-ID``, echoed when the client sent a sane one), refuses
bodies over the size limit (413) before they are read and bodies that arrive too slowly (408),
refuses non-JSON bodies on JSON routes (415), and turns any unhandled exception into a 500
problem without a stack trace.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.problems import problem_response
from ves.errors import PayloadTooLarge, UnsupportedMediaType, VesError
from ves.ids import new_id
from ves.settings import Settings

log = logging.getLogger("ves.api")

_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_UPLOAD_PATH = re.compile(r"^/api/videos/[^/]+/content$")
_BODY_METHODS = {"POST", "PUT", "PATCH"}


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _is_upload(scope: Scope) -> bool:
    return scope["method"] == "PUT" and bool(_UPLOAD_PATH.match(scope["path"]))


def _has_body(scope: Scope) -> bool:
    length = _header(scope, b"content-length")
    return _header(scope, b"transfer-encoding") is not None or (length not in {None, "0"})


def _is_json(content_type: str | None) -> bool:
    media = (content_type or "").split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


class RequestGuardMiddleware:
    """Request ids, body limits, JSON content types and last-resort 500s, for every route."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = self._request_id(scope)
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = message.setdefault("headers", [])
                if not any(key.lower() == b"x-request-id" for key, _ in headers):
                    headers.append((b"x-request-id", request_id.encode()))
            await send(message)

        try:
            refusal = self._refusal(scope)
            if refusal is not None:
                await problem_response(refusal, request_id)(scope, receive, send)
                return
            deadlines = self.settings if _has_body(scope) else None  # no body: none to wait for
            limited = self._limited_receive(receive, self._limit(scope), deadlines)
            await self.app(scope, limited, send_with_id)
        except Exception:
            if started:
                raise
            log.exception("unhandled error (request %s)", request_id)
            error = VesError("an internal error occurred; quote the request id when reporting it")
            await problem_response(error, request_id)(scope, receive, send)

    def _request_id(self, scope: Scope) -> str:
        incoming = _header(scope, b"x-request-id")
        request_id = incoming if incoming and _SANE_REQUEST_ID.match(incoming) else new_id("req")
        scope.setdefault("state", {})["request_id"] = request_id
        return request_id

    def _limit(self, scope: Scope) -> int:
        if _is_upload(scope):
            return self.settings.max_upload_bytes
        return self.settings.max_body_bytes

    def _refusal(self, scope: Scope) -> VesError | None:
        if scope["method"] not in _BODY_METHODS or not _has_body(scope):
            return None
        limit = self._limit(scope)
        length = _header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            return PayloadTooLarge(f"the request body exceeds the limit of {limit} bytes")
        if not _is_upload(scope) and not _is_json(_header(scope, b"content-type")):
            return UnsupportedMediaType("send the request body as application/json")
        return None

    @staticmethod
    def _limited_receive(
        receive: Receive, limit: int, settings: Settings | None
    ) -> Callable[[], Any]:
        """``receive`` that stops a body without Content-Length once it passes ``limit``, and a
        body that is too slow: it must arrive within ``VES_BODY_TIMEOUT_S`` plus a second for
        every ``VES_BODY_MIN_RATE`` bytes (else 408 and the connection is closed). Once the body
        is complete (or when ``settings`` is None), ``receive`` waits without a deadline (e.g.
        for the client's disconnect)."""
        seen = 0
        body_done = False
        started = time.monotonic()

        async def limited() -> Message:
            nonlocal seen, body_done
            if body_done or settings is None:
                message = await receive()
            else:
                deadline = started + settings.body_timeout_s + seen / settings.body_min_rate
                try:
                    async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                        message = await receive()
                except TimeoutError:
                    raise HTTPException(
                        408,
                        f"the request body did not arrive in time ({seen} bytes in "
                        f"{time.monotonic() - started:.0f} s)",
                        headers={"Connection": "close"},
                    ) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
                if seen > limit:
                    raise HTTPException(413, f"the request body exceeds the limit of {limit} bytes")
            else:
                body_done = True
            return message

        return limited
