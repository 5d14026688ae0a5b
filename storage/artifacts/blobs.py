"""Blob storage: where uploads, downloaded sources, thumbnails and artifacts live.

One small interface over ``pyarrow.fs`` with two homes, chosen by ``settings.storage_url``:

- unset: ``LocalBlobStore`` on the data folder, exactly the layout of the service before the
  store existed (``<data>/uploads/...``, ``<data>/artifacts/...``), so existing installs keep
  working and a published run can still be moved into place by one rename;
- ``s3://bucket/prefix``: ``S3BlobStore`` on any S3-compatible object store, so workers on other
  machines share no disk. Object stores have no rename: runs publish by writing their manifest
  last (``storage/artifacts/layout.py``).

Everything is addressed by a *key*, a relative POSIX path such as
``artifacts/tenant=t/video=v/run=r/events.parquet``; the catalog records keys, never a machine's
paths. ``filesystem`` and ``path(key)`` hand the same bytes to pyarrow (Parquet, datasets) without
copying. pyarrow's and botocore's errors become ``BlobNotFound`` or ``StorageUnavailable`` in one
place, ``_translated``.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from ves.errors import BlobNotFound, StorageUnavailable
from ves.settings import Settings

TRASH = ".expired"  # local store: where a prefix goes (one rename) before it is deleted
_CHUNK = 1 << 20


@dataclass(frozen=True)
class BlobInfo:
    """One object of the store."""

    key: str
    size: int
    modified: datetime | None


@contextmanager
def _translated(key: str) -> Iterator[None]:
    """The one place pyarrow's and botocore's errors become the service's."""
    from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped]

    try:
        yield
    except FileNotFoundError as exc:
        raise BlobNotFound(f"the blob store holds no {key}") from exc
    except (OSError, pa.ArrowException, BotoCoreError, ClientError) as exc:
        raise StorageUnavailable(f"the blob store failed on {key}: {exc}") from exc


def check_key(key: str) -> str:
    """``key`` if it is a plain relative key (no ``..``, no leading ``/``, no empty part)."""
    parts = key.split("/")
    if not key or key.startswith("/") or any(p in {"", ".", ".."} for p in parts):
        raise ValueError(f"not a blob key: {key!r}")
    return key


