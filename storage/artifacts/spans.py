"""The public form of an evidence span, shared by the evidence stage (which hashes it) and the API
(which serves it), so that a span's ``sha256`` can be re-computed by anyone from the JSON served.

The hash covers the span's canonical JSON: sorted keys, no whitespace, without ``sha256`` itself.

People's review notes are added to a span as it is served (they live in the catalog; a published
run never changes). A served span therefore carries two hashes: ``sha256``, over the document
served (notes, ``verdict`` and ``published_sha256`` included), so a client can check what it got
as it always could; and ``published_sha256``, the hash the run published in ``evidence.parquet``
(and its manifest proves), which ``published_form`` of the served span reproduces: drop
``sha256``, ``published_sha256``, ``verdict`` and ``object_name`` (the name of what it is
about, ``storage.artifacts.names``), and every note that has a ``verdict`` (people's notes; the
service's own notes have none).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def thumbnail_url(video_id: str, run_id: str, name: str) -> str:
    """The API path of a run's thumbnail (served with the same Bearer key as every route)."""
    return f"/api/product/videos/{video_id}/runs/{run_id}/thumbs/{name}"


def span_document(row: dict[str, Any], video_id: str, run_id: str) -> dict[str, Any]:
    """An evidence row (as read from ``evidence.parquet``) in its API shape, without hash."""
    frames = [
        {
            "t_s": f["t_s"],
            "bbox": f["bbox"],
            "thumbnail_url": thumbnail_url(video_id, run_id, f["thumbnail"].split("/")[-1]),
            "sha256": f["sha256"],
        }
        for f in row["frames"]
    ]
    return {
        "evidence_id": row["evidence_id"],
        "start_s": row["start_s"],
        "end_s": row["end_s"],
        "object_id": row["object_id"],
        "event_id": row["event_id"],
        "confidence": row["confidence"],
        "frames": frames,
        "review_notes": row["review_notes"],
        "source_sha256": row["source_sha256"],
    }


def canonical_json(document: dict[str, Any]) -> bytes:
    """``document`` as canonical JSON: sorted keys, no white space, UTF-8 (not ASCII-escaped)."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode()


def served_span(
    row: dict[str, Any],
    video_id: str,
    run_id: str,
    notes: list[dict[str, Any]],
    object_name: str | None = None,
) -> dict[str, Any]:
    """A published evidence row as served with people's ``notes`` (oldest first): their notes
    after the service's, the newest note's ``verdict`` (None without one), the name of the
    object it is about (``storage.artifacts.names``), the published hash kept in
    ``published_sha256`` and ``sha256`` computed over this document."""
    span = span_document(row, video_id, run_id)
    span["review_notes"] = [*span["review_notes"], *notes]
    span["verdict"] = notes[-1]["verdict"] if notes else None
    span["object_name"] = object_name
    span["published_sha256"] = row["sha256"]
    return {**span, "sha256": canonical_sha256(span)}


_ADDED_WHEN_SERVED = ("sha256", "published_sha256", "verdict", "object_name")


def published_form(span: dict[str, Any]) -> dict[str, Any]:
    """A served span as its run published it (whose ``canonical_sha256`` is the span's
    ``published_sha256``): without what serving added."""
    published = {k: v for k, v in span.items() if k not in _ADDED_WHEN_SERVED}
    published["review_notes"] = [n for n in span["review_notes"] if "verdict" not in n]
    return published


def canonical_sha256(document: dict[str, Any]) -> str:
    """SHA-256 of ``document`` as canonical JSON, ignoring any ``sha256`` key at its top."""
    body = {k: v for k, v in document.items() if k != "sha256"}
    return hashlib.sha256(canonical_json(body)).hexdigest()
