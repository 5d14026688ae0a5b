"""The MCP tools: each one a REST operation, for the tenant whose key came with the request.

Tools take their services from the FastAPI app (``request.app.state``), exactly as the routes'
dependencies do, and call the same operations (``api.operations``,
``storage.artifacts.served``) as the routes,
so both surfaces check the same plan limits and sources and answer the same documents. Catalog and
DuckDB work runs in the SDK's worker threads (the tools are plain functions), like the REST routes
in FastAPI's threadpool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from api.mcp_calls import READ, Caller, Document, parse_arguments, respond, respond_async
from api.operations.ask import ask_about, ask_workspace_about
from api.operations.estimates import estimate_run
from api.operations.exports import queue_export
from api.operations.notes import add_note
from api.operations.runs import queue_run
from api.operations.search import filters_of, search_workspace
from api.operations.videos import list_page, register_video
from api.schemas.artifacts import EvidenceView, SceneGraph, Timeline
from api.schemas.ask import AskRequest
from api.schemas.exports import ExportCreate
from api.schemas.notes import NoteCreate
from api.schemas.runs import ExecuteAccepted
from api.schemas.videos import VideoCreate
from search.filters import EVENT_TYPES, SearchFilters
from tasks.options import RunOptions

VideoId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="The video's id (`vid_...`), as list_videos or add_video return it.",
    ),
]


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

    return respond(ctx, "list_videos", work)


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
        body = parse_arguments(VideoCreate, url=url, title=title)
        settings = caller.state.settings
        return register_video(body, caller.tenant, caller.videos, settings)

    return respond(ctx, "add_video", work)


async def execute_video(
    ctx: Context[Any, Any],
    video_id: VideoId,
    detector: Annotated[
        str | None,
        Field(
            description="`motion` plus any of `+person` (people, a learned detector), "
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
        options = parse_arguments(RunOptions, **chosen) if chosen else None
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

    return await respond_async(ctx, "execute_video", work, video_id)


def get_scene_graph(ctx: Context[Any, Any], video_id: VideoId) -> CallToolResult:
    """The world state of the video's newest succeeded run: objects (with class, first and last
    seen, attributes; text read in the video is class `text`), zones, events and relations, each
    with the ids of the evidence spans that back it."""

    def work(caller: Caller) -> Document:
        return SceneGraph.model_validate(caller.views.scene_graph(caller.tenant_id, video_id))

    return respond(ctx, "get_scene_graph", work, video_id)


def get_timeline(ctx: Context[Any, Any], video_id: VideoId) -> CallToolResult:
    """The events of the video's newest succeeded run in time order, and the refresh markers
    (where the world state was rebuilt: the start, scene changes)."""

    def work(caller: Caller) -> Document:
        return Timeline.model_validate(caller.views.timeline(caller.tenant_id, video_id))

    return respond(ctx, "get_timeline", work, video_id)


def get_evidence(ctx: Context[Any, Any], video_id: VideoId) -> CallToolResult:
    """The evidence spans of the video's newest succeeded run: time span, frames (thumbnail,
    box, sha256), review notes and each span's own sha256. Answers of ask_video cite these."""

    def work(caller: Caller) -> Document:
        return EvidenceView.model_validate(caller.views.evidence(caller.tenant_id, video_id))

    return respond(ctx, "get_evidence", work, video_id)


def get_cost(ctx: Context[Any, Any], video_id: VideoId) -> CallToolResult:
    """The cost report (`cost.json`) of the video's newest succeeded run: detector mode and any
    fallback, per-detector work, duration and processed seconds, compute per stage, frames,
    retention and cost."""

    def work(caller: Caller) -> Document:
        return caller.views.cost(caller.tenant_id, video_id)

    return respond(ctx, "get_cost", work, video_id)


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
        asked = parse_arguments(AskRequest, question=question).question
        state = caller.state
        phraser = getattr(state, "phraser", None)
        return ask_about(
            caller.tenant, video_id, asked, state.catalog, state.settings, state.worlds, phraser
        )

    return respond(ctx, "ask_video", work, video_id)


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
        body = parse_arguments(NoteCreate, text=text, verdict=verdict)
        return add_note(caller.tenant, video_id, evidence_id, body, caller.views)

    return respond(ctx, "add_review_note", work, video_id)


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
        body = parse_arguments(ExportCreate, evidence_ids=evidence_ids, redact=redact)
        state = caller.state
        limits = state.settings.plan(caller.tenant.plan)
        return await queue_export(
            caller.tenant, video_id, body, caller.views, state.submitter, limits
        )

    return await respond_async(ctx, "export_evidence", work, video_id)


