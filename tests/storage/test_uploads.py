"""Uploads are all-or-nothing: the declared bytes in place, or no file at all."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from storage.uploads import (
    UploadExpectation,
    publish_staged,
    stage_copy,
    store_upload,
    upload_path,
)
from ves.errors import PayloadTooLarge, ValidationFailed

PAYLOAD = bytes(range(256)) * 1000


async def _chunks(data: bytes, size: int = 4096) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _store(data: bytes, dest: Path, expect: UploadExpectation):  # type: ignore[no-untyped-def]
    return asyncio.run(store_upload(_chunks(data), dest, expect))


def test_matching_bytes_are_published(tmp_path: Path) -> None:
    dest = tmp_path / "v" / "source.mp4"
    digest = hashlib.sha256(PAYLOAD).hexdigest()
    stored = _store(PAYLOAD, dest, UploadExpectation(len(PAYLOAD), digest.upper(), 10**9))
    assert dest.read_bytes() == PAYLOAD
    assert (stored.sha256, stored.size) == (digest, len(PAYLOAD))
    assert list(dest.parent.iterdir()) == [dest]


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
    tmp_path: Path, data: bytes, expect: UploadExpectation, error: type[Exception]
) -> None:
    dest = tmp_path / "v" / "source.mp4"
    with pytest.raises(error):
        _store(data, dest, expect)
    assert list(dest.parent.iterdir()) == []


def test_upload_paths_are_unique_and_keep_only_safe_suffixes(tmp_path: Path) -> None:
    first = upload_path(tmp_path, "ten_a", "vid_b", "clip.MP4")
    second = upload_path(tmp_path, "ten_a", "vid_b", "clip.mp4")
    assert first != second and first.suffix == ".mp4"
    assert first.parent == tmp_path / "tenant=ten_a" / "video=vid_b"
    assert upload_path(tmp_path, "t", "v", "../../evil.sh;rm").suffix == ".bin"


def test_a_staged_copy_is_hashed_then_published_as_a_hard_link(tmp_path: Path) -> None:
    source = tmp_path / "cache" / "demo.mp4"
    source.parent.mkdir()
    source.write_bytes(PAYLOAD)
    staged = stage_copy(source, tmp_path / "uploads")
    source.unlink()  # the cache may be replaced meanwhile; the staged copy keeps its bytes
    dest = upload_path(tmp_path / "uploads", "ten_x", "vid_y", "demo.mp4")
    stored = publish_staged(staged, dest)
    assert stored.path == dest and dest.read_bytes() == PAYLOAD
    assert (stored.sha256, stored.size) == (hashlib.sha256(PAYLOAD).hexdigest(), len(PAYLOAD))
    assert not staged.path.exists()


def test_a_staged_copy_shares_the_source_inode(tmp_path: Path) -> None:
    source = tmp_path / "demo.mp4"
    source.write_bytes(PAYLOAD)
    staged = stage_copy(source, tmp_path / "uploads")
    assert staged.path.stat().st_ino == source.stat().st_ino
