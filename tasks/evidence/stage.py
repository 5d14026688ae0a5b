"""Stage 7, evidence: draw each span's frames, hash every thumbnail and every span.

Each span planned by the world state gets its frames as JPEG thumbnails with the box drawn, the
sha256 of each thumbnail and of the source, system review notes, and the sha256 of its canonical
JSON as the API serves it, so an exported span can be verified byte for byte.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from io import BytesIO
from pathlib import Path
from typing import Any

import pyarrow as pa
from PIL import Image, ImageDraw
from prefect import task
from prefect.cache_policies import NONE

from storage.artifacts.hits import write_hits
from storage.artifacts.layout import THUMBS, to_table, write_table
from storage.artifacts.spans import canonical_sha256, span_document
from tasks.context import RunContext
from tasks.decode.stage import SourceInfo
from tasks.sample.stage import SampledFrames
from tasks.world_state.stage import SpanPlan
from ves.clock import now_rfc3339
from ves.ids import new_id

_BOX_RGB = (255, 56, 56)


def draw_thumbnail(frame_jpeg: Path, box: tuple[float, float, float, float] | None) -> bytes:
    """The sampled frame as JPEG bytes, with ``box`` (normalised) drawn when given."""
    with Image.open(frame_jpeg) as image:
        picture = image.convert("RGB")
    if box is not None:
        w, h = picture.size
        x1, y1, x2, y2 = box[0] * w, box[1] * h, box[2] * w, box[3] * h
        width = max(2, round(w / 240))
        ImageDraw.Draw(picture).rectangle((x1, y1, x2, y2), outline=_BOX_RGB, width=width)
    buffer = BytesIO()
    picture.save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def _frames(plan: SpanPlan, frame_of: Callable[[int], Path], thumbs: Path) -> list[dict[str, Any]]:
    result = []
    for k, (sample, t, box) in enumerate(plan.frames):
        name = f"{plan.evidence_id}_{k}.jpg"
        data = draw_thumbnail(frame_of(sample), box)
        (thumbs / name).write_bytes(data)
        result.append(
            {
                "t_s": t,
                "bbox": list(box) if box else None,
                "thumbnail": f"{THUMBS}/{name}",
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
    return result


def _notes(texts: Sequence[str], created_at: str) -> list[dict[str, Any]]:
    return [
        {"note_id": new_id("note"), "author": "system", "text": t, "created_at": created_at}
        for t in texts
    ]


def build_evidence(
    spans: Sequence[SpanPlan],
    frame_of: Callable[[int], Path],
    out_dir: Path,
    *,
    source_sha256: str,
    video_id: str,
    run_id: str,
    run_notes: Sequence[str] = (),
) -> pa.Table:
    """The evidence table (the pure core of the stage); thumbnails go to ``out_dir/thumbs``."""
    thumbs = out_dir / THUMBS
    thumbs.mkdir(parents=True, exist_ok=True)
    created_at = now_rfc3339()
    rows = [
        {
            "evidence_id": p.evidence_id,
            "start_s": p.start_s,
            "end_s": p.end_s,
            "object_id": p.object_id,
            "event_id": p.event_id,
            "confidence": p.confidence,
            "frames": _frames(p, frame_of, thumbs),
            "review_notes": _notes([*p.notes, *run_notes], created_at),
            "source_sha256": source_sha256,
            "sha256": "",
        }
        for p in spans
    ]
    # Hash the rows as they will be read back (after the schema's casts), as the API serves them.
    stored = to_table("evidence", rows).to_pylist()
    for row in stored:
        row["sha256"] = canonical_sha256(span_document(row, video_id, run_id))
    return to_table("evidence", stored)


@task(name="evidence", cache_policy=NONE)
def evidence_task(
    ctx: RunContext,
    spans: list[SpanPlan],
    source: SourceInfo,
    sampled: SampledFrames,
    run_notes: tuple[str, ...] = (),
) -> int:
    """Draw, hash and write the evidence spans (each with the run's notes), then the run's
    hits (what the workspace search reads); returns how many spans."""
    ctx.report("evidence")
    table = build_evidence(
        spans,
        sampled.thumbnail_path,
        ctx.layout.out_dir,
        source_sha256=source.sha256,
        video_id=ctx.video_id,
        run_id=ctx.run_id,
        run_notes=run_notes,
    )
    write_table(ctx.layout.out_dir, "evidence", table)
    write_hits(ctx.layout.out_dir)  # what the workspace search reads, one file per run
    return int(table.num_rows)
