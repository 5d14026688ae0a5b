"""The search index: which of a tenant's runs a workspace search reads, and what each holds.

A search first asks the catalog for the tenant's published runs (the newest succeeded run of each
video whose artifacts are kept, or every such run), with each video's title and recorded time and
each run's summary (``storage.artifacts.hits.HitSummary``: its classes, event types, zone names
and texts). Runs that cannot hold a hit are dropped there, so no file of another tenant, and no
file of a run that cannot match, is ever opened. A summary is recorded when a run succeeds; a run
published before the index existed is indexed the first time a search meets it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeAlias

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from storage.artifacts.blobs import BlobStore
from storage.artifacts.hits import HitSummary, holds_hits, read_hits, summarize
from storage.catalog.database import Catalog
from storage.catalog.tables import runs, search_runs, videos
from ves.clock import from_rfc3339, now_rfc3339

if TYPE_CHECKING:
    AnySelect: TypeAlias = sa.Select[*tuple[Any, ...]]

_SUMMARY = (
    *("classes", "event_types", "zones", "texts", "hits", "has_file", "indexed_at"),
    *("last_s", "longest_dwell_s", "top_confidence"),
)


@dataclass(frozen=True)
class IndexedRun:
    """A published run a search may read: where it is, its video, and its summary (None until
    it is indexed)."""

    video_id: str
    run_id: str
    key: str
    title: str
    recorded_at: str | None
    summary: HitSummary | None

    @cached_property
    def recorded_epoch(self) -> float | None:
        """When the video's time 0 was recorded, in seconds since the epoch (None: unknown)."""
        return from_rfc3339(self.recorded_at).timestamp() if self.recorded_at else None


