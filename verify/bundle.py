"""Verifying an evidence bundle offline: from the zip alone, and a public key if one is given.

Pure: no catalog, no settings, no network. Six groups of checks (seven with trust anchors), each
a line of the verdict:

    signature   manifest.json is signed (Ed25519) by the key given, else by the bundle's own
                public_key.pem (which proves integrity, not origin), and by the key it names
    files       every listed file's sha256 and size
    listing     no file in the zip that the manifest does not list, none listed that is missing
    spans       each span file's canonical-JSON sha256 equals its own ``sha256`` and the manifest's
    clips       each clip decodes; version 2: each span's clip shows the span's whole extent
                and a frame at each of its thumbnails' source times; version 1: each clip
                holds a frame at each thumbnail time it lists
    thumbnails  each thumbnail listed for a span is in the bundle
    c2pa        (with trust anchors) each clip's Content Credentials are Trusted (credentials.py)

``verify_bundle`` never raises for a tampered bundle (a failing check names the file); it raises
``NotABundle`` only for a file that is no bundle at all.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from storage.artifacts.spans import canonical_sha256
from verify.clip_checks import check_clips
from verify.credentials import check_bundle_clips
from verify.layout import (
    FORMAT,
    MANIFEST,
    PUBLIC_KEY,
    RESERVED,
    SIGNATURE,
    VERIFIED_VERSIONS,
)
from verify.verdict import READ_ERRORS, Check, Verdict
from ves.errors import NotABundle
from ves.signing import key_id_of, load_public_key, verify_signature

_MANIFEST_ERRORS = (KeyError, TypeError, ValueError, AttributeError)


def verify_bundle(
    bundle: Path, public_key_pem: bytes | None = None, trust_pem: str | None = None
) -> Verdict:
    """Check the bundle at ``bundle``; with ``public_key_pem``, against that key only; with
    ``trust_pem`` (root certificates), each clip's Content Credentials too.

    Raises:
        NotABundle: not a zip, a zip with neither manifest.json nor manifest.sig, or a
            ``public_key_pem`` that is not an Ed25519 public key.
    """
    given = _given_key(public_key_pem)
    try:
        archive = zipfile.ZipFile(bundle)
    except (zipfile.BadZipFile, OSError) as exc:
        raise NotABundle(f"{bundle} is not a zip file ({exc})") from exc
    with archive:
        names = archive.namelist()
        if not {MANIFEST, SIGNATURE} & set(names):
            raise NotABundle(f"{bundle} holds no {MANIFEST}: not an evidence bundle")
        return _verify(archive, names, given, trust_pem)


def _given_key(pem: bytes | None) -> Any:
    if pem is None:
        return None
    try:
        return load_public_key(pem)
    except (ValueError, TypeError) as exc:
        raise NotABundle(f"the public key given is not an Ed25519 public key PEM ({exc})") from exc


def _verify(
    archive: zipfile.ZipFile, names: list[str], given: Any, trust_pem: str | None = None
) -> Verdict:
    raw = _read(archive, MANIFEST)
    manifest = _parse(raw)
    signature, key_note = _check_signature(archive, raw, manifest, given)
    if manifest is None:
        unreadable = Check("manifest")
        versions = " or ".join(str(v) for v in sorted(VERIFIED_VERSIONS))
        unreadable.fail(MANIFEST, f"missing, or not JSON of {FORMAT} version {versions}")
        return Verdict([signature, unreadable], key_note)
    checks: list[Callable[[zipfile.ZipFile, list[str], dict[str, Any]], Check]] = [
        _check_files,
        _check_listing,
        _check_spans,
        check_clips,
        _check_thumbnails,
    ]
    if trust_pem is not None:  # Content Credentials (verify/credentials.py)
        checks.append(_credentials_check(trust_pem))
    return Verdict([signature, *(_guarded(c, archive, names, manifest) for c in checks)], key_note)


def _credentials_check(
    trust_pem: str,
) -> Callable[[zipfile.ZipFile, list[str], dict[str, Any]], Check]:
    def _check_c2pa(archive: zipfile.ZipFile, names: list[str], manifest: dict[str, Any]) -> Check:
        check = Check("c2pa")
        check.summary, failures = check_bundle_clips(archive, manifest, trust_pem)
        for path, reason in failures:
            check.fail(path, reason)
        return check

    return _check_c2pa


def _read(archive: zipfile.ZipFile, name: str) -> bytes | None:
    try:
        return archive.read(name)
    except KeyError:
        return None


def _parse(raw: bytes | None) -> dict[str, Any] | None:
    try:
        manifest = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    if not isinstance(manifest, dict):
        return None
    ours = manifest.get("format") == FORMAT
    # A newer format may hold what this verifier cannot check: it fails rather than guesses.
    return manifest if ours and manifest.get("format_version") in VERIFIED_VERSIONS else None


def _guarded(
    check: Callable[[zipfile.ZipFile, list[str], dict[str, Any]], Check],
    archive: zipfile.ZipFile,
    names: list[str],
    manifest: dict[str, Any],
) -> Check:
    """A check's result; a manifest whose fields are not the format's fails it (never raises)."""
    name = check.__name__.removeprefix("_check_")
    try:
        return check(archive, names, manifest)
    except _MANIFEST_ERRORS as exc:
        broken = Check(name)
        broken.fail(MANIFEST, f"its {name} are not in the bundle format ({exc!r})")
        return broken


def _check_signature(
    archive: zipfile.ZipFile, raw: bytes | None, manifest: dict[str, Any] | None, given: Any
) -> tuple[Check, str]:
    check = Check("signature")
    key, source = given, "given with --public-key"
    if key is None:
        key, source = _bundled_key(archive, check), f"taken from the bundle itself ({PUBLIC_KEY})"
    signature = _read(archive, SIGNATURE)
    if signature is None:
        check.fail(SIGNATURE, "missing")
    if raw is None:
        check.fail(MANIFEST, "missing")
    if key is None:
        return check, "key: none could be read"
    key_id = key_id_of(key)
    named = ((manifest or {}).get("signature") or {}).get("key_id")
    if manifest is not None and named != key_id:
        origin = PUBLIC_KEY if given is None else "--public-key"
        check.fail(origin, f"is key {key_id}, but the manifest says it was signed by {named}")
    if raw is not None and signature is not None and not verify_signature(key, signature, raw):
        why = f"the signature does not match manifest.json under key {key_id}"
        check.fail(MANIFEST, why)
        check.fail(SIGNATURE, why)
    check.summary = f"manifest.json is signed by {key_id}"
    return check, _key_note(key_id, source, given is None)


def _bundled_key(archive: zipfile.ZipFile, check: Check) -> Any:
    pem = _read(archive, PUBLIC_KEY)
    if pem is None:
        check.fail(PUBLIC_KEY, "missing (or pass --public-key)")
        return None
    try:
        return load_public_key(pem)
    except (ValueError, TypeError):
        check.fail(PUBLIC_KEY, "is not an Ed25519 public key")
        return None


def _key_note(key_id: str, source: str, from_bundle: bool) -> str:
    note = f"key:        {key_id}, {source}"
    if from_bundle:
        note += (
            ". That shows the bundle is intact, NOT who made it: only a key obtained"
            " independently (GET /api/public/signing-keys, then --public-key) proves its origin"
        )
    return note


def _listed(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["path"]: entry for entry in manifest["files"]}


def _check_files(archive: zipfile.ZipFile, names: list[str], manifest: dict[str, Any]) -> Check:
    check, present = Check("files"), set(names)
    listed = _listed(manifest)
    for path, entry in listed.items():
        if path not in present:
            continue  # the listing check names it
        try:
            digest, size = _sha256_of(archive, path)
        except READ_ERRORS as exc:
            check.fail(path, f"cannot be read from the zip ({exc})")
            continue
        if size != entry["bytes"]:
            check.fail(path, f"is {size} bytes, the manifest says {entry['bytes']}")
        elif digest != entry["sha256"]:
            check.fail(
                path, f"sha256 {digest[:16]}... is not the manifest's {entry['sha256'][:16]}..."
            )
    check.summary = f"{len(listed)} files: sha256 and size as listed"
    return check


def _sha256_of(archive: zipfile.ZipFile, path: str) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with archive.open(path) as member:
        while chunk := member.read(1024 * 1024):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _check_listing(archive: zipfile.ZipFile, names: list[str], manifest: dict[str, Any]) -> Check:
    check, listed = Check("listing"), set(_listed(manifest))
    for path in sorted(set(names) - listed - RESERVED):
        check.fail(path, "is in the zip but not listed in manifest.json")
    for path in sorted(listed - set(names)):
        check.fail(path, "is listed in manifest.json but missing from the zip")
    for path, count in sorted(Counter(names).items()):
        if count > 1:
            check.fail(path, f"is in the zip {count} times")
    check.summary = "nothing unlisted, nothing missing"
    return check


def _check_spans(archive: zipfile.ZipFile, names: list[str], manifest: dict[str, Any]) -> Check:
    check = Check("spans")
    for span in manifest["spans"]:
        path, listed = span["path"], span["sha256"]
        try:
            document = json.loads(archive.read(path))
            own, actual = document.get("sha256"), canonical_sha256(document)
        except KeyError:
            check.fail(path, "missing from the zip")
            continue
        except (*READ_ERRORS, ValueError, AttributeError) as exc:
            check.fail(path, f"is not a readable span document ({exc})")
            continue
        if not actual == own == listed:
            check.fail(
                path,
                f"canonical sha256 {actual[:16]}..., its own {str(own)[:16]}..., "
                f"the manifest's {listed[:16]}...: not all equal",
            )
    check.summary = f"{len(manifest['spans'])} spans: canonical-JSON sha256 as listed"
    return check


def _check_thumbnails(
    archive: zipfile.ZipFile, names: list[str], manifest: dict[str, Any]
) -> Check:
    check, present, listed = Check("thumbnails"), set(names), set(_listed(manifest))
    wanted = sorted({t for span in manifest["spans"] for t in span["thumbnails"]})
    for path in wanted:
        if path not in present or path not in listed:
            check.fail(path, "is a thumbnail of a span but not in the bundle")
    check.summary = f"{len(wanted)} thumbnails of spans present"
    return check
