"""Content Credentials (C2PA) embedded in an exported MP4 clip, signed with ``c2pa-python``.

The manifest says what the clip is and what was done to make it:

- actions: ``c2pa.opened`` (the source recording, its sha256 from intake), ``c2pa.edited`` (cut to
  the window, with its source start and end times) and, when redaction was asked,
  ``c2pa.filtered`` naming what was pixelated. C2PA's own ``c2pa.redacted`` is not used: it means
  an *assertion* removed from an ingredient's manifest, and ``c2pa-rs`` 0.91 refuses one that does
  not point at such an assertion (``assertion.action.redactionMismatch``);
- an ingredient for the source recording (``parentOf``; its title and format, not its bytes);
- ``com.video-evidence-service.evidence``: the tenant-neutral ids (export, video, run, and each
  span the clip shows with its canonical sha256), so the clip names its bundle's records.

The bundle's ``manifest.json`` lists each clip's sha256, so the clip cannot also hold the hash of
that manifest (each would have to contain the other's). The link the other way is the clip's C2PA
manifest label, which ``SignedClip`` returns for the bundle to list.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import c2pa

from tasks.export.cut import Clip
from verify.layout import EVIDENCE_LABEL, MP4
from ves.credentials import ClaimSigner
from ves.errors import SigningFailed

GENERATOR = "video-evidence-service"
SOURCE_INGREDIENT = "source-recording"


@dataclass(frozen=True)
class SpanRef:
    """A span the clip shows: its id and its canonical sha256 (as the bundle lists it)."""

    span_id: str
    sha256: str


@dataclass(frozen=True)
class ClipClaim:
    """What a clip's manifest states: where it came from, what was done, which records it backs."""

    export_id: str
    video_id: str
    run_id: str
    source_sha256: str
    source_title: str
    source_start_s: float
    source_end_s: float
    spans: tuple[SpanRef, ...]
    redacted: tuple[str, ...] = ()  # "faces", "text"
    source_format: str = MP4


@dataclass(frozen=True)
class SignedClip:
    """A signed clip, and what its bundle lists about it."""

    path: Path
    sha256: str
    manifest_label: str  # the C2PA active manifest's label, ``urn:c2pa:...``
    manifest_bytes: int


class ExportLike(Protocol):
    """What ``claim_for`` reads of ``tasks.export.stage.ExportRequest`` (no import circle)."""

    @property
    def export_id(self) -> str: ...
    @property
    def source_sha256(self) -> str: ...
    @property
    def provenance(self) -> Mapping[str, Any]: ...
    @property
    def redact(self) -> frozenset[str]: ...
    @property
    def run(self) -> Any: ...


def claim_for(request: ExportLike, spans: Sequence[Mapping[str, Any]], clip: Clip) -> ClipClaim:
    """The claim of ``clip`` cut for ``spans`` of the export ``request``."""
    title = request.provenance.get("title") or request.provenance.get("url") or "source"
    return ClipClaim(
        export_id=request.export_id,
        video_id=request.run.video_id,
        run_id=request.run.run_id,
        source_sha256=request.source_sha256,
        source_title=str(title),
        source_start_s=clip.start_s,
        source_end_s=clip.end_s,
        spans=tuple(SpanRef(s["evidence_id"], s["sha256"]) for s in spans),
        redacted=tuple(sorted(request.redact)),
    )


def claim_manifest(claim: ClipClaim) -> dict[str, Any]:
    """The manifest definition ``c2pa.Builder`` takes (actions, ingredient, evidence ids)."""
    return {
        "claim_generator_info": [{"name": GENERATOR, "version": "1"}],
        "title": f"{claim.export_id} {claim.source_start_s:.3f}-{claim.source_end_s:.3f} s",
        "format": MP4,
        "ingredients": [_source_ingredient(claim)],
        "assertions": [
            {"label": "c2pa.actions.v2", "data": {"actions": _actions(claim)}},
            {"label": EVIDENCE_LABEL, "data": _evidence(claim)},
        ],
    }


def _source_ingredient(claim: ClipClaim) -> dict[str, Any]:
    return {
        "title": claim.source_title,
        "format": claim.source_format,
        "relationship": "parentOf",
        "label": SOURCE_INGREDIENT,
        "description": f"the source recording, sha256 {claim.source_sha256}",
    }


def _actions(claim: ClipClaim) -> list[dict[str, Any]]:
    ours = f"{GENERATOR}."
    actions: list[dict[str, Any]] = [
        {
            "action": "c2pa.opened",
            "description": "the source recording as received at intake",
            "parameters": {
                "ingredientIds": [SOURCE_INGREDIENT],
                f"{ours}source_sha256": claim.source_sha256,
            },
        },
        {
            "action": "c2pa.edited",
            "description": (
                f"cut to {claim.source_start_s:.3f}-{claim.source_end_s:.3f} s of the source"
            ),
            "parameters": {
                f"{ours}source_start_s": claim.source_start_s,
                f"{ours}source_end_s": claim.source_end_s,
            },
        },
    ]
    if claim.redacted:
        actions.append(
            {
                "action": "c2pa.filtered",
                "description": f"redacted: {' and '.join(claim.redacted)} pixelated",
                "parameters": {f"{ours}redacted": list(claim.redacted)},
            }
        )
    return actions


def _evidence(claim: ClipClaim) -> dict[str, Any]:
    return {
        "export_id": claim.export_id,
        "video_id": claim.video_id,
        "run_id": claim.run_id,
        "source_sha256": claim.source_sha256,
        "source_start_s": claim.source_start_s,
        "source_end_s": claim.source_end_s,
        "spans": [{"span_id": s.span_id, "sha256": s.sha256} for s in claim.spans],
        "redacted": list(claim.redacted),
    }


def sign_clip(clip: Path, out: Path, claim: ClipClaim, signer: ClaimSigner) -> SignedClip:
    """Write ``clip`` with an embedded, signed C2PA manifest of ``claim`` to ``out``
    (written beside it and renamed when whole).

    Raises:
        SigningFailed: ``c2pa-python`` refused the manifest, the certificate or the file.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    # The label is chosen here, not read back from the file: reading it would validate the
    # whole clip again (a quarter of the signing time on a 5-minute clip).
    label = f"urn:c2pa:{uuid.uuid4()}"
    fd, temp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w+b") as dest, clip.open("rb") as source:
            manifest = _sign(source, dest, {**claim_manifest(claim), "label": label}, signer)
        Path(temp).replace(out)
    finally:
        Path(temp).unlink(missing_ok=True)
    return SignedClip(out, _sha256_file(out), label, len(manifest))


def _sign(
    source: io.BufferedReader, dest: Any, definition: dict[str, Any], signer: ClaimSigner
) -> bytes:
    info = c2pa.C2paSignerInfo(
        signer.algorithm, signer.certificate_pem, signer.private_key_pem, signer.tsa_url
    )
    try:
        with c2pa.Signer.from_info(info) as native, c2pa.Builder(definition) as build:
            return bytes(build.sign(native, MP4, source, dest))
    except c2pa.C2paError as exc:
        raise SigningFailed(f"cannot sign the clip's Content Credentials: {exc}") from exc


def sign_cut_clip(clip: Clip, claim: ClipClaim, signer: ClaimSigner) -> SignedClip:
    """Sign ``clip`` in place (the hook ``stage.py`` calls for each clip it adds)."""
    return sign_clip(clip.path, clip.path, claim, signer)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()