class SearchIndex:
    """The ``search_runs`` table and the published runs it describes."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def record(self, tenant_id: str, video_id: str, run_id: str, summary: HitSummary) -> None:
        """Keep ``summary`` for the run (once: a second record of the same run is a no-op)."""
        row = {"run_id": run_id, "tenant_id": tenant_id, "video_id": video_id}
        try:
            with self.catalog.write() as conn:
                conn.execute(
                    search_runs.insert().values(
                        **row, **summary.as_columns(), indexed_at=now_rfc3339()
                    )
                )
        except IntegrityError:
            return  # indexed meanwhile (a search and the flow, or two searches)

    def published(
        self,
        tenant_id: str,
        scope: Scope | None = None,
        holding: Holding | None = None,
    ) -> list[IndexedRun]:
        """The tenant's published runs in ``scope`` that may hold what ``holding`` asks (and
        every run not indexed yet), in video and run order."""
        scope = scope or Scope()
        query = _in_scope(
            sa.select(
                runs.c.video_id,
                runs.c.run_id,
                runs.c.artifacts_path,
                videos.c.title,
                videos.c.recorded_at,
                *(search_runs.c[name] for name in _SUMMARY),
            ),
            tenant_id,
            scope,
        ).order_by(runs.c.video_id, runs.c.run_id)
        if holding is not None:
            query = query.where(search_runs.c.indexed_at.is_(None) | holding.condition())
        with self.catalog.read() as conn:
            rows = conn.execute(query).all()
        return [
            IndexedRun(
                video_id=r.video_id,
                run_id=r.run_id,
                key=r.artifacts_path,
                title=r.title,
                recorded_at=r.recorded_at,
                summary=HitSummary.from_columns(r) if r.indexed_at is not None else None,
            )
            for r in rows
        ]

    def count(self, tenant_id: str, scope: Scope | None = None) -> tuple[int, int]:
        """How many published runs of how many videos the tenant has in ``scope``."""
        query = _in_scope(
            sa.select(sa.func.count(), sa.func.count(sa.distinct(runs.c.video_id))),
            tenant_id,
            scope or Scope(),
        )
        with self.catalog.read() as conn:
            found, of_videos = conn.execute(query).one()
        return int(found), int(of_videos)


@dataclass(frozen=True)
class Scope:
    """Which of a tenant's published runs a search looks at: the newest of each video unless
    ``every_run``, only of ``video_ids`` if given, of videos whose title holds ``title`` (any
    case)."""

    every_run: bool = False
    video_ids: Sequence[str] = ()
    title: str | None = None


@dataclass(frozen=True)
class Holding:
    """What an indexed run must hold for a search to find anything in it, asked of its summary
    in the catalog (so runs that cannot match are never listed): one of each non-empty set of
    ``classes``, ``event_types`` and ``zones``; a text holding ``needle`` (the whole text
    with ``exact``); any text (``texts``); a recorded time (``dated``); a dwell of at least
    ``min_dwell_s``; a hit ending at ``start_s`` or later. It may let through a
    run that cannot match (SQLite's LIKE ignores ASCII case), never drop one that can:
    ``search.engine.could_match`` has the last word."""

    classes: Sequence[str] = ()
    event_types: Sequence[str] = ()
    zones: Sequence[str] = ()
    needle: str | None = None
    exact: bool = False
    texts: bool = False
    dated: bool = False
    min_dwell_s: float | None = None
    start_s: float | None = None

    def condition(self) -> sa.ColumnElement[bool]:
        terms = [search_runs.c.hits > 0]
        for column, least in (
            (search_runs.c.longest_dwell_s, self.min_dwell_s),
            (search_runs.c.last_s, self.start_s),
        ):
            if least is not None:  # null: indexed before the column existed
                terms.append(column.is_(None) | (column >= least))
        for column, members in (
            (search_runs.c.classes, self.classes),
            (search_runs.c.event_types, self.event_types),
            (search_runs.c.zones, self.zones),
        ):
            if members:
                terms.append(sa.or_(*(_holds(column, m) for m in members)))
        if self.needle is not None:  # never spans two members: it holds no newline
            exact = self.exact
            needle = self.needle
            terms.append(
                _holds(search_runs.c.texts, needle)
                if exact
                else search_runs.c.texts.contains(needle, autoescape=True)
            )
        if self.texts:
            terms.append(search_runs.c.texts != "\n")
        if self.dated:
            terms.append(videos.c.recorded_at.is_not(None))
        return sa.and_(*terms)


def _holds(column: sa.Column[str], member: str) -> sa.ColumnElement[bool]:
    """The summary set in ``column`` (members between newlines) holds ``member``."""
    return column.contains(f"\n{member}\n", autoescape=True)


def _in_scope(query: AnySelect, tenant_id: str, scope: Scope) -> AnySelect:
    """``query`` over the tenant's published runs in ``scope`` (with their videos and their
    index rows, where indexed). Any columns: SQLAlchemy 2.1 types a select by each of them."""
    query = (
        query.select_from(runs)
        .join(videos, videos.c.video_id == runs.c.video_id)
        .outerjoin(search_runs, search_runs.c.run_id == runs.c.run_id)
        .where(*_kept(runs), runs.c.tenant_id == tenant_id, videos.c.tenant_id == tenant_id)
    )
    if not scope.every_run:
        newer = runs.alias("newer")
        query = query.where(
            ~sa.exists().where(
                newer.c.video_id == runs.c.video_id,
                newer.c.run_id > runs.c.run_id,
                *_kept(newer),
            )
        )
    if scope.video_ids:
        query = query.where(runs.c.video_id.in_(list(scope.video_ids)))
    if scope.title:
        query = query.where(
            sa.func.lower(videos.c.title).contains(scope.title.lower(), autoescape=True)
        )
    return query


def unknown_videos(catalog: Catalog, tenant_id: str, video_ids: Sequence[str]) -> list[str]:
    """Those of ``video_ids`` that are no video of the tenant (another tenant's among them)."""
    query = sa.select(videos.c.video_id).where(
        videos.c.tenant_id == tenant_id, videos.c.video_id.in_(list(video_ids))
    )
    with catalog.read() as conn:
        known = {row.video_id for row in conn.execute(query)}
    return [v for v in video_ids if v not in known]


def vocabulary(catalog: Catalog, tenant_id: str) -> tuple[frozenset[str], frozenset[str]]:
    """The classes and zone names the tenant's indexed runs hold (what a free-text search
    reads its words against)."""
    query = (
        sa.select(search_runs.c.classes, search_runs.c.zones)
        .where(search_runs.c.tenant_id == tenant_id)
        .distinct()
    )
    with catalog.read() as conn:
        rows = conn.execute(query).all()
    classes = {c for row in rows for c in row.classes.split("\n") if c}
    zones = {z for row in rows for z in row.zones.split("\n") if z}
    return frozenset(classes), frozenset(zones)


def index_published(
    catalog: Catalog, store: BlobStore, tenant_id: str, video_id: str, run_id: str, key: str
) -> None:
    """Record what the just published run at ``key`` holds (after it succeeded)."""
    hits = read_hits(store, key)
    summary = summarize(hits, has_file=holds_hits(store, key))
    SearchIndex(catalog).record(tenant_id, video_id, run_id, summary)


def _kept(table: sa.FromClause) -> tuple[sa.ColumnElement[bool], ...]:
    """A succeeded run whose artifacts are published and not expired."""
    return (
        table.c.state == "succeeded",
        table.c.expired_at.is_(None),
        table.c.artifacts_path.is_not(None),
    )
