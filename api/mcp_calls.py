"""How an MCP tool call is made: who calls (``Caller``, their tenant and the app's services), its
arguments checked as the REST API checks a body, the document or problem it answers, and its audit
record. Shared by the tool modules (``api.mcp_tools``, ``api.mcp_search``)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import State

from api.audit import TENANT_STATE, entry_for, ids_of
from api.auth import client_address
from api.problems import problem_body
from storage.artifacts.served import RunViews
from storage.catalog.records import Tenant
from storage.catalog.runs.store import RunStore
from storage.catalog.videos import VideoStore
from ves.errors import Unauthorized, ValidationFailed, VesError

Model = TypeVar("Model", bound=BaseModel)
Document = BaseModel | dict[str, Any]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# recorded before answering (the others are queued: api.audit)
WRITE_TOOLS = frozenset(
    {
        "add_video",
        "execute_video",
        "ask_video",
        "ask_workspace",
        "add_review_note",
        "export_evidence",
    }
)


@dataclass(frozen=True)
class Caller:
    """Who called a tool (their tenant) and the app's services."""

    tenant: Tenant
    state: State
    request_id: str | None
    client: str

    @classmethod
    def of(cls, ctx: Context[Any, Any]) -> Caller:
        """The caller of the request ``ctx`` belongs to; ``Unauthorized`` without a tenant."""
        request: Any = ctx.request_context.request  # the Starlette request of this message
        tenant = getattr(request, "scope", {}).get("state", {}).get(TENANT_STATE)
        if request is None or not isinstance(tenant, Tenant):  # only without McpEndpoint
            raise Unauthorized("send an API key as 'Authorization: Bearer <key>'")
        request_id = getattr(request.state, "request_id", None)
        return cls(tenant, request.app.state, request_id, client_address(request))

    @property
    def videos(self) -> VideoStore:
        return VideoStore(self.state.catalog)

    @property
    def runs(self) -> RunStore:
        return RunStore(self.state.catalog)

    @property
    def views(self) -> RunViews:
        return RunViews(self.videos, self.runs, self.state.reader)

    @property
    def tenant_id(self) -> str:
        return self.tenant.tenant_id


def parse_arguments(model: type[Model], **values: Any) -> Model:
    """``model`` built from a tool's arguments; ``ValidationFailed`` as the REST API says it."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        raise ValidationFailed("the arguments do not match the schema", errors=errors) from exc


def success(document: Document) -> CallToolResult:
    if isinstance(document, BaseModel):
        document = document.model_dump(mode="json", by_alias=True)
    text = json.dumps(document, separators=(",", ":"))
    return CallToolResult(content=[TextContent(text=text)], structured_content=document)


def failure(error: VesError, request_id: str | None) -> CallToolResult:
    """A tool error carrying the problem document the REST API would send."""
    text = f"{error.code} ({error.status}): {error.detail}"
    problem = problem_body(error, request_id)
    content: list[Any] = [TextContent(text=text)]
    return CallToolResult(content=content, structured_content=problem, is_error=True)


def respond(
    ctx: Context[Any, Any], tool: str, work: Callable[[Caller], Document], video_id: str = ""
) -> CallToolResult:
    caller = None
    try:
        caller = Caller.of(ctx)
        result = success(work(caller))
    except VesError as error:
        result = failure(error, caller.request_id if caller else None)
    if caller is not None:
        record_call(caller, tool, result, video_id)
    return result


async def respond_async(
    ctx: Context[Any, Any], tool: str, work: Callable[[Caller], Awaitable[Document]], video_id: str
) -> CallToolResult:
    caller = None
    try:
        caller = Caller.of(ctx)
        result = success(await work(caller))
    except VesError as error:
        result = failure(error, caller.request_id if caller else None)
    if caller is not None:
        await run_in_threadpool(record_call, caller, tool, result, video_id)
    return result


def record_call(caller: Caller, tool: str, result: CallToolResult, video_id: str) -> None:
    """The tool call's audit record (``api.audit``): the status a REST call would have had."""
    document = result.structured_content or {}
    outcome = int(document.get("status", 400)) if result.is_error else 200
    ids = {"video_id": video_id or None} if result.is_error else ids_of(document)
    ids.setdefault("video_id", video_id or None)
    entry = entry_for(caller.tenant, f"mcp:{tool}", outcome, ids, caller.client)
    if tool in WRITE_TOOLS:
        caller.state.audit.record(entry)
    else:
        caller.state.audit.enqueue(entry)