def search_videos(
    ctx: Context[Any, Any],
    q: Annotated[
        str | None,
        Field(
            max_length=300,
            description="Free text, e.g. 'GATE 7 after 20 s', 'people in the left zone', "
            "'stopped over 5 minutes', 'people after 22:00 on 2026-11-20' (clock times UTC).",
        ),
    ] = None,
    classes: Annotated[
        list[str] | None, Field(description="Object classes (person, motion, face, text).")
    ] = None,
    text: Annotated[str | None, Field(max_length=200, description="A text read.")] = None,
    event_types: Annotated[
        list[str] | None, Field(description=f"Event types: {', '.join(EVENT_TYPES)}.")
    ] = None,
    zones: Annotated[list[str] | None, Field(description="Zone names.")] = None,
    min_dwell_s: Annotated[float | None, Field(ge=0, description="Least dwell.")] = None,
    video_ids: Annotated[list[str] | None, Field(description="Only these videos.")] = None,
    limit: Annotated[int, Field(ge=1, le=200, description="Hits per page.")] = 50,
    cursor: Annotated[str | None, Field(description="`next_cursor` of the previous page.")] = None,
) -> CallToolResult:
    """Search every video of your workspace at once (each video's newest run): objects, texts
    read in the video and events, by free text `q` (read as ask_video reads a question), by
    filters, or both (a filter given replaces what `q` says of the same filter). Each hit names
    its video, run, time span and the evidence span ids that back it (cite them as ask_video
    does); `interpreted` says what was searched. Free text that cannot be read is a
    `not_understood` error saying what was understood. Counts toward the plan's searches per
    day."""

    def work(caller: Caller) -> Document:
        given = SearchFilters(
            classes=tuple(classes or ()),
            text=text,
            event_types=tuple(event_types or ()),
            zones=tuple(zones or ()),
            min_dwell_s=min_dwell_s,
            video_ids=tuple(video_ids or ()),
        )
        state = caller.state
        filters = filters_of(state.search, caller.tenant_id, q, given)
        return search_workspace(
            caller.tenant, state.search, state.settings, filters, limit=limit, cursor=cursor
        )

    return respond(ctx, "search_videos", work)


def ask_workspace(
    ctx: Context[Any, Any],
    question: Annotated[
        str,
        Field(
            description="A question about all your videos, e.g. 'Which videos show GATE 7?', "
            "'How many people were seen across all videos yesterday?'."
        ),
    ],
) -> CallToolResult:
    """Ask a question about every video of your workspace (each video's newest run): which
    videos show something and when, or how many things were seen. Grounded answers cite each
    claim's evidence spans with their video and run; what cannot be backed is refused with a
    `refusal_reason`, as ask_video does. Counts toward the plan's asks per day."""

    def work(caller: Caller) -> Document:
        asked = parse_arguments(AskRequest, question=question).question
        state = caller.state
        return ask_workspace_about(
            caller.tenant, asked, state.catalog, state.settings, state.search
        )

    return respond(ctx, "ask_workspace", work)


def register_tools(server: MCPServer) -> None:
    """Add every tool to ``server``; a tool's docstring is its description."""
    reads: tuple[Callable[..., Any], ...] = (
        list_videos,
        get_scene_graph,
        get_timeline,
        get_evidence,
        get_cost,
        search_videos,
    )
    for tool in reads:
        server.add_tool(tool, description=_description(tool), annotations=READ)
    writes: tuple[Callable[..., Any], ...] = (
        add_video,
        execute_video,
        ask_video,
        ask_workspace,
        add_review_note,
        export_evidence,
    )
    for tool in writes:
        server.add_tool(tool, description=_description(tool))


def _description(tool: Callable[..., Any]) -> str:
    return " ".join((tool.__doc__ or "").split())
