"""The workspace search: every published run of the tenant searched in one request.

Free text (``q``) is read as Ask reads a question and answered as the filters it becomes
(echoed as ``interpreted``); text it cannot read is a 422 ``not_understood`` that says what was
understood. Structured filters are taken as given. Each hit cites its evidence spans, as Ask's
answers do, and links a thumbnail.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from api.audit import AuditedRoute
from api.deps import SearchDep, SettingsDep, TenantDep
from api.operations.search import filters_of, moment_of, search_workspace
from api.problems import CursorQuery, problem_responses
from api.schemas.search import SearchResults
from search.engine import MAX_LIMIT
from search.filters import EVENT_TYPES, SearchFilters, TextMatch

router = APIRouter(tags=["search"], route_class=AuditedRoute)


_Q_EXAMPLES = {
    "text": {"summary": "A text shown", "value": "GATE 7 after 20 s"},
    "zone": {"summary": "People in a zone", "value": "people in the left zone"},
    "dwell": {"summary": "A long stop", "value": "stopped over 5 minutes"},
    "clock": {"summary": "By clock time", "value": "people after 22:00 on 2026-11-20"},
}


@router.get(
    "/api/product/search",
    summary="Search every video of the workspace",
    description=(
        "Finds objects, texts read in the video and events across the newest published run of "
        "every video (`run=all`: every published run). Give `q`, free text read as Ask "
        "reads a question (`GATE 7 after 20 s`, `people in the left zone`, `stopped over 5 "
        "minutes`, `people after 22:00 on 2026-11-20`; clock times are UTC and need a day), "
        "structured filters, or both: a filter given beside `q` takes the place of what `q` "
        "says of the same filter, and all filters searched must hold. With neither, every "
        "object and text is found. Without `event`, objects and texts are found; with it, events "
        "of those types. Texts compare case- and space-insensitively, as whole words by default "
        "(`gate7` finds `GATE 7`, not `GATE 77`). Each hit carries its video, run, time span, "
        "the evidence span ids that back it (cite them as Ask does) and a thumbnail URL. "
        "`interpreted` echoes the filters searched. A `video_id` that is none of the "
        "workspace's is a 404. Free text that cannot be read is a 422 `not_understood` whose "
        "`interpreted` member says what was understood. Counted per day against the plan's "
        '`searches_per_day`. Example: `curl -H "Authorization: Bearer $KEY" '
        '"$API/api/product/search?q=GATE%207"`.'
    ),
    responses=problem_responses(400, 401, 402, 404, 422),
)
def search(
    tenant: TenantDep,
    settings: SettingsDep,
    engine: SearchDep,
    q: Annotated[
        str | None,
        Query(min_length=1, max_length=300, description="Free text.", openapi_examples=_Q_EXAMPLES),
    ] = None,
    classes: Annotated[
        list[str], Query(alias="class", description="Object classes (person, motion, ...).")
    ] = [],  # noqa: B006 (FastAPI copies a query list's default)
    text: Annotated[
        str | None, Query(min_length=1, max_length=200, description="A text read in the video.")
    ] = None,
    text_match: Annotated[
        TextMatch,
        Query(
            description="How `text` is compared: `words` (its words in order, not inside longer "
            "ones: `GATE 7` finds `TO GATE 7` and `GATE7`, not `GATE 77`), `substring` or "
            "`exact` (the whole text)."
        ),
    ] = "words",
    event: Annotated[
        list[str],
        Query(
            description="Event types to find.",
            json_schema_extra={"items": {"type": "string", "enum": list(EVENT_TYPES)}},
        ),
    ] = [],  # noqa: B006
    zone: Annotated[list[str], Query(description="Zone names (left, center, right).")] = [],  # noqa: B006
    min_dwell_s: Annotated[
        float | None, Query(ge=0, description="Dwell events at least this long (seconds).")
    ] = None,
    start_s: Annotated[
        float | None, Query(ge=0, description="Overlapping the video after this time.")
    ] = None,
    end_s: Annotated[
        float | None, Query(ge=0, description="Overlapping the video before this time.")
    ] = None,
    recorded_after: Annotated[
        str | None,
        Query(
            description="On the clock after this (RFC 3339 with its offset).",
            json_schema_extra={"format": "date-time"},
        ),
    ] = None,
    recorded_before: Annotated[
        str | None,
        Query(
            description="On the clock before this (RFC 3339 with its offset).",
            json_schema_extra={"format": "date-time"},
        ),
    ] = None,
    video_id: Annotated[list[str], Query(description="Only these videos.")] = [],  # noqa: B006
    title: Annotated[
        str | None, Query(max_length=200, description="Only videos whose title holds this.")
    ] = None,
    run: Annotated[
        Literal["latest", "all"], Query(description="Each video's newest run, or every run.")
    ] = "latest",
    sort: Annotated[
        Literal["time", "relevance"] | None,
        Query(description="Default: relevance when a text is searched, else time."),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 50,
    cursor: CursorQuery = None,
) -> SearchResults:
    given = SearchFilters(
        classes=tuple(classes),
        text=text,
        text_match=text_match,
        event_types=tuple(event),
        zones=tuple(zone),
        min_dwell_s=min_dwell_s,
        start_s=start_s,
        end_s=end_s,
        recorded_after=moment_of(recorded_after, "recorded_after"),
        recorded_before=moment_of(recorded_before, "recorded_before"),
        video_ids=tuple(video_id),
        title=title,
        every_run=run == "all",
    )
    filters = filters_of(engine, tenant.tenant_id, q, given, sort)
    return search_workspace(tenant, engine, settings, filters, limit=limit, cursor=cursor)
