"""The MCP preview endpoint: the product's operations as Model Context Protocol tools at ``/mcp``.

It speaks the streamable HTTP transport of the official ``mcp`` SDK. Every request needs the
same ``Authorization: Bearer <key>`` as the REST API: ``McpEndpoint`` checks it before the SDK
sees the request (401 problem+json otherwise; 429 for an address that failed too often, see
``api.auth``), on every request of a session, so a revoked key fails on its next one; it
leaves the tenant in the request's state, where each tool reads it back, so a tool only ever
sees its caller's videos. A session is bound to the
tenant that opened it. The tools reuse the REST routes' logic; a ``VesError`` becomes a tool
error (``is_error``) whose structured content is the same problem document the REST API sends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from fastapi.security import HTTPAuthorizationCredentials
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from api.audit import TENANT_STATE
from api.auth import authenticate, client_address
from api.mcp_tools import register_tools
from api.problems import problem_response, request_id_of
from ves import __version__
from ves.errors import RateLimited, Unauthorized

INSTRUCTIONS = """\
Video Evidence Service: turns video into traceable evidence and answers questions about a video
only when that evidence backs the answer. Register a video with add_video, process it with
execute_video, follow it with list_videos (state, latest_run.progress), then read what the run
found (get_scene_graph, get_timeline, get_evidence, get_cost) or ask_video. Every claim of a
grounded answer cites evidence spans (get_evidence); an answer the evidence cannot back is
refused (grounded: false) with a refusal_reason.
"""


def create_mcp_server() -> MCPServer:
    """The MCP server with the product's tools; the services come from the app per request."""
    with _root_logging_kept():
        server: MCPServer = MCPServer(
            "video-evidence-service",
            title="Video Evidence Service",
            instructions=INSTRUCTIONS,
            version=__version__,
        )
    register_tools(server)
    return server


@contextmanager
def _root_logging_kept() -> Iterator[None]:
    """Undo what ``MCPServer()`` does to the root logger (``logging.basicConfig`` with a Rich
    handler at INFO): the service's logging is configured by its entry point, not by a library."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _credentials(header: str | None) -> HTTPAuthorizationCredentials | None:
    scheme, _, key = (header or "").strip().partition(" ")
    return HTTPAuthorizationCredentials(scheme=scheme, credentials=key.strip()) if key else None


class McpEndpoint:
    """The ASGI app at ``/mcp``: the bearer key first, then the SDK's session manager.

    The session manager's ``run()`` must be entered for the app's lifetime (the API's lifespan
    does it).
    """

    def __init__(self, server: MCPServer) -> None:
        # Builds the session manager. The SDK's DNS-rebinding check (Host/Origin allow-lists) is
        # off: every request must carry an API key, which a rebinding page cannot supply, and
        # the service runs under host names the SDK cannot know (VES_PUBLIC_URL, proxies).
        server.streamable_http_app(
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
        )
        self.sessions: StreamableHTTPSessionManager = server.session_manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        state = request.app.state
        credentials = _credentials(request.headers.get("authorization"))
        address = client_address(request)
        try:
            tenant = await run_in_threadpool(
                authenticate, state.catalog, state.auth_failures, address, credentials
            )
        except (Unauthorized, RateLimited) as error:
            await problem_response(error, request_id_of(request))(scope, receive, send)
            return
        scope.setdefault("state", {})[TENANT_STATE] = tenant
        # The SDK binds a session to the principal that opened it: another tenant's key cannot
        # use a session id it learnt (the SDK answers 404 "Session not found").
        token = AccessToken(token="", client_id=tenant.tenant_id, scopes=[])
        scope["user"] = AuthenticatedUser(token)
        await self.sessions.handle_request(scope, receive, send)


def mcp_endpoint() -> McpEndpoint:
    """A fresh endpoint (with its own server and session manager) for one app."""
    return McpEndpoint(create_mcp_server())
