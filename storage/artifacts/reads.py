"""Reading published artifacts with DuckDB (the API's and the analysts' one way in).

One in-memory DuckDB connection is shared; each read takes its own ``cursor()`` so concurrent
requests do not step on each other. A run is named as the catalog records it (a blob store key,
or the absolute folder of a run published before the store existed).

On the local store DuckDB reads the file itself (``read_parquet($path)``, the path a parameter,
never formatted in). On an object store it cannot: its httpfs extension would have to be
downloaded, which these machines cannot do. There pyarrow reads the object through the store's
filesystem and DuckDB queries that Arrow table, registered under a name private to the query.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any

import duckdb

from storage.artifacts.blobs import BlobStore, LocalBlobStore
from storage.artifacts.layout import COST, MANIFEST, artifact_path, verify_published
from ves.errors import BlobNotFound, NotReady

_VERIFIED_KEPT = 256


class ArtifactReader:
    """Reads the tables and documents of published runs from one blob store.

    Without a store, run locations are local folders (benchmarks and scripts read runs that
    way).
    """

    def __init__(self, store: BlobStore | None = None) -> None:
        self.store = store or LocalBlobStore(Path("/"))
        self._conn = duckdb.connect(":memory:")
        self._lock = threading.Lock()
        self._verified: OrderedDict[str, None] = OrderedDict()

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        with self._lock:  # creating cursors is the only shared step
            return self._conn.cursor()

    def run_key(self, run: str | Path) -> str:
        """The store key of a run location from the catalog.

        Raises:
            NotReady: the location is not in this store (e.g. a local folder on an S3 store).
        """
        key = self.store.key_of(str(run))
        if key is None:
            raise NotReady("the run's artifacts are not in the blob store; execute it again")
        return key

    def verify(self, run: str | Path) -> None:
        """Refuse a run that is not wholly published (no manifest, a file missing or short).

        A published run never changes until retention deletes it (after the catalog stopped
        offering it), so each run is verified once per process.

        Raises:
            NotReady: the run is not readable.
        """
        key = self.run_key(run)
        with self._lock:
            if key in self._verified:
                self._verified.move_to_end(key)
                return
        verify_published(self.store, key)
        with self._lock:
            self._verified[key] = None
            while len(self._verified) > _VERIFIED_KEPT:
                self._verified.popitem(last=False)

    def rows(self, run: str | Path, name: str, order_by: str | None = None) -> list[dict[str, Any]]:
        """Every row of the run's artifact ``name`` as dicts, optionally ordered by a column."""
        order = f' ORDER BY "{order_by}"' if order_by and order_by.isidentifier() else ""
        return self._select(run, name, "SELECT * FROM {source}" + order)  # noqa: S608

    def span_times(self, run: str | Path) -> list[dict[str, Any]]:
        """Every evidence span's id and time (without its frames and notes)."""
        return self._select(run, "evidence", "SELECT evidence_id, start_s, end_s FROM {source}")

    def span_subjects(self, run: str | Path) -> list[dict[str, Any]]:
        """Every evidence span's id with the object and the event it backs."""
        query = "SELECT evidence_id, object_id, event_id FROM {source}"
        return self._select(run, "evidence", query)

    def track_rows(self, run: str | Path, start_s: float, end_s: float) -> list[dict[str, Any]]:
        """The tracked boxes shown from ``start_s`` to ``end_s`` (inclusive), by object then time:
        ``track_id``, ``t_s``, ``bbox``, ``estimated`` (False where unknown: runs made before
        the column have none, hence ``*`` rather than naming it)."""
        query = (
            "SELECT * FROM {source} WHERE t_s >= $start AND t_s <= $end AND track_id IS NOT NULL"
            " ORDER BY track_id, t_s"
        )
        rows = self._select(run, "tracks", query, {"start": start_s, "end": end_s})
        return [
            {
                "track_id": r["track_id"],
                "t_s": r["t_s"],
                "bbox": r["bbox"],
                "estimated": bool(r.get("estimated")),
            }
            for r in rows
        ]

    def _select(
        self, run: str | Path, name: str, query: str, params: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Run ``query`` (``{source}`` stands for the artifact, ``$name`` for ``params``) on the
        run's artifact ``name``."""
        key = artifact_path(Path(self.run_key(run)), name).as_posix()
        local = self.store.local_path(key)
        cursor = self._cursor()
        try:
            if local is not None:
                sql = query.format(source="read_parquet($path)")
                result = cursor.sql(sql, params={**(params or {}), "path": str(local)})
            else:
                source = f"artifact_{uuid.uuid4().hex}"
                cursor.register(source, self._table(key))
                result = cursor.sql(query.format(source=source), params=params or None)
            table = result.to_arrow_table()
        except duckdb.IOException as exc:  # the file went away under the reader
            raise NotReady("the run's artifacts are gone; execute it again") from exc
        finally:
            cursor.close()
        rows: list[dict[str, Any]] = table.to_pylist()
        return rows

    def _table(self, key: str) -> Any:
        try:
            return self.store.read_parquet(key)
        except BlobNotFound as exc:
            raise NotReady("the run's artifacts are gone; execute it again") from exc

    def document(self, run: str | Path, name: str) -> dict[str, Any]:
        """A JSON document of the run (``cost.json``, ``manifest.json``)."""
        if name not in {COST, MANIFEST}:
            raise ValueError(f"not a run document: {name}")
        try:
            loaded: dict[str, Any] = json.loads(self.store.get_bytes(f"{self.run_key(run)}/{name}"))
        except BlobNotFound as exc:
            raise NotReady("the run's artifacts are gone; execute it again") from exc
        return loaded

    def close(self) -> None:
        self._conn.close()
