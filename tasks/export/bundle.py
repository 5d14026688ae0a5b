"""Writing a signed evidence bundle: one zip whose ``manifest.json`` lists every file it holds.

The export flow adds files one by one (each streamed into the zip and hashed as it goes), then
``close`` writes the manifest, its Ed25519 signature and the public key, and renames the zip into
place: a reader never sees half a bundle. ``verify/bundle.py`` checks one offline.

Format version 2 (``layout.py``): a clip per merged window (``clips/window_01.mp4``), shared by
the spans it shows; each span entry names its clip, its start and end in clip time and the
thumbnail times the clip must hold.

    with BundleWriter(target) as bundle:
        clip = bundle.add_clip("window_01", clip_path, source_start_s=3.0, source_end_s=9.0,
                               window_s=(3.0, 9.0), method="copied")
        bundle.add_span(span_document, SpanClip(clip.path, 1.0, 5.0, [5.2]),
                        thumbnails=["thumbnails/ev_1_0.jpg"])
        bundle.add_file("thumbnails/ev_1_0.jpg", jpeg_bytes)
        bundle.add_json("cost.json", cost)
        bundle.close(keyring.active(), BundleMeta(export_id, video_id, run_id))
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from storage.artifacts.spans import canonical_json, canonical_sha256
from verify.layout import (
    ALGORITHM,
    CLIP_METHODS,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    PUBLIC_KEY,
    SIGNATURE,
    check_name,
    clip_path,
    span_path,
)
from ves.clock import now_rfc3339
from ves.signing import SigningKey

_CHUNK = 1024 * 1024
# Already compressed: stored as they are, so a clip is not deflated for nothing.
_STORED_SUFFIXES = (".mp4", ".jpg", ".jpeg", ".png")


@dataclass(frozen=True)
class BundleMeta:
    """What the manifest says about the export itself.

    ``redaction`` is written as given (what was blurred, the unredacted originals' hashes);
    ``extra`` adds fields to the manifest's ``export`` section (the selection, the tenant...).
    """

    export_id: str
    video_id: str
    run_id: str
    created_at: str = field(default_factory=now_rfc3339)
    redaction: Mapping[str, Any] = field(default_factory=lambda: {"applied": []})
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FileEntry:
    path: str
    sha256: str
    bytes: int


@dataclass(frozen=True)
class SpanClip:
    """Where a span lies in its clip: the clip's bundle path, the span's start and end in clip
    time, the source times of its thumbnails (each a frame of the clip), and, when the span was
    cut to the request's time range, its own start and end in source time."""

    clip: str
    clip_start_s: float
    clip_end_s: float
    thumbnail_times_s: list[float]
    original_start_s: float | None = None
    original_end_s: float | None = None

    @property
    def cut_to_range(self) -> bool:
        return self.original_start_s is not None


@dataclass(frozen=True)
class SpanEntry:
    evidence_id: str
    path: str
    sha256: str
    thumbnails: list[str]
    clip: str
    clip_start_s: float
    clip_end_s: float
    thumbnail_times_s: list[float]
    cut_to_range: bool
    original_start_s: float | None
    original_end_s: float | None


@dataclass(frozen=True)
class ClipEntry:
    """A clip and the source time it covers: its frame at presentation time ``t`` shows the
    source at ``source_start_s + t``, its last frame the source at ``source_end_s``; ``window_s``
    is the window asked for, ``method`` ``copied`` (the source's packets) or ``re-encoded``."""

    path: str
    source_start_s: float
    source_end_s: float
    window_s: list[float]
    method: str
    c2pa_manifest: str | None = None  # its embedded Content Credentials' manifest label


@dataclass(frozen=True)
class SealedBundle:
    """A bundle in place: its path, size, signer and the sha256 of its manifest."""

    path: Path
    bytes: int
    key_id: str
    manifest_sha256: str


def pretty_json(document: Any) -> bytes:
    """JSON for people: sorted keys, indented, UTF-8, a final newline."""
    return (json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


class BundleWriter:
    """Builds the bundle at ``target`` (a ``.zip``), through a temporary file beside it."""

    def __init__(self, target: Path) -> None:
        self.target = Path(target)
        fd, temp = tempfile.mkstemp(dir=self.target.parent, prefix=f".{self.target.name}.")
        os.close(fd)
        self._temp = Path(temp)
        self._zip = zipfile.ZipFile(self._temp, "w", compression=zipfile.ZIP_DEFLATED)
        self._files: dict[str, FileEntry] = {}
        self._spans: list[SpanEntry] = []
        self._clips: list[ClipEntry] = []

    def __enter__(self) -> BundleWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is not None:
            self.abort()

    def add_file(self, name: str, data: bytes | Path) -> FileEntry:
        """Add ``data`` (bytes, or a file's path, streamed) as ``name``; each name once."""
        if check_name(name) in self._files:
            raise ValueError(f"{name!r} is already in the bundle")
        compress = zipfile.ZIP_STORED if name.endswith(_STORED_SUFFIXES) else zipfile.ZIP_DEFLATED
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = compress
        digest, size = hashlib.sha256(), 0
        with self._zip.open(info, "w", force_zip64=True) as out:
            for chunk in _chunks(data):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        entry = FileEntry(name, digest.hexdigest(), size)
        self._files[name] = entry
        return entry

    def add_json(self, name: str, document: Any) -> FileEntry:
        """Add a JSON document, indented with sorted keys (``cost.json``, ``timeline.json``...)."""
        return self.add_file(name, pretty_json(document))

    def add_jsonl(self, name: str, records: Iterable[Mapping[str, Any]]) -> FileEntry:
        """Add records one JSON line each, in the order given (``audit.jsonl``, ``notes.jsonl``)."""
        lines = (canonical_json(dict(record)) + b"\n" for record in records)
        return self.add_file(name, b"".join(lines))

    def add_span(
        self, document: Mapping[str, Any], clip: SpanClip, thumbnails: Sequence[str] = ()
    ) -> SpanEntry:
        """Add a span (``spans/<evidence_id>.json``, canonical JSON with its ``sha256``), say
        where it lies in its clip (added with ``add_clip`` before or after) and name the
        bundle's thumbnails of it (added with ``add_file`` before or after).

        Raises:
            ValueError: the document's ``sha256`` is not that of its canonical JSON.
        """
        span = dict(document)
        digest = canonical_sha256(span)
        if span.setdefault("sha256", digest) != digest:
            raise ValueError(f"span {span['evidence_id']}: sha256 is not its canonical hash")
        path = self.add_file(span_path(span["evidence_id"]), canonical_json(span)).path
        entry = SpanEntry(
            span["evidence_id"],
            path,
            digest,
            [check_name(t) for t in thumbnails],
            check_name(clip.clip),
            round(clip.clip_start_s, 6),
            round(clip.clip_end_s, 6),
            sorted(float(t) for t in clip.thumbnail_times_s),
            clip.cut_to_range,
            clip.original_start_s,
            clip.original_end_s,
        )
        self._spans.append(entry)
        return entry

    def add_clip(
        self,
        name: str,
        data: bytes | Path,
        *,
        source_start_s: float,
        source_end_s: float,
        window_s: tuple[float, float],
        method: str,
        c2pa_manifest: str | None = None,
    ) -> ClipEntry:
        """Add an MP4 clip (``clips/<name>.mp4``) cut from the source: its frame at
        presentation time ``t`` must show the source at ``source_start_s + t``, its last frame
        the source at ``source_end_s``; ``method`` is ``copied`` or ``re-encoded``."""
        if not 0 <= source_start_s <= source_end_s:
            raise ValueError(f"clip {name}: source times {source_start_s}..{source_end_s}")
        if method not in CLIP_METHODS:
            raise ValueError(f"clip {name}: method {method!r} is not one of {CLIP_METHODS}")
        path = self.add_file(clip_path(name), data).path
        window = [float(window_s[0]), float(window_s[1])]
        entry = ClipEntry(path, source_start_s, source_end_s, window, method, c2pa_manifest)
        self._clips.append(entry)
        return entry

    def close(self, signing_key: SigningKey, meta: BundleMeta) -> SealedBundle:
        """Write the manifest, its signature and the public key; move the zip into place.

        Raises:
            ValueError: a span names a thumbnail that was not added.
        """
        try:
            manifest = pretty_json(self._manifest(signing_key.key_id, meta))
            self._write_reserved(MANIFEST, manifest)
            self._write_reserved(SIGNATURE, signing_key.sign_b64(manifest))
            self._write_reserved(PUBLIC_KEY, signing_key.public_key_pem.encode())
            self._zip.close()
            with self._temp.open("rb") as done:
                os.fsync(done.fileno())
            self._temp.replace(self.target)
        except BaseException:
            self.abort()
            raise
        digest = hashlib.sha256(manifest).hexdigest()
        return SealedBundle(self.target, self.target.stat().st_size, signing_key.key_id, digest)

    def abort(self) -> None:
        """Drop the unfinished bundle (nothing appears at the target)."""
        self._zip.close()
        self._temp.unlink(missing_ok=True)

    def _manifest(self, key_id: str, meta: BundleMeta) -> dict[str, Any]:
        missing = [t for s in self._spans for t in s.thumbnails if t not in self._files]
        if missing:
            raise ValueError(f"thumbnails named by spans but not added: {missing}")
        clipless = [s.clip for s in self._spans if s.clip not in {c.path for c in self._clips}]
        if clipless:
            raise ValueError(f"clips named by spans but not added: {clipless}")
        export = {
            **meta.extra,
            "export_id": meta.export_id,
            "video_id": meta.video_id,
            "run_id": meta.run_id,
            "created_at": meta.created_at,
        }
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "export": export,
            "signature": {"algorithm": ALGORITHM, "key_id": key_id, "file": SIGNATURE},
            "files": [asdict(f) for f in sorted(self._files.values(), key=lambda f: f.path)],
            "spans": [asdict(s) for s in sorted(self._spans, key=lambda s: s.path)],
            "clips": [asdict(c) for c in sorted(self._clips, key=lambda c: c.path)],
            "redaction": dict(meta.redaction),
        }

    def _write_reserved(self, name: str, data: bytes) -> None:
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        self._zip.writestr(info, data)


def _chunks(data: bytes | Path) -> Iterable[bytes]:
    if isinstance(data, bytes):
        yield data
        return
    with Path(data).open("rb") as source:
        while chunk := source.read(_CHUNK):
            yield chunk
