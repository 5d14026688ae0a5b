"""API requests in traces (OpenTelemetry; a no-op unless tracing is configured, ``ves.telemetry``).

FastAPI opens a server span per request itself once OpenTelemetry is installed (method, route
template, status). This adds what only the service knows, the tenant id and the client's request
id, to that span, or opens an equal span where no server span is recording.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from opentelemetry import trace
from opentelemetry.trace import Span
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.audit import TENANT_STATE
from api.metrics.http import route_of
from ves.telemetry import span


class TracingMiddleware:
    """Names each HTTP request's span by its route and adds the tenant and request ids."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = str(scope.get("method", "GET"))
        server = trace.get_current_span()
        opened: AbstractContextManager[Span] = (
            nullcontext(server)
            if server.is_recording()
            else span(method, **{"http.request.method": method})
        )
        with opened as current:
            status = 500

            async def traced_send(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                    _annotate(current, scope, method, status)  # before a server span ends
                await send(message)

            try:
                await self.app(scope, receive, traced_send)
            finally:
                if status == 500:  # no answer started: an unhandled error
                    _annotate(current, scope, method, status)


def _annotate(current: Span, scope: Scope, method: str, status: int) -> None:
    route = route_of(scope)
    current.update_name(f"{method} {route}")
    current.set_attribute("http.route", route)
    current.set_attribute("http.response.status_code", status)
    tenant = getattr(scope.get("state", {}).get(TENANT_STATE), "tenant_id", None)
    if tenant is not None:
        current.set_attribute("ves.tenant_id", tenant)
    for name, value in scope.get("headers", []):
        if name == b"x-request-id":
            current.set_attribute("ves.client_request_id", value.decode("latin-1"))
