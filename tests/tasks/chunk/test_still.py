"""An object standing still across a chunk border is carried through the join.

The lobby's "loiterer" stands still at (180, 118) from 3.5 s to 9.5 s. Split at 4, 8, 12 and 16 s
with 1 s lead-ins, the chunk from 8 s starts decoding at 7 s, when the loiterer has stood still
for 3.5 s: that chunk's motion background takes it in, and the chunk alone does not see it until
it walks off. Joined, every own frame of that stretch has its box again, and when it walks off
its new pixels and its old place are one box, not two.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthetic import GroundTruth, lobby_scene, write_video
from tasks.chunk.join import join_chunks
from tasks.chunk.plan import plan_chunks
from tasks.chunk.stage import ChunkResult, chunk_dir
from tasks.context import SourceRef
from tasks.decode.stage import SourceInfo, decode_source
from tasks.detect.detectors.motion import MotionConfig
from tasks.detect.stage import detect_frames
from tasks.detections import Detections
from tasks.sample.sampler import SampleConfig
from tasks.sample.stage import sample_video
from ves.detector_mode import DetectorMode
from ves.settings import Settings

CONFIG = SampleConfig(5.0, 600.0, 320, 480, 0.3)


@pytest.fixture(scope="module")
def lobby(tmp_path_factory: pytest.TempPathFactory) -> tuple[SourceInfo, GroundTruth]:
    path = tmp_path_factory.mktemp("lobby") / "lobby.mp4"
    truth = write_video(lobby_scene(), path)
    return decode_source(SourceRef("upload", None, str(path)), path.parent, Settings()), truth


def _overlaps(dets: Detections, t: float, box: tuple[float, float, float, float]) -> bool:
    here = dets.boxes[np.abs(dets.t_s - t) < 1e-3]
    x1, y1, x2, y2 = box
    return any(b[0] < x2 and b[2] > x1 and b[1] < y2 and b[3] > y1 for b in here)


def test_a_loiterer_still_across_a_border_keeps_its_box_and_leaves_as_one(
    lobby: tuple[SourceInfo, GroundTruth], tmp_path: Path
) -> None:
    source, truth = lobby
    chunks = plan_chunks(source, 600.0, chunk_s=4.0, lead_s=1.0)
    assert [c.decode_from_s for c in chunks][2] == pytest.approx(6.0)  # keyframes every 2 s
    results = []
    for chunk in chunks:
        sampled = sample_video(source, CONFIG, chunk_dir(tmp_path, chunk), span=chunk.span)
        found, report = detect_frames(
            sampled, sampled.rows, [MotionConfig()], DetectorMode.parse("motion")
        )
        results.append(ChunkResult(chunk, sampled, found, report))
    loiterer = truth.object_named("loiterer")
    w, h = truth.spec.width, truth.spec.height
    place = {t: loiterer.boxes[round(t * truth.fps)] for t in np.arange(8.0, 9.4, 0.2)}
    normalised = {t: (b[0] / w, b[1] / h, b[2] / w, b[3] / h) for t, b in place.items()}
    alone = results[2].found["motion"]
    unseen = [t for t, box in normalised.items() if not _overlaps(alone, t, box)]
    assert len(unseen) >= 5, "the chunk alone should have lost the still loiterer"
    joined = join_chunks(results, source, tmp_path / "frames", 2.0).found["motion"]
    missing = [t for t, box in normalised.items() if not _overlaps(joined, t, box)]
    assert missing == []
    # Walking off (from 9.5 s), one box a frame touches where it stood until that is background.
    for t in np.arange(9.6, 10.6, 0.2):
        touching = [
            b for b in joined.boxes[np.abs(joined.t_s - t) < 1e-3] if b[2] > normalised[8.0][0]
        ]
        assert len(touching) <= 1, (t, touching)