class BlobStore:
    """Keys to bytes on a ``pyarrow.fs`` filesystem under ``root``.

    The generic operations work on any pyarrow filesystem; the two subclasses add what only their
    home can do well (the local store's atomic renames, the object store's presigned URLs).
    """

    def __init__(self, filesystem: pafs.FileSystem, root: str) -> None:
        self.filesystem = filesystem
        self.root = root.rstrip("/")

    def path(self, key: str) -> str:
        """The path of ``key`` on ``filesystem`` (for pyarrow and DuckDB)."""
        return f"{self.root}/{check_key(key)}"

    @property
    def artifacts_root(self) -> str:
        """The path of the Hive-partitioned artifact tree on ``filesystem``."""
        return self.path("artifacts")

    def local_path(self, key: str) -> Path | None:
        """The key's file on this machine, when the store is a local folder."""
        return None

    def key_of(self, recorded: str) -> str | None:
        """The key of a location recorded in the catalog, None if it is not in this store.

        New rows hold keys; rows written before the store held absolute local paths, which only
        the local store can still resolve.
        """
        if recorded.startswith("/"):
            return None
        try:
            return check_key(recorded.rstrip("/"))
        except ValueError:
            return None

    def put_file(self, local: Path, key: str, *, move: bool = False) -> None:
        """Store the local file under ``key`` (the object appears whole or not at all)."""
        with _translated(key):
            pafs.copy_files(
                str(local),
                self.path(key),
                source_filesystem=pafs.LocalFileSystem(),
                destination_filesystem=self.filesystem,
            )
        if move:
            local.unlink(missing_ok=True)

    def put_bytes(self, data: bytes, key: str) -> None:
        with _translated(key), self.filesystem.open_output_stream(self.path(key)) as out:
            out.write(data)

    def get_bytes(self, key: str) -> bytes:
        with _translated(key), self.filesystem.open_input_stream(self.path(key)) as stream:
            data: bytes = stream.read()
            return data

    @contextmanager
    def open_input(self, key: str) -> Iterator[Any]:
        """A readable stream of the object (``read(n)``), closed when the block ends."""
        with _translated(key), self.filesystem.open_input_stream(self.path(key)) as stream:
            yield stream

    def open_random(self, key: str) -> Any:
        """A seekable file of the object (``seek``, ``tell``, ``read``: a zip can be read from
        it without fetching the whole object); the caller closes it."""
        with _translated(key):
            return self.filesystem.open_input_file(self.path(key))

    def iter_bytes(self, key: str, chunk: int = _CHUNK) -> Iterator[bytes]:
        """The object in chunks (for streaming responses). A missing key fails at the first
        ``next()``, so a caller can take one chunk before it starts answering."""
        stream = self._open_stream(key)
        try:
            while block := stream.read(chunk):
                yield block
        finally:
            stream.close()

    def _open_stream(self, key: str) -> Any:
        with _translated(key):
            return self.filesystem.open_input_stream(self.path(key))

    def read_parquet(self, key: str, columns: list[str] | None = None) -> pa.Table:
        """A Parquet object as an Arrow table (pyarrow reads it through ``filesystem``)."""
        import pyarrow.parquet as pq

        with _translated(key):
            return pq.read_table(self.path(key), columns=columns, filesystem=self.filesystem)

    def download(self, key: str, local: Path) -> None:
        """Copy the object to the local file (renamed into place once complete)."""
        local.parent.mkdir(parents=True, exist_ok=True)
        temp = local.with_name(f".{uuid.uuid4().hex}.part")
        try:
            with _translated(key):
                pafs.copy_files(
                    self.path(key),
                    str(temp),
                    source_filesystem=self.filesystem,
                    destination_filesystem=pafs.LocalFileSystem(),
                )
            temp.replace(local)
        finally:
            temp.unlink(missing_ok=True)

    def size(self, key: str) -> int | None:
        """Bytes of the object, None when there is none."""
        with _translated(key):
            info = self.filesystem.get_file_info(self.path(key))
        return info.size if info.type == pafs.FileType.File else None

    def exists(self, key: str) -> bool:
        return self.size(key) is not None

    def list(self, prefix: str) -> list[BlobInfo]:
        """Every object under ``prefix`` (recursively), keys in order."""
        base = self.path(prefix) if prefix else self.root
        selector = pafs.FileSelector(base, recursive=True, allow_not_found=True)
        with _translated(prefix):
            infos = self.filesystem.get_file_info(selector)
        start = len(self.root) + 1
        found = [
            BlobInfo(i.path[start:], i.size or 0, i.mtime)
            for i in infos
            if i.type == pafs.FileType.File
        ]
        return sorted(found, key=lambda b: b.key)

    def delete(self, key: str) -> None:
        """Delete one object (nothing happens when there is none)."""
        if self.exists(key):
            with _translated(key):
                self.filesystem.delete_file(self.path(key))

    def delete_prefix(self, prefix: str) -> bool:
        """Delete every object under ``prefix``; False when there was none."""
        with _translated(prefix):
            if self.filesystem.get_file_info(self.path(prefix)).type == pafs.FileType.NotFound:
                return False
            self.filesystem.delete_dir(self.path(prefix))
        return True

    def empty_trash(self, top: str) -> None:
        """Finish deletions a crash interrupted (only the local store moves things aside)."""

    def presign(self, key: str, expires_s: int = 300) -> str | None:
        """A URL a client may GET the object from without a key; None if the store gives none."""
        return None


class LocalBlobStore(BlobStore):
    """The data folder: renames are atomic, so writes and deletions are all-or-nothing."""

    def __init__(self, root: Path) -> None:
        self.local_root = root.resolve()
        super().__init__(pafs.LocalFileSystem(), self.local_root.as_posix())

    def local_path(self, key: str) -> Path:
        return self.local_root / check_key(key)

    def key_of(self, recorded: str) -> str | None:
        if not recorded.startswith("/"):
            return super().key_of(recorded)
        path = Path(recorded).resolve()
        if not path.is_relative_to(self.local_root) or path == self.local_root:
            return None
        return path.relative_to(self.local_root).as_posix()

    def put_file(self, local: Path, key: str, *, move: bool = False) -> None:
        """Rename the file into place when ``move`` and one filesystem allow it, else copy it
        beside the destination and rename (a reader never sees a partial file)."""
        dest = self.local_path(key)
        with _translated(key):
            dest.parent.mkdir(parents=True, exist_ok=True)
            if move and _rename(local, dest):
                return
            temp = dest.with_name(f".{uuid.uuid4().hex}.part")
            try:
                shutil.copyfile(local, temp)
                temp.replace(dest)
            finally:
                temp.unlink(missing_ok=True)
        if move:
            local.unlink(missing_ok=True)

    def put_bytes(self, data: bytes, key: str) -> None:
        dest = self.local_path(key)
        with _translated(key):
            dest.parent.mkdir(parents=True, exist_ok=True)
            temp = dest.with_name(f".{uuid.uuid4().hex}.part")
            try:
                temp.write_bytes(data)
                temp.replace(dest)
            finally:
                temp.unlink(missing_ok=True)

    def delete_prefix(self, prefix: str) -> bool:
        """Rename the folder out of the tree (``<top>/.expired/<name>``), then delete it there.

        Like publishing, the folder leaves the tree at once, so a reader or an analyst's glob sees
        all of it or none of it.
        """
        folder = self.local_path(prefix)
        top = prefix.split("/")[0]
        if not folder.exists():
            return False
        trash = self.local_path(top) / TRASH / PurePosixPath(prefix).name
        with _translated(prefix):
            shutil.rmtree(trash, ignore_errors=True)  # a try that stopped half-way
            trash.parent.mkdir(parents=True, exist_ok=True)
            if not _rename(folder, trash):
                return False
            shutil.rmtree(trash)
        return True

    def empty_trash(self, top: str) -> None:
        trash = self.local_path(top) / TRASH
        if trash.is_dir():
            for leftover in trash.iterdir():
                shutil.rmtree(leftover, ignore_errors=True)

    def list(self, prefix: str) -> list[BlobInfo]:
        """As ``BlobStore.list``, without the trash and half-written temporary files."""
        return [
            b
            for b in super().list(prefix)
            if f"/{TRASH}/" not in f"/{b.key}" and not PurePosixPath(b.key).name.endswith(".part")
        ]


