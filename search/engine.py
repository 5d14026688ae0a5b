"""One workspace search: the tenant's runs pruned in the catalog, then one DuckDB query over their
hits.

1. The catalog lists the tenant's published runs (``storage.catalog.search_index``) with what
   each holds; runs that cannot hold a hit (no such class, text, event type or zone, no recorded
   time when a clock time is asked) are dropped before any file is opened. Only the tenant's own
   run folders are ever named, so a search cannot read another tenant's files.
2. DuckDB reads the remaining runs' ``hits.parquet`` (its own Parquet reader on the local store;
   a pyarrow dataset on an object store, which DuckDB cannot reach offline), joined with each
   run's video title and recorded time, filtered, sorted and cut to one page.

The result is what the same filters written as SQL over ``ves sql``'s ``hits`` view give
(tests/search/test_engine.py checks it).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds

from search.filters import SearchFilters
from search.order import reading_order
from search.sql import hits_query, keyed
from storage.artifacts.blobs import BlobStore
from storage.artifacts.hits import HitSummary, holds_hits, read_hits, summarize
from storage.artifacts.schemas import ARTIFACTS
from storage.catalog.database import Catalog
from storage.catalog.search_index import Holding, IndexedRun, Scope, SearchIndex, unknown_videos
from ves.errors import InvalidRequest, NotFound, NotReady

MAX_LIMIT = 200
FIRST_BATCH = 64  # runs read first (then 256, 1024, ...): see SearchEngine._page
_IDS = pa.schema([pa.field("video_id", pa.string(), False), pa.field("run_id", pa.string(), False)])
META = pa.schema(
    [*_IDS, pa.field("title", pa.string(), False), pa.field("recorded_epoch", pa.float64())]
)


@dataclass(frozen=True)
class SearchPage:
    """One page of hits (dicts: the hits columns, ``video_id``, ``run_id``, ``title`` and
    ``recorded_start``), the cursor to the next page, and how much was searched."""

    hits: list[dict[str, Any]]
    next_cursor: str | None
    filters: SearchFilters  # as searched (checked, canonical): what ``interpreted`` echoes
    runs: int  # the tenant's runs searched (after the video and title filters)
    videos: int
    read: int  # of those, runs whose hits were read (the others could not match)


class SearchEngine:
    """Searches a catalog's tenants' runs in a blob store; one per process (thread-safe)."""

    def __init__(self, catalog: Catalog, store: BlobStore) -> None:
        self.index = SearchIndex(catalog)
        self.store = store
        self._db = duckdb.connect(":memory:")
        self._db.execute("SET parquet_metadata_cache = true")
        self._lock = threading.Lock()

    def search(
        self, tenant_id: str, filters: SearchFilters, *, limit: int = 50, cursor: str | None = None
    ) -> SearchPage:
        """The page of the tenant's hits that ``filters`` find, after ``cursor``.

        Raises:
            ValidationFailed: a filter that cannot hold.
            NotFound: a video id that is none of the tenant's.
            InvalidRequest: a cursor of another search, or a malformed one.
        """
        filters = filters.checked()
        if filters.video_ids:
            unknown = unknown_videos(self.index.catalog, tenant_id, filters.video_ids)
            if unknown:
                raise NotFound(f"no video {unknown[0]}")
        limit = max(1, min(limit, MAX_LIMIT))
        offset = read_cursor(cursor, filters) if cursor else 0
        scope = Scope(filters.every_run, filters.video_ids, filters.title)
        listed = self.index.published(tenant_id, scope, holding_of(filters))
        runs, derived = self._indexed(tenant_id, listed)
        matching = [r for r in runs if could_match(r, filters)]
        rows, read = self._page(matching, derived, filters, offset + limit + 1)
        rows = [_hit(row) for row in rows[offset:]]
        in_scope, videos = self.index.count(tenant_id, scope)
        return SearchPage(
            filters=filters,
            hits=rows[:limit],
            next_cursor=write_cursor(offset + limit, filters) if len(rows) > limit else None,
            runs=in_scope,
            videos=videos,
            read=read,
        )

    def _page(
        self,
        runs: list[IndexedRun],
        derived: dict[str, pa.Table],
        filters: SearchFilters,
        count: int,
    ) -> tuple[list[dict[str, Any]], int]:
        """The first ``count`` hits of ``runs`` in the search's order, and how many runs were
        read for them.

        Runs are read in ``search.order.reading_order``'s order, in batches that grow fourfold,
        each batch's hits ranked with the best ``count`` kept so far, until no unread run can
        rank among those (the first pages of a search over 10,000 videos read a few hundred
        files); a search with no such order reads every run at once.
        """
        if not runs:
            return [], 0
        ordered, settled = reading_order(runs, filters)
        if settled is None:
            derived = self._derive_older(runs, derived)
            return self._query(runs, runs, derived, filters, count, None).to_pylist(), len(runs)
        kept: pa.Table | None = None
        start, size = 0, FIRST_BATCH
        while True:
            batch = ordered[start : start + size]
            start += len(batch)
            derived = self._derive_older(batch, derived)
            kept = self._query(ordered[:start], batch, derived, filters, count, kept)
            if start == len(ordered) or settled(kept, count, ordered[start]):
                return kept.to_pylist(), start
            size *= 4

    def _indexed(
        self, tenant_id: str, listed: list[IndexedRun]
    ) -> tuple[list[IndexedRun], dict[str, pa.Table]]:
        """Every listed run with its summary (runs met for the first time are indexed now),
        and the hits derived in memory of runs written before ``hits.parquet`` existed."""
        runs: list[IndexedRun] = []
        derived: dict[str, pa.Table] = {}
        for seen in listed:
            key = self.store.key_of(seen.key)
            if key is None:
                continue
            run = seen if key == seen.key else dataclasses.replace(seen, key=key)
            if run.summary is None:
                try:
                    hits, has_file = read_hits(self.store, key), holds_hits(self.store, key)
                except NotReady:
                    continue  # its artifacts are gone; reading the video says so
                summary = summarize(hits, has_file=has_file)
                self.index.record(tenant_id, run.video_id, run.run_id, summary)
                run = dataclasses.replace(run, summary=summary)
                if not has_file:
                    derived[run.run_id] = hits
            runs.append(run)
        return runs, derived

    def _derive_older(
        self, runs: list[IndexedRun], derived: dict[str, pa.Table]
    ) -> dict[str, pa.Table]:
        """``derived`` with the hits of every run in ``runs`` written without a hits file."""
        for run in runs:
            if run.summary is not None and not run.summary.has_file and run.run_id not in derived:
                derived[run.run_id] = read_hits(self.store, run.key)
        return derived

    def _query(
        self,
        known: list[IndexedRun],
        runs: list[IndexedRun],
        derived: dict[str, pa.Table],
        filters: SearchFilters,
        count: int,
        kept: pa.Table | None,
    ) -> pa.Table:
        """The first ``count`` result rows of the hits of ``runs`` and the result rows ``kept``
        from an earlier batch (``known``: every run either comes from, for its title and
        recorded time).

        In two reads: the ids of the first ``count`` hits, from only the columns the filters
        and the order need; then those hits whole, from the few runs that hold them (reading
        every column of every run costs about twice as much).
        """
        with self._lock:
            cursor = self._db.cursor()
        try:
            cursor.register("meta", _meta(known))
            keys = self._select(cursor, runs, derived, filters, count, kept, keys_only=True)
            if not keys.num_rows:
                return keys
            ids = set(zip(keys["video_id"].to_pylist(), keys["run_id"].to_pylist(), strict=True))
            holding = [r for r in runs if (r.video_id, r.run_id) in ids]
            cursor.register("keys", keys)
            return self._select(cursor, holding, derived, filters, count, kept, keys_only=False)
        finally:
            cursor.close()

    def _select(
        self,
        cursor: duckdb.DuckDBPyConnection,
        runs: list[IndexedRun],
        derived: dict[str, pa.Table],
        filters: SearchFilters,
        count: int,
        kept: pa.Table | None,
        *,
        keys_only: bool,
    ) -> pa.Table:
        """The search over ``runs`` and ``kept``: the ids of its first ``count`` hits, or (not
        ``keys_only``) those of the ``keys`` registered on ``cursor``, whole."""
        sources: list[str] = []
        params: dict[str, Any] = {}
        on_file = [r for r in runs if r.run_id not in derived]
        if on_file:
            sources.append(self._files(cursor, on_file, params))
        held = [r for r in runs if r.run_id in derived]
        if held:
            cursor.register("derived", _with_ids(held, derived))
            sources.append("SELECT * FROM derived")
        if kept is not None and kept.num_rows:
            cursor.register("kept", kept)
            sources.append("SELECT * EXCLUDE (title, recorded_epoch) FROM kept")
        source = " UNION ALL BY NAME ".join(sources)
        if not keys_only:
            source = keyed(source)
        sql, more = hits_query(source, filters, count, 0, keys_only=keys_only)
        table: pa.Table = cursor.sql(sql, params=params | more).to_arrow_table()
        return table

    def _files(
        self, cursor: duckdb.DuckDBPyConnection, runs: list[IndexedRun], params: dict[str, Any]
    ) -> str:
        """A query reading the runs' ``hits.parquet`` with their video and run ids (its
        parameters added to ``params``)."""
        local = [self.store.local_path(f"{r.key}/hits.parquet") for r in runs]
        if all(path is not None for path in local):
            params["paths"] = [str(p) for p in local]
            return (
                "SELECT * EXCLUDE (tenant, video, run), video AS video_id, run AS run_id "
                "FROM read_parquet($paths, hive_partitioning = true, hive_types = "
                "{'tenant': VARCHAR, 'video': VARCHAR, 'run': VARCHAR})"
            )
        dataset = ds.FileSystemDataset.from_paths(
            [self.store.path(f"{r.key}/hits.parquet") for r in runs],
            schema=pa.schema([*_IDS, *ARTIFACTS["hits"]]),
            format=ds.ParquetFileFormat(),
            filesystem=self.store.filesystem,
            partitions=[
                (ds.field("video_id") == r.video_id) & (ds.field("run_id") == r.run_id)
                for r in runs
            ],
        )
        cursor.register("files", dataset)
        return "SELECT * FROM files"


def holding_of(filters: SearchFilters) -> Holding:
    """What a run's summary must hold for ``filters`` to find anything in it, asked of the
    catalog before runs are listed (``could_match`` then checks each listed run)."""
    return Holding(
        classes=filters.classes,
        event_types=filters.event_types,
        zones=filters.zones,
        needle=filters.needle,
        exact=filters.text_match == "exact",
        texts=filters.finds == "text",
        dated=filters.recorded_after is not None or filters.recorded_before is not None,
        min_dwell_s=filters.min_dwell_s,
        start_s=filters.start_s,
    )


def could_match(run: IndexedRun, filters: SearchFilters) -> bool:
    """Whether the run's summary leaves any room for a hit (False: its file is not read)."""
    summary = run.summary
    if summary is None or summary.hits == 0 or not _within_reach(run, summary, filters):
        return False
    wanted = (
        (filters.classes, summary.classes),
        (filters.event_types, summary.event_types),
        (filters.zones, summary.zones),
    )
    if any(asked and not set(asked) & held for asked, held in wanted):
        return False
    needle = filters.needle
    if needle is not None:
        if filters.text_match == "exact":
            return needle in summary.texts
        return any(needle in text for text in summary.texts)
    return filters.finds != "text" or bool(summary.texts)


