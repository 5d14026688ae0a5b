"""Uploads are all-or-nothing: the declared bytes in the store, or no object and no file at all
(on the local folder and on S3)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from storage.artifacts.blobs import BlobStore, LocalBlobStore
from storage.artifacts.uploads import (
    UploadExpectation,
    publish_staged,
    stage_copy,
    store_upload,
    upload_key,
)
from ves.errors import PayloadTooLarge, ValidationFailed

PAYLOAD = bytes(range(256)) * 1000


async def _chunks(data: bytes, size: int = 4096) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


KEY = "uploads/tenant=t/video=v/source.mp4"


@pytest.fixture
def store(any_store: BlobStore) -> BlobStore:
    return any_store


def _store(data: bytes, store: BlobStore, staging: Path, expect: UploadExpectation):  # type: ignore[no-untyped-def]
    return asyncio.run(store_upload(_chunks(data), store, KEY, expect, staging))


def test_matching_bytes_are_published(store: BlobStore, tmp_path: Path) -> None:
    digest = hashlib.sha256(PAYLOAD).hexdigest()
    staging = tmp_path / "staging"
    expect = UploadExpectation(len(PAYLOAD), digest.upper(), 10**9)
    stored = _store(PAYLOAD, store, staging, expect)
    assert store.get_bytes(KEY) == PAYLOAD
    assert (stored.key, stored.sha256, stored.size) == (KEY, digest, len(PAYLOAD))
    assert [b.key for b in store.list("uploads")] == [KEY]
    assert list(staging.iterdir()) == []


@pytest.mark.parametrize(
    ("data", "expect", "error"),
    [
        (PAYLOAD[:-1], UploadExpectation(len(PAYLOAD), None, 10**9), ValidationFailed),
        (PAYLOAD + b"x", UploadExpectation(len(PAYLOAD), None, 10**9), ValidationFailed),
        (PAYLOAD, UploadExpectation(len(PAYLOAD), "0" * 64, 10**9), ValidationFailed),
        (PAYLOAD, UploadExpectation(len(PAYLOAD), None, 1000), PayloadTooLarge),
    ],
    ids=["short", "long", "wrong-sha", "over-limit"],
)
def test_mismatches_leave_no_file(
    store: BlobStore,
    tmp_path: Path,
    data: bytes,
    expect: UploadExpectation,
    error: type[Exception],
) -> None:
    staging = tmp_path / "staging"
    with pytest.raises(error):
        _store(data, store, staging, expect)
    assert store.list("uploads") == [] and list(staging.iterdir()) == []


def test_upload_keys_are_unique_and_keep_only_safe_suffixes() -> None:
    first = upload_key("ten_a", "vid_b", "clip.MP4")
    second = upload_key("ten_a", "vid_b", "clip.mp4")
    assert first != second and first.endswith(".mp4")
    assert first.startswith("uploads/tenant=ten_a/video=vid_b/source-")
    assert upload_key("t", "v", "../../evil.sh;rm").endswith(".bin")


def test_a_staged_copy_is_hashed_then_published_as_a_hard_link(tmp_path: Path) -> None:
    source = tmp_path / "cache" / "demo.mp4"
    source.parent.mkdir()
    source.write_bytes(PAYLOAD)
    staged = stage_copy(source, tmp_path / "uploads")
    source.unlink()  # the cache may be replaced meanwhile; the staged copy keeps its bytes
    store = LocalBlobStore(tmp_path)
    key = upload_key("ten_x", "vid_y", "demo.mp4")
    stored = publish_staged(staged, store, key)
    assert stored.key == key and store.local_path(key).read_bytes() == PAYLOAD
    assert (stored.sha256, stored.size) == (hashlib.sha256(PAYLOAD).hexdigest(), len(PAYLOAD))
    assert not staged.path.exists()


def test_a_staged_copy_shares_the_source_inode(tmp_path: Path) -> None:
    source = tmp_path / "demo.mp4"
    source.write_bytes(PAYLOAD)
    staged = stage_copy(source, tmp_path / "uploads")
    assert staged.path.stat().st_ino == source.stat().st_ino
