"""Where a run's artifacts live, how they are written, and how they are published.

A run writes into its work folder ``<work>/<run_id>/out`` on the worker's own disk (scratch such
as a downloaded source goes to ``.../scratch``). Only when every task succeeded is ``out``
published to the run's key in the blob store, ``artifacts/tenant=<t>/video=<v>/run=<r>/``, with a
``manifest.json`` (file names, row counts, sizes, sha256):

- on the local store by one rename of the folder, manifest inside (readers see all or nothing);
- on an object store, which has no rename, by uploading every file and the manifest LAST.

Either way a run is readable only once its manifest exists and every file it lists has the listed
size (``verify_published``), so a reader never serves half a run. A run that dies leaves its
work folder and perhaps some uploads without a manifest; both are removed when the run is marked
failed, and the retention sweep deletes manifest-less prefixes that outlived that.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from storage.artifacts.blobs import BlobStore
from storage.artifacts.schemas import ARTIFACTS, SCHEMA_VERSION
from ves.clock import now_rfc3339
from ves.errors import BlobNotFound, NotReady, StorageUnavailable

MANIFEST = "manifest.json"
COST = "cost.json"
THUMBS = "thumbs"
REVIEW_COPY = "review.mp4"  # the video as every browser plays it (tasks/review); not evidence
ARTIFACTS_TOP = "artifacts"  # the first part of every artifact key


def run_key(tenant_id: str, video_id: str, run_id: str) -> str:
    """The key of a run's published artifacts in the blob store (what the catalog records)."""
    return f"{ARTIFACTS_TOP}/tenant={tenant_id}/video={video_id}/run={run_id}"


@dataclass(frozen=True)
class RunLayout:
    """The work folders of one run (worker-local) and its key in the blob store."""

    work_root: Path  # ``settings.work_root``
    tenant_id: str
    video_id: str
    run_id: str

    @property
    def work_dir(self) -> Path:
        return self.work_root / self.run_id

    @property
    def out_dir(self) -> Path:
        """Where tasks write what will be published."""
        return self.work_dir / "out"

    @property
    def scratch_dir(self) -> Path:
        """Where tasks keep what is never published (downloaded source, sampled frames)."""
        return self.work_dir / "scratch"

    @property
    def final_key(self) -> str:
        return run_key(self.tenant_id, self.video_id, self.run_id)

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
    """Where the artifact ``name`` (a key of ``schemas.ARTIFACTS``) lives in a run."""
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
    path.write_bytes(json_bytes(document))


def json_bytes(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()


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


def publish(layout: RunLayout, store: BlobStore) -> str:
    """Publish the run's output to its key, manifest last; return the key.

    The local store gets the folder in one rename when the work folder is on the same
    filesystem; otherwise (an object store, or a work disk of its own) every file is put and the
    manifest after them, so the run becomes readable only once it is whole.
    """
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
    key = layout.final_key
    if not _rename_into_place(out, manifest, store.local_path(key)):
        for entry in files:
            store.put_file(out / entry["name"], f"{key}/{entry['name']}")
        store.put_bytes(json_bytes(manifest), f"{key}/{MANIFEST}")
    layout.discard()
    return key


def _rename_into_place(out: Path, manifest: dict[str, Any], final: Path | None) -> bool:
    """The local store's publish: manifest into ``out``, ``out`` renamed to ``final``."""
    if final is None:
        return False
    write_json(out / MANIFEST, manifest)
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        out.rename(final)
    except OSError:  # another filesystem (VES_WORK_DIR elsewhere) or a leftover folder
        (out / MANIFEST).unlink()
        return False
    return True


def discard_run(layout: RunLayout, store: BlobStore) -> None:
    """Remove what a failed run leaves: its work folder and anything it uploaded.

    A failed run is never served, so its prefix goes whether or not the manifest made it (a
    run can fail after publishing, when the reaper gave up on it first). A store that cannot
    delete now leaves the prefix to the retention sweep's orphan pass.
    """
    layout.discard()
    with suppress(StorageUnavailable):
        store.delete_prefix(layout.final_key)


def read_manifest(store: BlobStore, key: str) -> dict[str, Any]:
    """The manifest of a published run.

    Raises:
        NotReady: the run has no manifest (never published, being published, or deleted).
    """
    try:
        manifest: dict[str, Any] = json.loads(store.get_bytes(f"{key}/{MANIFEST}"))
    except BlobNotFound as exc:
        raise NotReady("the run's artifacts are not (or no longer) published") from exc
    return manifest


def verify_published(store: BlobStore, key: str) -> dict[str, Any]:
    """The manifest of a run whose every listed file is there with the listed size.

    Raises:
        NotReady: no manifest, or a file missing or of another size (half a run is never read).
    """
    manifest = read_manifest(store, key)
    sizes = {blob.key: blob.size for blob in store.list(key)}
    for entry in manifest["files"]:
        if sizes.get(f"{key}/{entry['name']}") != int(entry["bytes"]):
            raise NotReady(f"the run's artifacts are incomplete ({entry['name']}); run it again")
    return manifest


def published_bytes(store: BlobStore, key: str) -> int:
    """Bytes a published run keeps in the store: every file its manifest lists, and the
    manifest."""
    manifest = read_manifest(store, key)
    listed = sum(int(f["bytes"]) for f in manifest["files"])
    return listed + (store.size(f"{key}/{MANIFEST}") or 0)


def read_published_rows(store: BlobStore, key: str, name: str) -> list[dict[str, Any]]:
    """Every row of a published run's artifact ``name`` (read straight from the store)."""
    rows: list[dict[str, Any]] = store.read_parquet(f"{key}/{name}.parquet").to_pylist()
    return rows