def _within_reach(run: IndexedRun, summary: HitSummary, filters: SearchFilters) -> bool:
    """Whether the run's stretch of time (and longest dwell) can meet the filters' times: its
    hits span its recorded time plus 0 to ``last_s`` (both as the search's SQL adds them)."""
    last = summary.last_s
    longest = summary.longest_dwell_s
    if filters.min_dwell_s is not None and longest is not None and longest < filters.min_dwell_s:
        return False
    if filters.start_s is not None and last is not None and last < filters.start_s:
        return False
    if filters.recorded_after is None and filters.recorded_before is None:
        return True
    epoch = run.recorded_epoch
    if epoch is None:
        return False
    before, after = filters.recorded_before, filters.recorded_after
    if before is not None and epoch > before.timestamp():
        return False
    return after is None or last is None or epoch + last >= after.timestamp()


def _meta(runs: list[IndexedRun]) -> pa.Table:
    """Each run's video title and recorded time (seconds since the epoch, or null)."""
    return pa.Table.from_pylist(
        [
            {
                "video_id": r.video_id,
                "run_id": r.run_id,
                "title": r.title,
                "recorded_epoch": r.recorded_epoch,
            }
            for r in runs
        ],
        schema=META,
    )


def _with_ids(runs: list[IndexedRun], derived: dict[str, pa.Table]) -> pa.Table:
    """The derived hits of ``runs`` in one table, each row with its video and run ids."""
    parts = []
    for run in runs:
        hits = derived[run.run_id]
        ids = [pa.array([run.video_id] * hits.num_rows), pa.array([run.run_id] * hits.num_rows)]
        parts.append(
            pa.Table.from_arrays([*ids, *hits.columns], schema=pa.schema([*_IDS, *hits.schema]))
        )
    return pa.concat_tables(parts)


def _hit(row: dict[str, Any]) -> dict[str, Any]:
    """A result row as a hit: its clock time where the video's recorded time is known."""
    epoch = row.pop("recorded_epoch")
    row.pop("text_norm", None)
    row["recorded_start"] = (
        datetime.fromtimestamp(epoch, UTC) + timedelta(seconds=row["start_s"]) if epoch else None
    )
    return row


def write_cursor(offset: int, filters: SearchFilters) -> str:
    """An opaque cursor: where the next page starts, for these filters only."""
    blob = json.dumps({"o": offset, "f": filters.fingerprint()}).encode()
    return base64.urlsafe_b64encode(blob).decode().rstrip("=")


def read_cursor(cursor: str, filters: SearchFilters) -> int:
    """The offset a cursor holds.

    Raises:
        InvalidRequest: not a cursor of this service, or one of a search with other filters.
    """
    try:
        blob = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset, fingerprint = int(blob["o"]), str(blob["f"])
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError):
        raise InvalidRequest("the cursor is not one this service gave") from None
    if fingerprint != filters.fingerprint() or offset < 0:
        raise InvalidRequest("the cursor belongs to a search with other filters")
    return offset
