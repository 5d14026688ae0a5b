"""The MCP tools: each one a REST operation, for the tenant whose key came with the request.

Tools take their services from the FastAPI app (``request.app.state``), exactly as the routes'
dependencies do, and call the same operations (``api.operations``,
``storage.artifacts.served``) as the routes,
so both surfaces check the same plan limits and sources and answer the same documents. Catalog and
DuckDB work runs in the SDK's worker threads (the tools are plain functions), like the REST routes
in FastAPI's threadpool."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import State

from api.audit import TENANT_STATE, entry_for, ids_of
from api.auth import client_address
from api.operations.ask import ask_about
from api.operations.estimates import estimate_run
from api.operations.exports import queue_export
from api.operations.notes import add_note
from api.operations.runs import queue_run
from api.operations.videos import list_page, register_video
from api.problems import problem_body
from api.schemas.artifacts import EvidenceView, SceneGraph, Timeline
from api.schemas.ask import AskRequest
from api.schemas.exports import ExportCreate
from api.schemas.notes import NoteCreate
from api.schemas.runs import ExecuteAccepted
from api.schemas.videos import VideoCreate
from storage.artifacts.served import RunViews
from storage.catalog.records import Tenant
from storage.catalog.runs.store import RunStore
from storage.catalog.videos import VideoStore
from tasks.options import RunOptions
from ves.errors import Unauthorized, ValidationFailed, VesError

_Model = TypeVar("_Model", bound=BaseModel)
Document = BaseModel | dict[str, Any]

VideoId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="The video's id (`vid_...`), as list_videos or add_video return it.",
    ),
]
_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# recorded before answering (the others are queued: api.audit)
_WRITE_TOOLS = frozenset(
    {"add_video", "execute_video", "ask_video", "add_review_note", "export_evidence"}
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


def _parse(model: type[_Model], **values: Any) -> _Model:
    """``model`` built from a tool's arguments; ``ValidationFailed`` as the REST API says it."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        raise ValidationFailed("the arguments do not match the schema", errors=errors) from exc


def _success(document: Document) -> CallToolResult:
    if isinstance(document, BaseModel):
        document = document.model_dump(mode="json", by_alias=True)
    text = json.dumps(document, separators=(",", ":"))
    return CallToolResult(content=[TextContent(text=text)], structured_content=document)


def _failure(error: VesError, request_id: str | None) -> CallToolResult:
    """A tool error carrying the problem document the REST API would send."""
    text = f"{error.code} ({error.status}): {error.detail}"
    problem = problem_body(error, request_id)
    content: list[Any] = [TextContent(text=text)]
    return CallToolResult(content=content, structured_content=problem, is_error=True)


def _respond(
    ctx: Context[Any, Any], tool: str, work: Callable[[Caller], Document], video_id: str = ""
) -> CallToolResult:
    caller = None
    try:
        caller = Caller.of(ctx)
        result = _success(work(caller))
    except VesError as error:
        result = _failure(error, caller.request_id if caller else None)
    if caller is not None:
        _record(caller, tool, result, video_id)
    return result


async def _respond_async(
    ctx: Context[Any, Any], tool: str, work: Callable[[Caller], Awaitable[Document]], video_id: str
) -> CallToolResult:
    caller = None
    try:
        caller = Caller.of(ctx)
        result = _success(await work(caller))
    except VesError as error:
        result = _failure(error, caller.request_id if caller else None)
    if caller is not None:
        await run_in_threadpool(_record, caller, tool, result, video_id)
    return result


def _record(caller: Caller, tool: str, result: CallToolResult, video_id: str) -> None:
    """The tool call's audit record (``api.audit``): the status a REST call would have had."""
    document = result.structured_content or {}
    outcome = int(document.get("status", 400)) if result.is_error else 200
    ids = {"video_id": video_id or None} if result.is_error else ids_of(document)
    ids.setdefault("video_id", video_id or None)
    entry = entry_for(caller.tenant, f"mcp:{tool}", outcome, ids, caller.client)
    if tool in _WRITE_TOOLS:
        caller.state.audit.record(entry)
    else:
        caller.state.audit.enqueue(entry)


