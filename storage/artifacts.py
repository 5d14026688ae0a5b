"""Where a run's artifacts live, how they are written, and how they are published atomically.

A run writes into ``<data>/work/<run_id>/out`` (scratch such as a downloaded source goes to
``.../scratch``). Only when every task succeeded is ``out`` given a ``manifest.json`` (file names,
row counts, sizes, sha256) and renamed in one step to its Hive-style place,
``<data>/artifacts/tenant=<t>/video=<v>/run=<r>/``. Readers only ever see complete runs; a run
that dies leaves its work folder, which is swept when the run is marked failed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from storage.schemas import ARTIFACTS, SCHEMA_VERSION
from ves.clock import now_rfc3339

MANIFEST = "manifest.json"
COST = "cost.json"
THUMBS = "thumbs"


@dataclass(frozen=True)
class RunLayout:
    """The folders of one run."""

    data_dir: Path
    tenant_id: str
    video_id: str
    run_id: str

    @property
    def work_dir(self) -> Path:
        return self.data_dir / "work" / self.run_id

    @property
    def out_dir(self) -> Path:
        """Where tasks write what will be published."""
        return self.work_dir / "out"

    @property
    def scratch_dir(self) -> Path:
        """Where tasks keep what is never published (downloaded source, sampled frames)."""
        return self.work_dir / "scratch"

    @property
    def final_dir(self) -> Path:
        return (
            self.data_dir
            / "artifacts"
            / f"tenant={self.tenant_id}"
            / f"video={self.video_id}"
            / f"run={self.run_id}"
        )

    def prepare(self) -> None:
        """Start from empty work folders (a retried flow must not see a half-written try)."""
        shutil.rmtree(self.work_dir, ignore_errors=True)
        self.out_dir.mkdir(parents=True)
        self.scratch_dir.mkdir(parents=True)

    def discard(self) -> None:
        """Remove the work folders (after publishing, or when the run failed)."""
        shutil.rmtree(self.work_dir, ignore_errors=True)


def to_table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Rows as a table of the artifact's one schema (unknown columns are an error)."""
    schema = ARTIFACTS[name]
    return pa.Table.from_pylist(rows, schema=schema)


def artifact_path(run_dir: Path, name: str) -> Path:
    """Where the artifact ``name`` (a key of ``storage.schemas.ARTIFACTS``) lives in a run."""
    if name not in ARTIFACTS:
        raise ValueError(f"not an artifact: {name}")
    return run_dir / f"{name}.parquet"


def read_table(run_dir: Path, name: str, columns: list[str] | None = None) -> pa.Table:
    """The artifact ``name`` of a run (being written or published), in its one schema."""
    return pq.read_table(artifact_path(run_dir, name), columns=columns)


def read_rows(run_dir: Path, name: str) -> list[dict[str, Any]]:
    """Every row of the artifact ``name`` as dicts."""
    rows: list[dict[str, Any]] = read_table(run_dir, name).to_pylist()
    return rows


def write_table(out_dir: Path, name: str, table: pa.Table) -> Path:
    """Write ``table`` as ``<name>.parquet``, cast to the artifact's schema."""
    path = artifact_path(out_dir, name)
    pq.write_table(table.cast(ARTIFACTS[name]), path, compression="zstd")
    return path


def write_rows(out_dir: Path, name: str, rows: list[dict[str, Any]]) -> Path:
    """Write rows as ``<name>.parquet``."""
    return write_table(out_dir, name, to_table(name, rows))


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write a JSON document with sorted keys (stable bytes, stable hashes)."""
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _manifest_entry(out_dir: Path, path: Path) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": path.relative_to(out_dir).as_posix(),
        "bytes": path.stat().st_size,
        "sha256": sha256_file(path),
    }
    if path.suffix == ".parquet":
        entry["rows"] = pq.ParquetFile(path).metadata.num_rows
    return entry


def publish(layout: RunLayout) -> Path:
    """Write the manifest and move the run's output into place in one rename."""
    out = layout.out_dir
    files = [_manifest_entry(out, p) for p in sorted(out.rglob("*")) if p.is_file()]
    manifest = {
        "run_id": layout.run_id,
        "video_id": layout.video_id,
        "tenant_id": layout.tenant_id,
        "schema_version": SCHEMA_VERSION,
        "published_at": now_rfc3339(),
        "files": files,
    }
    write_json(out / MANIFEST, manifest)
    layout.final_dir.parent.mkdir(parents=True, exist_ok=True)
    out.rename(layout.final_dir)
    layout.discard()
    return layout.final_dir


def published_bytes(run_dir: Path) -> int:
    """Bytes a published run keeps on disk: every file its manifest lists, and the manifest."""
    manifest = json.loads((run_dir / MANIFEST).read_text())
    listed = sum(int(f["bytes"]) for f in manifest["files"])
    return listed + (run_dir / MANIFEST).stat().st_size
