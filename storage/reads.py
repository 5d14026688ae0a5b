"""Reading published artifacts with DuckDB (the API's and the analysts' one way in).

One in-memory DuckDB connection is shared; each read takes its own ``cursor()`` so concurrent
requests do not step on each other. Paths are passed as query parameters, never formatted in.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import duckdb

from storage.artifacts import COST, MANIFEST, artifact_path


class ArtifactReader:
    """Reads the tables and documents of published runs."""

    def __init__(self) -> None:
        self._conn = duckdb.connect(":memory:")
        self._lock = threading.Lock()

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        with self._lock:  # creating cursors is the only shared step
            return self._conn.cursor()

    def rows(self, run_dir: Path, name: str, order_by: str | None = None) -> list[dict[str, Any]]:
        """Every row of ``<run_dir>/<name>.parquet`` as dicts, optionally ordered by a column."""
        path = str(artifact_path(run_dir, name))
        order = f' ORDER BY "{order_by}"' if order_by and order_by.isidentifier() else ""
        cursor = self._cursor()
        try:
            query = f"SELECT * FROM read_parquet($path){order}"  # noqa: S608
            table = cursor.sql(query, params={"path": path}).to_arrow_table()
        finally:
            cursor.close()
        rows: list[dict[str, Any]] = table.to_pylist()
        return rows

    def span_times(self, run_dir: Path) -> list[dict[str, Any]]:
        """Every evidence span's id and time (without its frames and notes)."""
        cursor = self._cursor()
        try:
            table = cursor.sql(
                "SELECT evidence_id, start_s, end_s FROM read_parquet($path)",
                params={"path": str(artifact_path(run_dir, "evidence"))},
            ).to_arrow_table()
        finally:
            cursor.close()
        rows: list[dict[str, Any]] = table.to_pylist()
        return rows

    def document(self, run_dir: Path, name: str) -> dict[str, Any]:
        """A JSON document of the run (``cost.json``, ``manifest.json``)."""
        if name not in {COST, MANIFEST}:
            raise ValueError(f"not a run document: {name}")
        loaded: dict[str, Any] = json.loads((run_dir / name).read_text())
        return loaded

    def close(self) -> None:
        self._conn.close()
