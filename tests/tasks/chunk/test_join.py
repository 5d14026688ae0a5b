"""The chunks of the lobby, sampled apart and joined, against the lobby sampled whole.

The lobby (20 s at 10 fps, a keyframe every 2 s, a cut at 12 s) is split at 4, 8, 12 and 16 s
with 2 s lead-ins. Sampling each chunk seeks to its keyframe; the join must give back exactly
the frames, scene scores and thumbnails of one pass over the whole file. Text instances are
joined on made-up boxes whose every id and time is known.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest

from synthetic import lobby_scene, write_video
from tasks.chunk.join import join_chunks
from tasks.chunk.plan import Chunk, plan_chunks
from tasks.chunk.stage import ChunkResult, chunk_dir
from tasks.context import SourceRef
from tasks.decode.stage import SourceInfo, decode_source
from tasks.detect.stage import DetectReport
from tasks.detections import TEXT_CLASS, Detections
from tasks.sample.sampler import SampleConfig
from tasks.sample.stage import SampledFrames, sample_video
from ves.detector_mode import DetectorMode
from ves.errors import SourceTruncated
from ves.settings import Settings

CONFIG = SampleConfig(5.0, 600.0, 320, 480, 0.3)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> SourceInfo:
    path = tmp_path_factory.mktemp("lobby") / "lobby.mp4"
    write_video(lobby_scene(), path)
    return decode_source(SourceRef("upload", None, str(path)), path.parent, Settings())


@pytest.fixture(scope="module")
def whole(source: SourceInfo, tmp_path_factory: pytest.TempPathFactory) -> SampledFrames:
    return sample_video(source, CONFIG, tmp_path_factory.mktemp("whole"))


def _report(frames: int) -> DetectReport:
    stats = {"motion": {"frames": frames, "boxes": 0, "seconds": 0.0}}
    return DetectReport(DetectorMode.parse("motion"), ["motion"], {}, stats)


def _results(
    source: SourceInfo, chunks: list[Chunk], scratch: Path, found: list[dict[str, Detections]]
) -> list[ChunkResult]:
    results = []
    for chunk, boxes in zip(chunks, found, strict=True):
        sampled = sample_video(source, CONFIG, chunk_dir(scratch, chunk), span=chunk.span)
        results.append(ChunkResult(chunk, sampled, boxes, _report(sampled.count)))
    return results


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_joined_chunks_are_the_whole_video_sampled_once(
    source: SourceInfo, whole: SampledFrames, tmp_path: Path
) -> None:
    chunks = plan_chunks(source, 600.0, chunk_s=4.0, lead_s=2.0)
    assert [c.start_s for c in chunks] == pytest.approx([0.0, 4.0, 8.0, 12.0, 16.0])
    empty = [{"motion": Detections.empty()} for _ in chunks]
    joined = join_chunks(_results(source, chunks, tmp_path, empty), source, tmp_path / "f", 2.0)
    rows = joined.sampled.rows
    assert [r["sample_index"] for r in rows] == list(range(whole.count))
    assert [r["t_s"] for r in rows] == pytest.approx([r["t_s"] for r in whole.rows], abs=1e-6)
    # The scene cut is exactly at a border (12 s): it is still seen, once, at the same frame.
    assert [(r["refresh"], r["refresh_reason"]) for r in rows] == [
        (r["refresh"], r["refresh_reason"]) for r in whole.rows
    ]
    scores = [r["scene_score"] for r in rows]
    assert scores == pytest.approx([r["scene_score"] for r in whole.rows], abs=1e-6)
    for index in range(whole.count):  # the same pixels: seeking lands on the same frames
        assert _digest(joined.sampled.thumbnail_path(index)) == _digest(whole.thumbnail_path(index))
    assert joined.sampled.decoded == whole.decoded + 4 * 20  # four 2 s lead-ins, decoded twice
    assert (joined.sampled.processed_s, joined.sampled.duration_s) == pytest.approx((20.0, 20.0))
    assert joined.report.detectors["motion"]["frames"] == whole.count + 4 * 10


def _texts(
    rows: list[tuple[float, int, tuple[float, ...], str]], origin: float = 0.0
) -> Detections:
    """OCR rows ``(t_s, instance, box, text)`` of a chunk decoded from ``origin`` at 5 fps."""
    return Detections(
        boxes=np.array([box for _, _, box, _ in rows], dtype=np.float32),
        scores=np.full(len(rows), 0.9),
        class_ids=np.zeros(len(rows)),
        frame_index=np.array([round((t - origin) * 5) for t, _, _, _ in rows]),
        t_s=np.array([t for t, _, _, _ in rows]),
        track_ids=np.array([i for _, i, _, _ in rows]),
        class_names=(TEXT_CLASS,),
        texts=[text for _, _, _, text in rows],
    )


SIGN = (0.1, 0.1, 0.3, 0.2)
OTHER = (0.6, 0.6, 0.8, 0.7)


def test_a_text_standing_across_a_border_keeps_one_id_and_one_reading(
    source: SourceInfo, tmp_path: Path
) -> None:
    first = Chunk(0, 0.0, 0.0, 4.0)
    second = Chunk(1, 2.0, 4.0, math.inf)
    times = [i / 5 for i in range(20)]
    before = _texts([(t, 7, SIGN, "EXIT 3") for t in times])  # 0..3.8 s
    after = _texts(
        [(t, 0, SIGN, "EXIT 8") for t in (2.0, 2.2, 4.0, 4.2, 6.0)]  # misread in the lead-in
        + [(t, 1, OTHER, "LOBBY") for t in (4.4, 5.0, 6.0)]  # appears after the border
        + [(t, 2, OTHER, "GONE") for t in (2.0, 2.4)],  # only in the lead-in
        origin=2.0,
    )
    found = [
        {"motion": Detections.empty(), "ocr": before},
        {"motion": Detections.empty(), "ocr": after},
    ]
    results = _results(source, [first, second], tmp_path, found)
    for result in results:
        result.report.ran.append("ocr")
        result.report.detectors["ocr"] = {"frames": 1, "boxes": 0, "seconds": 0.0}
    joined = join_chunks(results, source, tmp_path / "f", 2.0)
    texts = joined.found["ocr"]
    by_id = {int(i): set(texts.texts[texts.track_ids == i]) for i in np.unique(texts.track_ids)}
    assert by_id == {0: {"EXIT 3"}, 1: {"LOBBY"}}  # the sign kept its id and its first reading
    sign = texts.t_s[texts.track_ids == 0]
    assert sign.min() == pytest.approx(0.0) and sign.max() == pytest.approx(6.0)
    assert not np.any(texts.t_s[texts.track_ids == 0][1:] - sign[:-1] <= 0)  # no time twice
    assert joined.report.detectors["ocr"]["boxes"] == len(texts) == 20 + 3 + 3


def test_a_chunk_that_stops_before_its_end_is_a_truncated_source(
    source: SourceInfo, tmp_path: Path
) -> None:
    first = Chunk(0, 0.0, 0.0, 30.0)  # the file ends at 20 s: this chunk never reaches 30 s
    second = Chunk(1, 28.0, 30.0, math.inf)
    results = _results(source, [first], tmp_path, [{"motion": Detections.empty()}])
    results.append(ChunkResult(second, results[0].sampled, {}, _report(0)))
    with pytest.raises(SourceTruncated, match=r"decoding stopped at 20\.0 s"):
        join_chunks(results, source, tmp_path / "f", 2.0)


def test_the_joined_video_reads_its_analysis_frames_from_the_chunks(
    source: SourceInfo, whole: SampledFrames, tmp_path: Path
) -> None:
    """The joined video has the analysis pixels of one pass (the world state measures colours
    in them) without a copy: each frame is read from its chunk's file, lead-ins left out."""
    chunks = plan_chunks(source, 600.0, chunk_s=4.0, lead_s=2.0)
    empty = [{"motion": Detections.empty()} for _ in chunks]
    joined = join_chunks(_results(source, chunks, tmp_path, empty), source, tmp_path / "f", 2.0)
    frames, once = joined.sampled.analysis_frames(), whole.analysis_frames()
    assert len(frames) == len(once) == whole.count
    for index in range(whole.count):
        assert np.array_equal(frames[index], once[index]), index
    assert not (tmp_path / "f" / "analysis.u8").exists()  # read where the chunks wrote them
    with pytest.raises(IndexError):
        frames[whole.count]
