"""Searching the workspace, shared by the REST route and the MCP ``search_videos`` tool: the
free text read (or the filters taken as given), the search counted in the tenant's usage, the
engine's page turned into the response."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime

from api.schemas.search import Searched, SearchHit, SearchResults
from search.engine import SearchEngine
from search.filters import SearchFilters, Sort
from search.reader import Vocabulary, read_query
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.served import name_hits
from storage.catalog.records import Tenant
from storage.catalog.runs.store import RunStore
from storage.catalog.search_index import vocabulary
from storage.catalog.usage import UsageStore, day_of, refuse
from ves.clock import now_rfc3339
from ves.errors import ValidationFailed
from ves.settings import Settings

_RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$"
)


def moment_of(value: str | None, name: str) -> datetime | None:
    """An RFC 3339 date-time with its offset (``ValidationFailed`` for anything else: a bare
    date, a number of seconds, a time with no zone cannot be placed on the clock)."""
    if value is None:
        return None
    problem = {"loc": ["query", name], "msg": "not an RFC 3339 date-time", "type": "datetime"}
    if not _RFC3339.match(value):
        raise ValidationFailed(f"{name} must be an RFC 3339 date-time", errors=[problem])
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValidationFailed(f"{name} must be an RFC 3339 date-time", errors=[problem]) from None


_SCOPE = ("video_ids", "title", "every_run")  # which videos and runs: always the ones given


def beside(read: SearchFilters, given: SearchFilters) -> SearchFilters:
    """``q``'s reading with the filters given beside it: each filter given takes the place of
    what ``q`` said of the same filter (``interpreted`` shows what was searched); the videos and
    runs are always the given ones."""
    unset = SearchFilters()
    update = {
        f.name: getattr(given, f.name)
        for f in dataclasses.fields(SearchFilters)
        if f.name != "sort"
        and (f.name in _SCOPE or getattr(given, f.name) != getattr(unset, f.name))
    }
    return dataclasses.replace(read, **update)


def filters_of(
    engine: SearchEngine,
    tenant_id: str,
    q: str | None,
    given: SearchFilters,
    sort: Sort | None = None,
) -> SearchFilters:
    """The filters searched: ``q`` read as Ask reads a question, with the filters given beside
    it (``beside``), or ``given`` as they are; sorted by ``sort``, else by relevance when a
    text is searched and by time otherwise.

    Raises:
        NotUnderstood: ``q`` cannot be read.
    """
    filters = given
    if q is not None:
        classes, zones = vocabulary(engine.index.catalog, tenant_id)
        filters = beside(read_query(q, Vocabulary(classes, tuple(sorted(zones)))), given)
    chosen = sort or ("relevance" if filters.text is not None else "time")
    return dataclasses.replace(filters, sort=chosen)


def search_workspace(
    tenant: Tenant,
    engine: SearchEngine,
    settings: Settings,
    filters: SearchFilters,
    *,
    limit: int,
    cursor: str | None,
) -> SearchResults:
    """One page of the tenant's hits, counted against the plan's ``searches_per_day`` (checked
    before the search, counted atomically after it)."""
    per_day = settings.plan(tenant.plan).searches_per_day
    usage = UsageStore(engine.index.catalog)
    today = usage.value(tenant.tenant_id, day_of(now_rfc3339()), "searches")
    if today >= per_day:
        raise refuse("searches_per_day", per_day, today)
    page = engine.search(tenant.tenant_id, filters, limit=limit, cursor=cursor)
    usage.count_search(tenant.tenant_id, per_day)
    reader = ArtifactReader(engine.store)
    try:
        hits = name_hits(reader, RunStore(engine.index.catalog), [dict(r) for r in page.hits])
    finally:
        reader.close()
    return SearchResults(
        data=[SearchHit.from_row(row) for row in hits],
        next_cursor=page.next_cursor,
        interpreted=page.filters.interpreted(),
        searched=Searched(runs=page.runs, videos=page.videos, read=page.read),
    )
