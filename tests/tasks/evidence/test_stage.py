"""Evidence: thumbnails show the box where it is, and every hash can be recomputed by anyone."""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow.parquet as pq
import pytest
from PIL import Image

from storage.artifacts.layout import THUMBS, write_table
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.spans import canonical_sha256, span_document, thumbnail_url
from tasks.evidence.stage import build_evidence, draw_thumbnail
from tasks.world_state.stage import SpanPlan
from tests.tasks.world_state.test_stage import STORY, STORY_FRAMES, build

SIZE = (480, 270)
GREY = (128, 128, 128)
SOURCE_SHA = "ab" * 32
VIDEO, RUN = "vid_0123456789abcdefghjkmnpqrs", "run_0123456789abcdefghjkmnpqrs"
Box = tuple[float, float, float, float]
Mask = npt.NDArray[np.bool_]


def write_frame(path: Path, colour: tuple[int, int, int] = GREY) -> Path:
    """A flat sampled frame as the sample stage stores it (JPEG, thumbnail size)."""
    Image.new("RGB", SIZE, colour).save(path, format="JPEG", quality=85)
    return path


@pytest.fixture
def frame_of(tmp_path: Path) -> Callable[[int], Path]:
    """``frame_of(sample_index)``: the JPEG of a sampled frame (all grey)."""
    frames = tmp_path / "frames"
    frames.mkdir()
    written: dict[int, Path] = {}

    def get(index: int) -> Path:
        if index not in written:
            written[index] = write_frame(frames / f"{index:07d}.jpg")
        return written[index]

    return get


def decode(data: bytes) -> npt.NDArray[np.int16]:
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int16)


def red_mask(pixels: npt.NDArray[np.int16]) -> Mask:
    """Pixels clearly red (the box colour is (255, 56, 56))."""
    return np.asarray(pixels[..., 0] - np.maximum(pixels[..., 1], pixels[..., 2]) > 80)


def band(shape: tuple[int, int], box: tuple[int, int, int, int], grow: int) -> Mask:
    """Pixels of the box ``(x1, y1, x2, y2)`` (inclusive) grown by ``grow`` on each side."""
    yy, xx = np.ogrid[: shape[0], : shape[1]]
    x1, y1, x2, y2 = box
    inside = (xx >= x1 - grow) & (xx <= x2 + grow) & (yy >= y1 - grow) & (yy <= y2 + grow)
    return np.asarray(inside)


@pytest.mark.parametrize(
    ("box", "pixels"),
    [
        ((0.25, 0.2, 0.75, 0.8), (120, 54, 360, 216)),
        ((0.0, 0.0, 0.5, 0.5), (0, 0, 240, 135)),
        ((0.6, 0.1, 0.9, 0.3), (288, 27, 432, 81)),
    ],
)
def test_the_box_is_drawn_where_the_box_is(
    tmp_path: Path, box: Box, pixels: tuple[int, int, int, int]
) -> None:
    image = decode(draw_thumbnail(write_frame(tmp_path / "f.jpg"), box))
    assert image.shape == (SIZE[1], SIZE[0], 3)
    red = red_mask(image)
    shape = (SIZE[1], SIZE[0])
    outline = band(shape, pixels, 0) & ~band(shape, pixels, -2)  # 2 px wide, drawn inwards
    assert red[outline].mean() > 0.9
    assert not red[~band(shape, pixels, 2)].any()  # nothing red outside the box
    assert not red[band(shape, pixels, -4)].any()  # nor inside it
    interior = image[band(shape, pixels, -6)].mean(axis=0)  # the frame itself is untouched
    assert np.abs(interior - np.array(GREY)).max() < 3


def test_no_box_leaves_the_frame_as_it_was(tmp_path: Path) -> None:
    image = decode(draw_thumbnail(write_frame(tmp_path / "f.jpg"), None))
    assert not red_mask(image).any()
    assert np.abs(image - np.array(GREY)).max() < 8


# --- build_evidence ---------------------------------------------------------------------------

PLANS = [
    SpanPlan(
        "ev_a", 1.0, 5.0, "obj_a", None, 0.9, ((5, 1.0, (0.1, 0.2, 0.3, 0.4)), (25, 5.0, None))
    ),
    SpanPlan(
        "ev_b", 0.8, 1.2, "obj_a", "evt_b", 0.3, ((5, 1.0, (0.1, 0.2, 0.3, 0.4)),),
        notes=("low confidence (0.30): review before relying on it",),
    ),
    SpanPlan("ev_c", 10.8, 11.2, None, "evt_c", 0.8, ((54, 10.8, None), (55, 11.0, None))),
]  # fmt: skip


