"""Uploaded recordings: streamed to a local file, measured and hashed on the way, then stored.

The bytes go to a private temporary file in a local staging folder and are put into the blob
store (``uploads/tenant=<t>/video=<v>/source-...``) only when their size and SHA-256 match what
was declared, so a failed or concurrent upload never leaves a half-written source behind and can
simply be retried. On the local store the staging folder sits in the data folder, so "putting"
is one rename, as before the store existed.

A file the service already holds (the demo clip) is stored the same way without a client:
``stage_copy`` takes a private copy (a hard link when it can) and hashes it, ``publish_staged``
puts it under the video's key once the video exists.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shutil
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from storage.artifacts.blobs import BlobStore
from storage.artifacts.layout import sha256_file
from ves.errors import PayloadTooLarge, ValidationFailed

_SAFE_SUFFIX = re.compile(r"^\.[a-z0-9]{1,5}$")


@dataclass(frozen=True)
class StoredUpload:
    """A verified upload in the blob store (``key``)."""

    key: str
    sha256: str
    size: int


@dataclass(frozen=True)
class StagedUpload:
    """A verified local copy of a source, waiting for its video (``publish_staged``)."""

    path: Path
    sha256: str
    size: int


@dataclass(frozen=True)
class UploadExpectation:
    """What the client declared about the bytes, and the operator's size limit."""

    size: int
    sha256: str | None
    limit: int


def upload_key(tenant_id: str, video_id: str, filename: str) -> str:
    """A fresh key for one upload attempt of a video's source.

    Each attempt gets its own name, so two racing uploads never overwrite each other's bytes: the
    catalog records the path of the attempt that completed, and the loser deletes its file.
    The suffix of the client's filename is kept only when it is plainly safe.
    """
    suffix = Path(filename).suffix.lower()
    name = f"source-{uuid.uuid4().hex[:12]}" + (suffix if _SAFE_SUFFIX.match(suffix) else ".bin")
    return f"uploads/tenant={tenant_id}/video={video_id}/{name}"


async def store_upload(
    chunks: AsyncIterator[bytes],
    store: BlobStore,
    key: str,
    expect: UploadExpectation,
    staging: Path,
) -> StoredUpload:
    """Put ``chunks`` under ``key`` if they are exactly the declared bytes.

    Args:
        staging: a local folder for the temporary file (the data folder's ``uploads``).

    Raises:
        PayloadTooLarge: more bytes than the operator's limit.
        ValidationFailed: more or fewer bytes than declared, or another SHA-256.
    """
    staging.mkdir(parents=True, exist_ok=True)
    temp = staging / f".{uuid.uuid4().hex}.part"
    try:
        digest, size = await _write_chunks(chunks, temp, expect)
        _check_complete(size, digest, expect)
        await asyncio.to_thread(store.put_file, temp, key, move=True)
    finally:
        temp.unlink(missing_ok=True)
    return StoredUpload(key, digest, size)


async def _write_chunks(
    chunks: AsyncIterator[bytes], temp: Path, expect: UploadExpectation
) -> tuple[str, int]:
    hasher = hashlib.sha256()
    size = 0
    with temp.open("wb") as out:
        async for chunk in chunks:
            size += len(chunk)
            if size > expect.limit:
                raise PayloadTooLarge(f"the upload exceeds the limit of {expect.limit} bytes")
            if size > expect.size:
                raise ValidationFailed(
                    f"received more than the declared {expect.size} bytes",
                    errors=[{"loc": ["body"], "msg": "more bytes than size_bytes declared"}],
                )
            hasher.update(chunk)
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    return hasher.hexdigest(), size


def _check_complete(size: int, digest: str, expect: UploadExpectation) -> None:
    if size != expect.size:
        raise ValidationFailed(
            f"received {size} bytes but {expect.size} were declared; the upload may be retried",
            errors=[{"loc": ["body"], "msg": "size does not match size_bytes"}],
        )
    if expect.sha256 is not None and digest != expect.sha256.lower():
        raise ValidationFailed(
            f"the bytes have SHA-256 {digest}, not the declared one; the upload may be retried",
            errors=[{"loc": ["body"], "msg": "sha256 does not match"}],
        )


def stage_copy(source: Path, uploads_dir: Path) -> StagedUpload:
    """A private copy of the local file ``source`` in ``uploads_dir``, measured and hashed.

    It is a hard link when the filesystem allows one (no bytes copied; nothing ever rewrites an
    upload or the source in place, they are only replaced by rename or deleted), else a copy.
    Being our own name for the bytes, it is hashed without racing a rename of ``source``. Publish
    it with ``publish_staged``; delete it (``path.unlink``) if that never happens.
    """
    uploads_dir.mkdir(parents=True, exist_ok=True)
    staged = uploads_dir / f".staged-{uuid.uuid4().hex}{source.suffix}"
    try:
        try:
            os.link(source, staged)
        except OSError:  # another filesystem, or no hard links there
            shutil.copyfile(source, staged)
        return StagedUpload(staged, sha256_file(staged), staged.stat().st_size)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise


def publish_staged(staged: StagedUpload, store: BlobStore, key: str) -> StoredUpload:
    """Move a ``stage_copy`` to ``key`` (from ``upload_key``), whole or not at all."""
    store.put_file(staged.path, key, move=True)
    return StoredUpload(key, staged.sha256, staged.size)