def list_videos(
    ctx: Context[Any, Any],
    state: Annotated[
        str | None,
        Field(description="Only videos in this state (e.g. `registered`, `running`, `succeeded`)."),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="Videos per page.")] = 50,
    cursor: Annotated[str | None, Field(description="`next_cursor` of the previous page.")] = None,
) -> CallToolResult:
    """List your videos, newest first, each with its state and latest run (stage, progress,
    error). Filter by `state`; page with `cursor`."""

    def work(caller: Caller) -> Document:
        return list_page(caller.tenant, caller.videos, state, limit, cursor)

    return _respond(ctx, "list_videos", work)


def add_video(
    ctx: Context[Any, Any],
    url: Annotated[
        str,
        Field(description="An http(s) URL of a video file, or of an HLS playlist (`.m3u8`)."),
    ],
    title: Annotated[str, Field(description="A title for the video (1-200 characters).")],
) -> CallToolResult:
    """Register a video from a URL (checked before anything is stored: it must be public and
    answer) within your plan's video limit. Process it afterwards with execute_video."""

    def work(caller: Caller) -> Document:
        body = _parse(VideoCreate, url=url, title=title)
        settings = caller.state.settings
        return register_video(body, caller.tenant, caller.videos, settings)

    return _respond(ctx, "add_video", work)


