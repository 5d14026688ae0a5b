"""The names and version of the evidence bundle format, shared by its writer and its verifier.

A bundle is one zip: the exported files under the names below, plus ``manifest.json`` (every file
with its sha256 and size, the spans, the clips, the redaction), ``manifest.sig`` (base64 Ed25519
signature of manifest.json's exact bytes) and ``public_key.pem`` (the signer's public key, a
convenience: only a key obtained independently proves who signed).

Version 2 (issue 31): one clip per merged window (``clips/window_01.mp4``), not per span; each
span entry names its clip (``clip``), its start and end in clip time (``clip_start_s``,
``clip_end_s``), the thumbnail times its clip holds, and whether it was cut to the request's time
range (with its own start and end); each clip entry says how it was made (``method``: ``copied``
or ``re-encoded``), the window asked for and the source time it truly covers. Version 1 (a clip
per span, ``clips/<evidence_id>.mp4``, the thumbnail times on the clip entry) is still verified.
"""

from __future__ import annotations

import re

FORMAT = "ves-evidence-bundle"
FORMAT_VERSION = 2
VERIFIED_VERSIONS = frozenset({1, 2})  # the versions ``verify/bundle.py`` checks
CLIP_METHODS = ("copied", "re-encoded")
ALGORITHM = "Ed25519"
MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"
PUBLIC_KEY = "public_key.pem"
RESERVED = frozenset({MANIFEST, SIGNATURE, PUBLIC_KEY})
# Each clip's Content Credentials: its media type, and the label of the assertion naming the
# export and its spans (signed by tasks/export/credentials.py, read by verify/credentials.py).
MP4 = "video/mp4"
EVIDENCE_LABEL = "com.video-evidence-service.evidence"
SPANS_DIR = "spans/"
THUMBNAILS_DIR = "thumbnails/"
CLIPS_DIR = "clips/"
# Files a bundle may carry at its top (the rest lives in the folders above).
TOP_LEVEL = (
    "scene_graph.json",
    "timeline.json",
    "cost.json",
    "source.json",
    "run_manifest.json",
    "audit.jsonl",
    "notes.jsonl",
)
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$")


def check_name(name: str) -> str:
    """``name`` if it is a relative path of safe parts (no ``..``, no absolute path, no
    reserved name), else ``ValueError``."""
    if not _SAFE_NAME.fullmatch(name) or ".." in name.split("/") or name in RESERVED:
        raise ValueError(f"{name!r} is not a name a bundle file may have")
    return name


def span_path(evidence_id: str) -> str:
    return check_name(f"{SPANS_DIR}{evidence_id}.json")


def clip_path(name: str) -> str:
    """A clip's bundle path: ``clips/window_01.mp4`` (version 1: ``clips/<evidence_id>.mp4``)."""
    return check_name(f"{CLIPS_DIR}{name}.mp4")


def thumbnail_path(name: str) -> str:
    return check_name(f"{THUMBNAILS_DIR}{name}")