def evidence_rows(
    plans: list[SpanPlan],
    frame_of: Callable[[int], Path],
    out: Path,
    run_notes: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """Build, write and read back ``evidence.parquet`` as the API reads it."""
    out.mkdir(parents=True, exist_ok=True)
    table = build_evidence(
        plans, frame_of, out, source_sha256=SOURCE_SHA, video_id=VIDEO, run_id=RUN,
        run_notes=run_notes,
    )  # fmt: skip
    rows: list[dict[str, Any]] = pq.read_table(write_table(out, "evidence", table)).to_pylist()
    return rows


def test_rows_follow_the_plans(frame_of: Callable[[int], Path], tmp_path: Path) -> None:
    rows = evidence_rows(PLANS, frame_of, tmp_path / "out")
    got = [
        (r["evidence_id"], r["start_s"], r["end_s"], r["object_id"], r["event_id"]) for r in rows
    ]
    assert got == [(p.evidence_id, p.start_s, p.end_s, p.object_id, p.event_id) for p in PLANS]
    assert [r["confidence"] for r in rows] == pytest.approx([0.9, 0.3, 0.8])
    assert {r["source_sha256"] for r in rows} == {SOURCE_SHA}
    for row, plan in zip(rows, PLANS, strict=True):
        assert [(f["t_s"], f["bbox"]) for f in row["frames"]] == [
            (t, pytest.approx(box) if box else None) for _, t, box in plan.frames
        ]
        assert [f["thumbnail"] for f in row["frames"]] == [
            f"{THUMBS}/{plan.evidence_id}_{k}.jpg" for k in range(len(plan.frames))
        ]


def test_every_span_hash_is_the_hash_of_its_api_document(
    frame_of: Callable[[int], Path], tmp_path: Path
) -> None:
    rows = evidence_rows(PLANS, frame_of, tmp_path / "out", run_notes=("a run note",))
    for row in rows:
        document = span_document(row, VIDEO, RUN)
        assert row["sha256"] == canonical_sha256(document)
        assert re.fullmatch(r"[0-9a-f]{64}", row["sha256"])
        assert document["frames"][0]["thumbnail_url"] == thumbnail_url(
            VIDEO, RUN, f"{row['evidence_id']}_0.jpg"
        )
        tampered = {**document, "confidence": 0.99}
        assert canonical_sha256(tampered) != row["sha256"]
    assert len({r["sha256"] for r in rows}) == len(rows)


def test_span_hashes_verify_when_read_through_duckdb(
    frame_of: Callable[[int], Path], tmp_path: Path
) -> None:
    """The API reads evidence.parquet with DuckDB; the hashes must survive that path too."""
    evidence_rows(PLANS, frame_of, tmp_path / "out", run_notes=("a run note",))
    reader = ArtifactReader()
    try:
        rows = reader.rows(tmp_path / "out", "evidence", order_by="start_s")
    finally:
        reader.close()
    assert [r["evidence_id"] for r in rows] == ["ev_b", "ev_a", "ev_c"]
    for row in rows:
        assert row["sha256"] == canonical_sha256(span_document(row, VIDEO, RUN))


def test_thumbnail_hashes_match_the_files(frame_of: Callable[[int], Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    rows = evidence_rows(PLANS, frame_of, out)
    frames = [f for r in rows for f in r["frames"]]
    assert len(frames) == sum(len(p.frames) for p in PLANS)
    for frame in frames:
        data = (out / frame["thumbnail"]).read_bytes()
        assert frame["sha256"] == hashlib.sha256(data).hexdigest()
        assert red_mask(decode(data)).any() == (frame["bbox"] is not None)
    assert sorted(p.name for p in (out / THUMBS).iterdir()) == sorted(
        f["thumbnail"].split("/")[-1] for f in frames
    )


def test_notes_are_written_by_the_system(frame_of: Callable[[int], Path], tmp_path: Path) -> None:
    rows = evidence_rows(PLANS, frame_of, tmp_path / "out", run_notes=("decoded 12 of 20 s",))
    texts = {r["evidence_id"]: [n["text"] for n in r["review_notes"]] for r in rows}
    assert texts == {
        "ev_a": ["decoded 12 of 20 s"],
        "ev_b": ["low confidence (0.30): review before relying on it", "decoded 12 of 20 s"],
        "ev_c": ["decoded 12 of 20 s"],
    }
    notes = [n for r in rows for n in r["review_notes"]]
    assert {n["author"] for n in notes} == {"system"}
    assert len({n["note_id"] for n in notes}) == len(notes)
    assert all(n["note_id"].startswith("note_") for n in notes)
    assert all(
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", n["created_at"]) for n in notes
    )


def test_the_story_world_state_is_fully_backed(
    frame_of: Callable[[int], Path], tmp_path: Path
) -> None:
    """Every id the world state cites has a span, and every span verifies."""
    world = build(STORY, STORY_FRAMES)
    rows = evidence_rows(world.spans, frame_of, tmp_path / "out")
    by_id = {r["evidence_id"]: r for r in rows}
    cited = [i for o in world.objects for i in o["evidence_ids"]]
    cited += [i for e in world.events for i in e["evidence_ids"]]
    assert sorted(cited) == sorted(by_id)
    for row in rows:
        assert row["sha256"] == canonical_sha256(span_document(row, VIDEO, RUN))
    for event in world.events:
        assert by_id[event["evidence_ids"][0]]["event_id"] == event["event_id"]
    notes = [n for r in rows for n in r["review_notes"]]
    assert notes == []  # the story's tracks are long and confident