async def execute_video(
    ctx: Context[Any, Any],
    video_id: VideoId,
    detector: Annotated[
        str | None,
        Field(
            description="`motion` plus any of `+person` (which moving things are people), "
            "`+face` (faces) and `+ocr` (text), e.g. `motion+person+ocr` (the default); or "
            "`yolo` with `+face` / `+ocr`; a YOLO model that cannot run falls back to motion "
            "(the cost report says so)."
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        Field(
            description="Only estimate the run (compute and wall seconds, frames, price, what "
            "the plan has left); nothing is queued or counted."
        ),
    ] = False,
) -> CallToolResult:
    """Queue a processing run of a video (decode, sample, detect, track, world state, timeline,
    evidence, cost) and return at once. Follow it with list_videos (`latest_run.stage`,
    `progress`); once the video is `succeeded`, read its artifacts or ask about it. A video that
    is already queued or running is a `conflict`. With `dry_run`, the run's estimate instead."""

    async def work(caller: Caller) -> Document:
        chosen = {"detector": detector} if detector is not None else {}
        options = _parse(RunOptions, **chosen) if chosen else None
        state = caller.state
        if dry_run:
            return await run_in_threadpool(
                estimate_run,
                state.catalog,
                state.store,
                state.settings,
                caller.tenant,
                video_id,
                options or RunOptions(),
            )
        run = await queue_run(
            caller.tenant, video_id, options, caller.runs, state.submitter, state.settings
        )
        return ExecuteAccepted(video_id=video_id, run_id=run.run_id, state=run.state)

    return await _respond_async(ctx, "execute_video", work, video_id)


def get_scene_graph(ctx: Context[Any, Any], video_id: VideoId) -> CallToolResult:
    """The world state of the video's newest succeeded run: objects (with class, first and last
    seen, attributes; text read in the video is class `text`), zones, events and relations, each
    with the ids of the evidence spans that back it."""

    def work(caller: Caller) -> Document:
        return SceneGraph.model_validate(caller.views.scene_graph(caller.tenant_id, video_id))

    return _respond(ctx, "get_scene_graph", work, video_id)


def get_timeline(ctx: Context[Any, Any], video_id: VideoId) -> CallToolResult:
    """The events of the video's newest succeeded run in time order, and the refresh markers
    (where the world state was rebuilt: the start, scene changes)."""

    def work(caller: Caller) -> Document:
        return Timeline.model_validate(caller.views.timeline(caller.tenant_id, video_id))

    return _respond(ctx, "get_timeline", work, video_id)


def get_evidence(ctx: Context[Any, Any], video_id: VideoId) -> CallToolResult:
    """The evidence spans of the video's newest succeeded run: time span, frames (thumbnail,
    box, sha256), review notes and each span's own sha256. Answers of ask_video cite these."""

    def work(caller: Caller) -> Document:
        return EvidenceView.model_validate(caller.views.evidence(caller.tenant_id, video_id))

    return _respond(ctx, "get_evidence", work, video_id)


def get_cost(ctx: Context[Any, Any], video_id: VideoId) -> CallToolResult:
    """The cost report (`cost.json`) of the video's newest succeeded run: detector mode and any
    fallback, per-detector work, duration and processed seconds, compute per stage, frames,
    retention and cost."""

    def work(caller: Caller) -> Document:
        return caller.views.cost(caller.tenant_id, video_id)

    return _respond(ctx, "get_cost", work, video_id)


def ask_video(
    ctx: Context[Any, Any],
    video_id: VideoId,
    question: Annotated[
        str,
        Field(
            description="A question about the video, e.g. 'How many objects appeared?', 'When "
            "did the first object appear?', 'What text is visible?', 'What happened between "
            "0:04 and 0:10?'."
        ),
    ],
) -> CallToolResult:
    """Ask a question about a video, answered from its newest succeeded run only. A grounded
    answer (`grounded: true`) cites the evidence spans (get_evidence) behind every claim; what
    the evidence cannot back is refused (`grounded: false`) with a `refusal_reason`
    (`no_evidence`, `outside_detectors`, `off_topic`, `not_understood`: a word the engine could
    not account for is named, never dropped). `interpreted` says what was answered: the intent,
    its subject, its qualifiers (colour, order, direction, zone, action, text) and its window.
    Counts toward the plan's asks per day."""

    def work(caller: Caller) -> Document:
        asked = _parse(AskRequest, question=question).question
        state = caller.state
        phraser = getattr(state, "phraser", None)
        return ask_about(
            caller.tenant, video_id, asked, state.catalog, state.settings, state.worlds, phraser
        )

    return _respond(ctx, "ask_video", work, video_id)


def add_review_note(
    ctx: Context[Any, Any],
    video_id: VideoId,
    evidence_id: Annotated[
        str,
        Field(
            min_length=1,
            max_length=64,
            description="A span's id (`ev_...`) as get_evidence shows it now.",
        ),
    ],
    text: Annotated[str, Field(description="What you saw (1-2000 characters).")],
    verdict: Annotated[str, Field(description="`confirmed`, `rejected` or `needs_review`.")],
) -> CallToolResult:
    """Add a review note and verdict (`confirmed`, `rejected`, `needs_review`) to an evidence
    span of the video's newest succeeded run, signed with your key (`author` `key:<key_id>`).
    Notes can never be edited or deleted: a new note on the span supersedes the previous one,
    and the newest note's verdict is the span's `verdict` in get_evidence. Returns the note."""

    def work(caller: Caller) -> Document:
        body = _parse(NoteCreate, text=text, verdict=verdict)
        return add_note(caller.tenant, video_id, evidence_id, body, caller.views)

    return _respond(ctx, "add_review_note", work, video_id)


async def export_evidence(
    ctx: Context[Any, Any],
    video_id: VideoId,
    evidence_ids: Annotated[
        list[str] | None,
        Field(description="The spans to export (ids from get_evidence); none: every span."),
    ] = None,
    redact: Annotated[
        list[str] | None,
        Field(description="`faces` and/or `text`: pixelated in the bundle's thumbnails and clips."),
    ] = None,
) -> CallToolResult:
    """Queue a signed evidence bundle of the video's newest succeeded run (the chosen spans with
    their thumbnails and clips cut from the source, the scene graph and timeline they belong
    to, cost, provenance, review notes and the audit trail, signed with the service's Ed25519
    key) and return the export at once (`queued`). Its state and, once it succeeded, the
    bundle's sha256 and download URL are at `GET /api/product/videos/{video_id}/exports/
    {export_id}`; anyone verifies the bundle offline with `ves verify`."""

    async def work(caller: Caller) -> Document:
        body = _parse(ExportCreate, evidence_ids=evidence_ids, redact=redact)
        state = caller.state
        limits = state.settings.plan(caller.tenant.plan)
        return await queue_export(
            caller.tenant, video_id, body, caller.views, state.submitter, limits
        )

    return await _respond_async(ctx, "export_evidence", work, video_id)


def register_tools(server: MCPServer) -> None:
    """Add every tool to ``server``; a tool's docstring is its description."""
    reads: tuple[Callable[..., Any], ...] = (
        list_videos,
        get_scene_graph,
        get_timeline,
        get_evidence,
        get_cost,
    )
    for tool in reads:
        server.add_tool(tool, description=_description(tool), annotations=_READ)
    writes: tuple[Callable[..., Any], ...] = (
        add_video,
        execute_video,
        ask_video,
        add_review_note,
        export_evidence,
    )
    for tool in writes:
        server.add_tool(tool, description=_description(tool))


def _description(tool: Callable[..., Any]) -> str:
    return " ".join((tool.__doc__ or "").split())
