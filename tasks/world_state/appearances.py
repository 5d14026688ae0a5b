"""Objects as appearances of identities: which of its identity's appearances each object is.

The track stage gives every physical track an identity (``tasks.track.identities``): the
tracks of one thing that left the picture and came back share it. Each such track is one
object of the scene graph, so an object is one APPEARANCE of its identity; the scene graph
says which one (``appearance``, 1 for the first in time) and how many there were
(``appearances``), so that "how many different people?" (identities) and "how many times did
someone come in?" (appearances) are both read off ``objects.parquet``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa


def identities_of(tracks: pa.Table) -> dict[str, str]:
    """Object id -> identity id, from a ``tracks`` table (empty for a table without the
    ``identity_id`` column, as tests and older runs write them)."""
    if "identity_id" not in tracks.column_names:
        return {}
    objects, identities = tracks.column("track_id"), tracks.column("identity_id")
    pairs = zip(objects.to_pylist(), identities.to_pylist(), strict=True)
    return {obj: idn for obj, idn in pairs if obj and idn}


def number_appearances(objects: list[dict[str, Any]], identities: Mapping[str, str]) -> None:
    """Set each object row's ``identity_id``, ``appearance`` and ``appearances`` (in place);
    objects with no identity (texts, faces) get nulls."""
    by_identity: dict[str, list[dict[str, Any]]] = {}
    for row in objects:
        identity = identities.get(row["object_id"])
        row["identity_id"], row["appearance"], row["appearances"] = identity, None, None
        if identity is not None:
            by_identity.setdefault(identity, []).append(row)
    for rows in by_identity.values():
        rows.sort(key=lambda row: (row["first_seen_s"], row["object_id"]))
        for n, row in enumerate(rows, 1):
            row["appearance"], row["appearances"] = n, len(rows)
