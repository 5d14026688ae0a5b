"""The analysts' DuckDB: a view per artifact over every published run, on any pyarrow filesystem.

Every test runs on the local folder as a path, on a ``SubTreeFileSystem`` rooted above it (the
data root is then a relative name, as a bucket prefix is), and on a real S3 server (moto), so
nothing may assume a local path.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from storage.artifacts.analyst_views import (
    PARTITIONS,
    RUNS,
    analyst_connection,
    run_query,
    view_names,
)
from storage.artifacts.schemas import ARTIFACTS, SCHEMA_VERSION, doc_of
from testkit.s3 import S3Server
from tests.fixtures.analyst_runs import PUBLISHED_EVENT_COUNTS, build_tree, obj
from ves.errors import InvalidRequest

Opener = Callable[[Path], duckdb.DuckDBPyConnection]


def _on_local(data_dir: Path) -> duckdb.DuckDBPyConnection:
    return analyst_connection(pafs.LocalFileSystem(), str(data_dir))


def _on_subtree(data_dir: Path) -> duckdb.DuckDBPyConnection:
    subtree = pafs.SubTreeFileSystem(str(data_dir.parent), pafs.LocalFileSystem())
    return analyst_connection(subtree, data_dir.name)


@pytest.fixture(scope="module")
def s3(s3_server: S3Server) -> pafs.S3FileSystem:
    """A client of the session's S3 server (moto's; a failure to start fails, never skips)."""
    return s3_server.filesystem()


@pytest.fixture(params=["local", "subtree", "s3"])
def open_views(request: pytest.FixtureRequest) -> Opener:
    """Build the views over a data folder, on the filesystem the test is parametrised with."""
    if request.param != "s3":
        return {"local": _on_local, "subtree": _on_subtree}[request.param]
    s3: pafs.S3FileSystem = request.getfixturevalue("s3")
    bucket = f"ves-{uuid.uuid4().hex[:16]}"

    def on_s3(data_dir: Path) -> duckdb.DuckDBPyConnection:
        s3.create_dir(bucket)
        if data_dir.exists():
            pafs.copy_files(
                str(data_dir), f"{bucket}/ves", pafs.LocalFileSystem(), destination_filesystem=s3
            )
        return analyst_connection(s3, f"{bucket}/ves")

    return on_s3


def _rows(conn: duckdb.DuckDBPyConnection, query: str) -> list[tuple[object, ...]]:
    return conn.execute(query).fetchall()


def test_events_of_every_published_run_group_by_type(open_views: Opener, data_dir: Path) -> None:
    build_tree(data_dir)
    rows = _rows(open_views(data_dir), "SELECT type, count(*) FROM events GROUP BY 1 ORDER BY 1")
    assert dict(rows) == PUBLISHED_EVENT_COUNTS  # run_c's five appear events are not counted


def test_partition_columns_come_from_the_run_folders(open_views: Opener, data_dir: Path) -> None:
    build_tree(data_dir)
    conn = open_views(data_dir)
    query = "SELECT tenant_id, video_id, run_id, count(*) FROM events GROUP BY ALL ORDER BY ALL"
    assert _rows(conn, query) == [("acme", "vid_a", "run_a", 3), ("globex", "vid_b", "run_b", 2)]
    objects = "SELECT run_id, object_id, class FROM objects WHERE tenant_id = 'globex'"
    assert _rows(conn, objects) == [("run_b", "obj_3", "text")]
    columns = [c[0] for c in conn.sql("DESCRIBE events").fetchall()]
    assert columns == [*PARTITIONS.names, *ARTIFACTS["events"].names]


def test_values_and_nested_columns_read_back(open_views: Opener, data_dir: Path) -> None:
    build_tree(data_dir)
    conn = open_views(data_dir)
    text = "SELECT event_id, t_s, end_s, evidence_ids FROM events WHERE type = 'text_seen'"
    assert _rows(conn, text) == [("evt_run_b_1", 4.0, 6.0, ["ev_run_b_1"])]
    nested = "SELECT frames[1].thumbnail, review_notes[1].text, len(frames) FROM evidence"
    assert _rows(conn, nested) == [("thumbs/a.jpg", "check", 1)]


def test_a_half_written_run_is_invisible_everywhere(open_views: Opener, data_dir: Path) -> None:
    build_tree(data_dir)
    conn = open_views(data_dir)
    for name in ARTIFACTS:
        assert _rows(conn, f"SELECT * FROM {name} WHERE run_id = 'run_c'") == [], name
    assert _rows(conn, "SELECT run_id FROM runs ORDER BY 1") == [("run_a",), ("run_b",)]


def test_runs_view_reads_the_manifests(open_views: Opener, data_dir: Path) -> None:
    build_tree(data_dir)
    conn = open_views(data_dir)
    table = run_query(conn, "SELECT * FROM runs WHERE run_id = 'run_a'")
    assert table.schema.names == RUNS.names
    (run,) = table.to_pylist()
    assert (run["tenant_id"], run["video_id"], run["schema_version"]) == (
        "acme",
        "vid_a",
        SCHEMA_VERSION,
    )
    assert run["published_at"].tzinfo is not None
    files = {f["name"]: f["rows"] for f in run["files"]}
    assert files == {"events.parquet": 3, "objects.parquet": 2, "evidence.parquet": 1}


def test_every_view_exists_with_its_columns_on_an_empty_tree(
    open_views: Opener, data_dir: Path
) -> None:
    conn = open_views(data_dir)  # no artifacts folder at all
    assert view_names(conn) == sorted([*ARTIFACTS, "runs"])
    for name, schema in [*ARTIFACTS.items(), ("runs", RUNS)]:
        table = run_query(conn, f"SELECT * FROM {name}")
        expected = schema.names if name == "runs" else [*PARTITIONS.names, *schema.names]
        assert (table.num_rows, table.column_names) == (0, expected), name


def test_an_artifact_no_run_wrote_is_an_empty_view(data_dir: Path) -> None:
    build_tree(data_dir)
    assert _rows(_on_local(data_dir), "SELECT count(*) FROM frames") == [(0,)]


def test_bad_sql_is_an_invalid_request_of_one_line(data_dir: Path) -> None:
    conn = _on_local(data_dir)
    for query in ["SELEC 1", "SELECT nope FROM events", "SELECT * FROM missing"]:
        with pytest.raises(InvalidRequest) as raised:
            run_query(conn, query)
        assert "\n" not in raised.value.detail and raised.value.detail, query


def test_every_table_and_column_says_what_it_means() -> None:
    def undocumented(fields: list[object], prefix: str) -> list[str]:
        missing = []
        for field in fields:
            assert isinstance(field, pa.Field)
            missing += [] if doc_of(field) else [prefix + field.name]
            item = getattr(field.type, "value_type", field.type)
            if isinstance(item, pa.StructType):
                missing += undocumented(list(item), f"{prefix}{field.name}[].")
        return missing

    for name, schema in [*ARTIFACTS.items(), ("runs", RUNS)]:
        assert doc_of(schema), f"table {name} has no doc"
        assert undocumented(list(schema), f"{name}.") == []


def test_the_manifest_names_the_files_a_view_reads(data_dir: Path) -> None:
    """A Parquet file the manifest does not list (a stray upload) is not read."""
    build_tree(data_dir)
    run_a = data_dir / "artifacts/tenant=acme/video=vid_a/run=run_a"
    (run_a / "frames.parquet").write_bytes((run_a / "events.parquet").read_bytes())
    assert _rows(_on_local(data_dir), "SELECT count(*) FROM frames") == [(0,)]
    manifest = json.loads((run_a / "manifest.json").read_text())
    assert "frames.parquet" not in [f["name"] for f in manifest["files"]]


def _publish_objects(data_dir: Path, run: str, objects: pa.Table, version: int) -> None:
    """A published run of acme holding only ``objects.parquet``, written as it is."""
    folder = data_dir / "artifacts" / "tenant=acme" / f"video=vid_{run}" / f"run={run}"
    folder.mkdir(parents=True)
    path = folder / "objects.parquet"
    pq.write_table(objects, path)
    file = {"name": path.name, "bytes": path.stat().st_size, "sha256": "x", "rows": len(objects)}
    manifest = {"tenant_id": "acme", "video_id": f"vid_{run}", "run_id": run, "files": [file]}
    stamp = {"schema_version": version, "published_at": "2026-01-01T00:00:00Z"}
    (folder / "manifest.json").write_text(json.dumps(manifest | stamp))


def test_people_and_appearances_count_over_new_and_older_runs(data_dir: Path) -> None:
    """The how-to's query: a run of schema version 4 (one person who came back: two objects of
    one identity, and a second person) next to a run written before identities existed (its
    objects file has no identity columns: they read as null, each object counts once)."""
    people = [
        obj("obj_4", "person", 1.0, 5.0) | {"identity_id": "idn_1", "appearance": 1},
        obj("obj_5", "person", 2.0, 6.0) | {"identity_id": "idn_2", "appearance": 1},
        obj("obj_6", "person", 9.0, 12.0) | {"identity_id": "idn_1", "appearance": 2},
    ]
    table = pa.Table.from_pylist(people, schema=ARTIFACTS["objects"])
    _publish_objects(data_dir, "run_d", table, SCHEMA_VERSION)
    older = table.drop_columns(["identity_id", "appearance", "appearances"])
    _publish_objects(data_dir, "run_e", older, 3)
    query = (
        "SELECT run_id, count(DISTINCT coalesce(identity_id, object_id)) AS people, "
        "count(*) AS appearances FROM objects WHERE class = 'person' GROUP BY 1 ORDER BY 1"
    )
    assert _rows(_on_local(data_dir), query) == [("run_d", 2, 3), ("run_e", 3, 3)]