def _rename(source: Path, dest: Path) -> bool:
    """Rename ``source`` to ``dest``; False when another filesystem (or a vanished source)
    makes a rename impossible."""
    try:
        source.replace(dest)
    except FileNotFoundError:
        return False
    except OSError:
        if source.exists():
            return False
        raise
    return True


@dataclass(frozen=True)
class S3Target:
    """An S3-compatible bucket and prefix, and how to reach it."""

    bucket: str
    prefix: str
    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: str | None = None
    secret_access_key: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> S3Target:
        url = urlsplit(settings.storage_url or "")
        secret = settings.s3_secret_access_key
        return cls(
            bucket=url.netloc,
            prefix=url.path.strip("/"),
            endpoint_url=settings.s3_endpoint_url,
            region=settings.s3_region or "us-east-1",
            access_key_id=settings.s3_access_key_id,
            secret_access_key=secret.get_secret_value() if secret else None,
        )

    def filesystem(self) -> pafs.S3FileSystem:
        endpoint = urlsplit(self.endpoint_url) if self.endpoint_url else None
        return pafs.S3FileSystem(
            access_key=self.access_key_id,
            secret_key=self.secret_access_key,
            region=self.region,  # never left to the SDK's guessing (it may ask EC2 metadata)
            endpoint_override=endpoint.netloc + endpoint.path if endpoint else None,
            scheme=endpoint.scheme if endpoint else "https",
        )


class S3BlobStore(BlobStore):
    """An S3 bucket (and prefix): no rename, whole-object writes, optional presigned URLs."""

    def __init__(self, target: S3Target, *, presign: bool = False) -> None:
        self.target = target
        self.presigns = presign
        root = "/".join(p for p in (target.bucket, target.prefix) if p)
        super().__init__(target.filesystem(), root)

    def key_prefix(self, key: str) -> str:
        """The object key in the bucket."""
        return "/".join(p for p in (self.target.prefix, check_key(key)) if p)

    def presign(self, key: str, expires_s: int = 300) -> str | None:
        if not self.presigns:
            return None
        with _translated(key):
            url: str = self._client.generate_presigned_url(
                "get_object",
                Params={"Bucket": self.target.bucket, "Key": self.key_prefix(key)},
                ExpiresIn=expires_s,
            )
        return url

    @cached_property
    def _client(self) -> Any:
        """botocore's S3 client with the store's own endpoint and credentials (only signs)."""
        import botocore.session  # type: ignore[import-untyped]
        from botocore.config import Config  # type: ignore[import-untyped]

        style = "path" if self.target.endpoint_url else "auto"
        return botocore.session.Session().create_client(
            "s3",
            region_name=self.target.region,
            endpoint_url=self.target.endpoint_url,
            aws_access_key_id=self.target.access_key_id,
            aws_secret_access_key=self.target.secret_access_key,
            config=Config(signature_version="s3v4", s3={"addressing_style": style}),
        )


def open_blob_store(settings: Settings) -> BlobStore:
    """The store the settings name: the data folder by default, else the S3 bucket."""
    if settings.storage_url is None:
        return LocalBlobStore(settings.data_dir)
    return S3BlobStore(S3Target.from_settings(settings), presign=settings.s3_presign)
