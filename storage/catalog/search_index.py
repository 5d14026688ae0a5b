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
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from storage.artifacts.blobs import BlobStore
from storage.artifacts.hits import HitSummary, holds_hits, read_hits, summarize
from storage.catalog.database import Catalog
from storage.catalog.tables import runs, search_runs, videos
from ves.clock import now_rfc3339

_SUMMARY = ("classes", "event_types", "zones", "texts", "hits", "has_file", "indexed_at")


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
        *,
        every_run: bool = False,
        video_ids: Sequence[str] = (),
        title: str | None = None,
    ) -> list[IndexedRun]:
        """The tenant's published runs, newest of each video unless ``every_run``, optionally
        only of ``video_ids`` and of videos whose title holds ``title`` (any case)."""
        query = _published_query(tenant_id, every_run, video_ids, title)
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


def _published_query(
    tenant_id: str, every_run: bool, video_ids: Sequence[str], title: str | None
) -> sa.Select[Any]:
    """The tenant's kept runs with their videos' titles and recorded times and their summaries."""
    query = (
        sa.select(
            runs.c.video_id,
            runs.c.run_id,
            runs.c.artifacts_path,
            videos.c.title,
            videos.c.recorded_at,
            *(search_runs.c[name] for name in _SUMMARY),
        )
        .join(videos, videos.c.video_id == runs.c.video_id)
        .outerjoin(search_runs, search_runs.c.run_id == runs.c.run_id)
        .where(*_kept(runs), runs.c.tenant_id == tenant_id, videos.c.tenant_id == tenant_id)
        .order_by(runs.c.video_id, runs.c.run_id)
    )
    if not every_run:
        newer = runs.alias("newer")
        query = query.where(
            ~sa.exists().where(
                newer.c.video_id == runs.c.video_id,
                newer.c.run_id > runs.c.run_id,
                *_kept(newer),
            )
        )
    if video_ids:
        query = query.where(runs.c.video_id.in_(list(video_ids)))
    if title:
        query = query.where(sa.func.lower(videos.c.title).contains(title.lower(), autoescape=True))
    return query


def _kept(table: sa.FromClause) -> tuple[sa.ColumnElement[bool], ...]:
    """A succeeded run whose artifacts are published and not expired."""
    return (
        table.c.state == "succeeded",
        table.c.expired_at.is_(None),
        table.c.artifacts_path.is_not(None),
    )
