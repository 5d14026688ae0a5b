"""Checking a clip's Content Credentials (C2PA) offline, against trust anchors the caller gives.

``c2pa-python``'s Reader validates the embedded manifest: the claim signature, the certificate
chain up to one of ``trust_pem``'s roots, and the BMFF hash that binds the manifest to every byte
of the MP4 outside the manifest box (so a pixel changed in ``mdat`` fails). Remote manifests are
never fetched. The roots must come from the recipient (the PEM published by ``GET
/api/public/signing-keys``, saved to a file): a root shipped inside a bundle would prove nothing.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from typing import Any

import c2pa
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from verify.layout import EVIDENCE_LABEL, MP4

TRUSTED = "Trusted"
ABSENT = "absent"
_PEM = Encoding.PEM


@dataclass(frozen=True)
class ClipCredentials:
    """What the Reader found: the validation state, the failures, the actions and our ids."""

    state: str  # Trusted, Valid (intact but not from a trusted root), Invalid, or absent
    label: str = ""
    failures: list[str] = field(default_factory=list)  # "code: explanation"
    actions: list[str] = field(default_factory=list)
    evidence: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.state == TRUSTED and not self.failures

    def reason(self) -> str:
        """Why it is not ``ok``, in one line."""
        if self.state == ABSENT:
            return "carries no Content Credentials (C2PA manifest)"
        return f"Content Credentials {self.state}: " + "; ".join(self.failures or ["untrusted"])


def reader_settings(trust_pem: str) -> dict[str, Any]:
    """The Reader's settings: trust only ``trust_pem``'s roots, fetch nothing remote."""
    return {
        "verify": {"verify_trust": True, "remote_manifest_fetch": False},
        "trust": {"trust_anchors": trust_pem},
    }


def verify_clip_credentials(data: bytes, trust_pem: str) -> ClipCredentials:
    """Validate the C2PA manifest embedded in the MP4 ``data`` against the roots in
    ``trust_pem``; never raises for a broken or unsigned clip."""
    try:
        with (
            c2pa.Context.from_dict(reader_settings(trust_pem)) as context,
            c2pa.Reader(MP4, io.BytesIO(data), context=context) as reader,
        ):
            report = json.loads(reader.json())
    except c2pa.C2paError as exc:
        if "ManifestNotFound" in type(exc).__name__ or "no JUMBF" in str(exc):
            return ClipCredentials(ABSENT)
        return ClipCredentials("Invalid", failures=[f"unreadable: {exc}"])
    return _summary(report)


def _summary(report: dict[str, Any]) -> ClipCredentials:
    label = report.get("active_manifest", "")
    manifest = report.get("manifests", {}).get(label, {})
    results = report.get("validation_results", {}).get("activeManifest", {})
    failures = [f"{f.get('code')}: {f.get('explanation', '')}" for f in results.get("failure", [])]
    assertions = {a.get("label"): a.get("data") for a in manifest.get("assertions", [])}
    actions = (assertions.get("c2pa.actions.v2") or {}).get("actions", [])
    return ClipCredentials(
        state=str(report.get("validation_state", "Invalid")),
        label=label,
        failures=failures,
        actions=[a.get("action", "") for a in actions],
        evidence=assertions.get(EVIDENCE_LABEL),
    )


def load_trust_anchors(pem: bytes) -> str:
    """The roots a recipient gives (one PEM file, one or more certificates), checked.

    Raises:
        ValueError: the file holds no PEM certificate.
    """
    return "".join(c.public_bytes(_PEM).decode() for c in x509.load_pem_x509_certificates(pem))


def check_bundle_clips(
    archive: zipfile.ZipFile, manifest: dict[str, Any], trust_pem: str
) -> tuple[str, list[tuple[str, str]]]:
    """Each clip of a bundle validated against ``trust_pem``, and its evidence assertion naming
    the bundle's export: a summary and the (path, reason) of each clip that fails."""
    failures: list[tuple[str, str]] = []
    export_id = manifest["export"]["export_id"]
    for clip in manifest["clips"]:
        path = clip["path"]
        try:
            found = verify_clip_credentials(archive.read(path), trust_pem)
        except KeyError:
            failures.append((path, "missing from the zip"))
            continue
        named = (found.evidence or {}).get("export_id")
        if not found.ok:
            failures.append((path, found.reason()))
        elif named != export_id:
            failures.append((path, f"its Content Credentials name export {named}, not {export_id}"))
    trusted = len(manifest["clips"]) - len(failures)
    return f"{trusted} clips: Content Credentials (C2PA) Trusted under the given root(s)", failures
