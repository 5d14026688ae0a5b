"""DuckDB for analysts: one view per artifact over every published run, on any pyarrow filesystem.

DuckDB reads object stores only through its httpfs extension, which cannot be installed offline,
so each view is a pyarrow dataset over the run files, registered in DuckDB: DuckDB scans it
lazily, pushing down the columns and filters a query names, the same on a local folder, an S3
bucket or a sub-tree of either. Only published runs are seen: the manifests are listed first and
a view reads exactly the files its run's manifest names, so a run still being written (files,
no manifest yet) is invisible.

What each view's columns mean is in the artifact reference (docs/reference/artifacts.md),
rendered from the schemas' ``doc`` metadata.
"""

from __future__ import annotations

import functools
import json
import operator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from storage.artifacts.layout import MANIFEST
from storage.artifacts.schemas import ARTIFACTS
from ves.errors import InvalidRequest

# The Hive folders of a run (tenant=<t>/video=<v>/run=<r>) and the columns they become.
_FOLDERS = {"tenant": "tenant_id", "video": "video_id", "run": "run_id"}
PARTITIONS = pa.schema(
    [
        pa.field("tenant_id", pa.string(), False, {"doc": "The tenant (folder tenant=)."}),
        pa.field("video_id", pa.string(), False, {"doc": "The video (folder video=)."}),
        pa.field("run_id", pa.string(), False, {"doc": "The run (folder run=)."}),
    ]
)
_FILE = pa.struct(
    [
        pa.field("name", pa.string(), False, {"doc": "Path relative to the run folder."}),
        pa.field("bytes", pa.int64(), False, {"doc": "Its size."}),
        pa.field("rows", pa.int64(), True, {"doc": "Rows of a Parquet file, else null."}),
        pa.field("sha256", pa.string(), False, {"doc": "SHA-256 of the file."}),
    ]
)
RUNS = pa.schema(
    [
        *PARTITIONS,
        pa.field("published_at", pa.timestamp("ms", "UTC"), False, {"doc": "When published."}),
        pa.field("schema_version", pa.int32(), False, {"doc": "SCHEMA_VERSION it was written in."}),
        pa.field("files", pa.list_(_FILE), False, {"doc": "Every file of the run."}),
    ],
    metadata={"doc": "Every published run, read from its manifest.json (a view, no artifact)."},
)


@dataclass(frozen=True)
class PublishedRun:
    """A run whose manifest exists: where its folder is and what the manifest says."""

    folder: str
    partitions: dict[str, str]
    manifest: dict[str, Any]

    def holds(self, name: str) -> bool:
        return any(f["name"] == f"{name}.parquet" for f in self.manifest["files"])

    def expression(self) -> pc.Expression:
        """The run's partition values, which fill ``tenant_id``, ``video_id``, ``run_id``."""
        terms = [pc.field(column) == value for column, value in self.partitions.items()]
        return functools.reduce(operator.and_, terms)

    def row(self) -> dict[str, Any]:
        """The run as a row of the ``runs`` view."""
        return {
            **self.partitions,
            "published_at": datetime.fromisoformat(self.manifest["published_at"]),
            "schema_version": self.manifest["schema_version"],
            "files": self.manifest["files"],
        }


def list_published_runs(filesystem: pafs.FileSystem, root: str) -> list[PublishedRun]:
    """Every run under ``<root>/artifacts`` whose ``manifest.json`` exists, in folder order."""
    base = f"{root.rstrip('/')}/artifacts" if root.strip("/") else "artifacts"
    selector = pafs.FileSelector(base, recursive=True, allow_not_found=True)
    runs = []
    for info in filesystem.get_file_info(selector):
        *folders, leaf = info.path.split("/")[-4:]
        pairs = [folder.split("=", 1) for folder in folders]
        if leaf != MANIFEST or [p[0] for p in pairs] != list(_FOLDERS) or not info.is_file:
            continue
        with filesystem.open_input_stream(info.path) as stream:
            manifest = json.loads(stream.read())
        folder = info.path.rsplit("/", 1)[0]
        runs.append(PublishedRun(folder, {_FOLDERS[k]: v for k, v in pairs}, manifest))
    return sorted(runs, key=lambda run: run.folder)


def artifact_dataset(
    filesystem: pafs.FileSystem, runs: list[PublishedRun], name: str
) -> ds.FileSystemDataset:
    """The artifact ``name`` of every run that holds it, with the partition columns first.

    Columns a run's file lacks (an older ``schema_version``) read as null.
    """
    held = [run for run in runs if run.holds(name)]
    return ds.FileSystemDataset.from_paths(
        [f"{run.folder}/{name}.parquet" for run in held],
        schema=pa.schema([*PARTITIONS, *ARTIFACTS[name]]),
        format=ds.ParquetFileFormat(),
        filesystem=filesystem,
        partitions=[run.expression() for run in held],
    )


def analyst_connection(filesystem: pafs.FileSystem, root: str) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with a view per artifact (``events``, ...) and ``runs``.

    Args:
        filesystem: where the data lives (``LocalFileSystem``, ``S3FileSystem``, a sub-tree).
        root: the data root on it; runs are read from ``<root>/artifacts``.
    """
    runs = list_published_runs(filesystem, root)
    conn = duckdb.connect(":memory:")
    for name in ARTIFACTS:
        conn.register(name, artifact_dataset(filesystem, runs, name))
    conn.register("runs", pa.Table.from_pylist([run.row() for run in runs], schema=RUNS))
    return conn


def run_query(conn: duckdb.DuckDBPyConnection, query: str) -> pa.Table:
    """The result of an analyst's SQL (an empty table for statements that return none).

    Raises:
        InvalidRequest: the SQL does not parse, names an unknown view or column, or fails.
    """
    try:
        relation = conn.sql(query)
        return relation.to_arrow_table() if relation is not None else pa.table({})
    except duckdb.Error as exc:
        raise InvalidRequest(str(exc).strip().splitlines()[0]) from exc


def view_names(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """The views an analyst can query, by name."""
    return sorted(str(row[0]) for row in conn.sql("SHOW TABLES").fetchall())
