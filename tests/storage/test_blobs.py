"""The blob store behaves the same on the local folder and on a real S3 server (moto)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storage.artifacts.blobs import BlobStore, LocalBlobStore, S3BlobStore
from testkit.s3 import S3Server
from ves.errors import BlobNotFound, StorageUnavailable


@pytest.fixture
def store(any_store: BlobStore) -> BlobStore:
    return any_store


def test_bytes_and_files_round_trip(store: BlobStore, tmp_path: Path) -> None:
    store.put_bytes(b"hello", "a/b/hello.txt")
    local = tmp_path / "big.bin"
    local.write_bytes(b"x" * 3_000_000)
    store.put_file(local, "a/c/big.bin")
    assert store.get_bytes("a/b/hello.txt") == b"hello"
    assert (store.size("a/c/big.bin"), store.exists("a/b/nope")) == (3_000_000, False)
    assert [(b.key, b.size) for b in store.list("a")] == [
        ("a/b/hello.txt", 5),
        ("a/c/big.bin", 3_000_000),
    ]
    store.download("a/c/big.bin", tmp_path / "back.bin")
    assert (tmp_path / "back.bin").read_bytes() == local.read_bytes()
    with store.open_input("a/b/hello.txt") as stream:
        assert stream.read(2) == b"he"
    assert b"".join(store.iter_bytes("a/b/hello.txt", chunk=2)) == b"hello"


def test_put_file_with_move_leaves_no_local_copy(store: BlobStore, tmp_path: Path) -> None:
    local = tmp_path / "upload.part"
    local.write_bytes(b"bytes")
    store.put_file(local, "uploads/x.mp4", move=True)
    assert not local.exists() and store.get_bytes("uploads/x.mp4") == b"bytes"


def test_missing_keys_are_blob_not_found(store: BlobStore, tmp_path: Path) -> None:
    for read in (
        lambda: store.get_bytes("no/such"),
        lambda: store.download("no/such", tmp_path / "x"),
        lambda: next(store.iter_bytes("no/such")),
        lambda: store.read_parquet("no/such.parquet"),
    ):
        with pytest.raises(BlobNotFound):
            read()
    assert store.size("no/such") is None and store.list("no") == []


def test_delete_prefix_removes_everything_under_it_only(store: BlobStore) -> None:
    for key in ("artifacts/t/v/run=1/a", "artifacts/t/v/run=1/thumbs/b", "artifacts/t/v/run=2/a"):
        store.put_bytes(b"1", key)
    assert store.delete_prefix("artifacts/t/v/run=1")
    assert not store.delete_prefix("artifacts/t/v/run=1")
    assert [b.key for b in store.list("artifacts")] == ["artifacts/t/v/run=2/a"]
    store.delete("artifacts/t/v/run=2/a")
    store.delete("artifacts/t/v/run=2/a")  # deleting nothing is fine
    assert store.list("artifacts") == []


def test_pyarrow_reads_through_filesystem_and_path(store: BlobStore) -> None:
    table = pa.table({"x": [1, 2, 3]})
    store.filesystem.create_dir(store.path("t"))
    pq.write_table(table, store.path("t/x.parquet"), filesystem=store.filesystem)
    assert store.read_parquet("t/x.parquet").equals(table)
    assert store.artifacts_root == store.path("artifacts")


@pytest.mark.parametrize("key", ["", "/abs", "a/../b", "a//b", "./a"])
def test_keys_that_could_escape_the_root_are_refused(store: BlobStore, key: str) -> None:
    with pytest.raises(ValueError, match="not a blob key"):
        store.path(key)


def test_catalog_locations_map_to_keys(tmp_path: Path) -> None:
    local = LocalBlobStore(tmp_path)
    assert local.key_of("artifacts/tenant=t/run=r") == "artifacts/tenant=t/run=r"
    assert local.key_of(str(tmp_path / "artifacts" / "run=r")) == "artifacts/run=r"
    assert local.key_of("/elsewhere/run=r") is None and local.key_of(str(tmp_path)) is None
    assert local.key_of("../up") is None


def test_presigned_urls_fetch_the_object_without_credentials(s3_store: S3BlobStore) -> None:
    s3_store.put_bytes(b"jpeg", "thumbs/a.jpg")
    url = s3_store.presign("thumbs/a.jpg", expires_s=60)
    assert url is not None and httpx.get(url).content == b"jpeg"
    assert LocalBlobStore(Path("/tmp")).presign("thumbs/a.jpg") is None


def test_an_unreachable_store_is_storage_unavailable(s3_server: S3Server) -> None:
    target = s3_server.target("no-such-bucket-here")
    with pytest.raises(StorageUnavailable):
        S3BlobStore(target).put_bytes(b"x", "a")
