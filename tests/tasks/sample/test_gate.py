"""The activity gate in the sample stage, against idle scenes whose events are known exactly.

A gated pass decodes only the active spans of the activity map and holds the last decoded frame
for the sampled times in between; it must keep the same sampled times as the full decode, show
the same pixels where it decoded, find motion on exactly the frames the full decode finds it on
(so every event's first and last seen are the same), and decode fewer frames.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt
import pytest

from tasks.activity.map import map_activity
from tasks.activity.stage import gate_for, gate_summary, plan_gate
from tasks.context import SourceRef
from tasks.decode.stage import SourceInfo, decode_source
from tasks.detect.detectors.motion import MotionConfig, MotionDetector
from tasks.detect.stage import detect_frames, frame_views
from tasks.sample.frames import still_stretches
from tasks.sample.gate import DecodeRange, Gate
from tasks.sample.sampler import SampleConfig
from tasks.sample.stage import SampledFrames, sample_video
from testkit.remux import remux
from ves.detector_mode import DetectorMode
from ves.settings import Settings

FPS = 15
SIZE = (320, 180)
SAMPLE_FPS = 5.0


@dataclass(frozen=True)
class Move:
    """A box that crosses the frame between ``t0`` and ``t1`` (or, with ``stays``, appears at
    ``t0`` and stays: a sign put up)."""

    t0: float
    t1: float
    y: int = 60
    size: int = 28
    stays: bool = False
    thin: bool = False  # a sign of thin strokes: too thin for the motion detector's opening

    def paint(self, frame: npt.NDArray[np.float32], t: float) -> None:
        if self.thin and t >= self.t0:
            for row in range(self.y, self.y + self.size, 6):  # lines of text, 1 px strokes
                frame[row, 200 : 200 + 3 * self.size : 2] += 60.0
        elif self.stays and t >= self.t0:
            frame[self.y : self.y + self.size, 220 : 220 + 2 * self.size] = 235.0
        elif not self.stays and self.t0 <= t <= self.t1:
            x = int((t - self.t0) / max(self.t1 - self.t0, 1e-6) * (SIZE[0] - self.size))
            frame[self.y : self.y + self.size, x : x + self.size // 2] = (20.0, 200.0, 40.0)


def write_idle(
    path: Path,
    seconds: float,
    moves: list[Move],
    gop_s: float,
    bframes: bool,
    codec: str = "libx264",
) -> None:
    """An idle textured scene with ``moves``, H.264 (or ``codec``) with a fixed GOP, light
    noise."""
    rng = np.random.default_rng(11)
    coarse = rng.uniform(60, 160, size=(9, 16, 3)).astype(np.float32)
    backdrop = np.kron(coarse, np.ones((20, 20, 1), dtype=np.float32))
    with av.open(str(path), "w") as out:
        options = {
            "preset": "veryfast",
            "crf": "23",
            "sc_threshold": "0",
            "bf": "3" if bframes else "0",
        }
        stream = out.add_stream("libx264", rate=FPS, options=options)
        stream.width, stream.height, stream.pix_fmt = SIZE[0], SIZE[1], "yuv420p"
        stream.gop_size = round(gop_s * FPS)
        stream.time_base = Fraction(1, FPS)
        for index in range(round(seconds * FPS)):
            frame = backdrop.copy()
            for move in moves:
                move.paint(frame, index / FPS)
            frame += rng.normal(0, 1.5, frame.shape).astype(np.float32)
            picture = av.VideoFrame.from_ndarray(np.clip(frame, 0, 255).astype(np.uint8), "rgb24")
            picture.pts = index
            out.mux(stream.encode(picture))
        out.mux(stream.encode(None))


def config(gate: Gate | None) -> SampleConfig:
    return SampleConfig(SAMPLE_FPS, 600.0, 240, 320, 0.3, gate=gate)


def motion_frames(sampled: SampledFrames) -> list[int]:
    """The sampled frames the motion detector finds a box on."""
    views = frame_views(sampled, sampled.rows)
    found = MotionDetector(MotionConfig()).detect(views)
    return sorted({int(i) for i in found.frame_index})


@dataclass(frozen=True)
class Pair:
    source: SourceInfo
    full: SampledFrames
    gated: SampledFrames
    gate: Gate
    moves: list[Move]


CASES = {
    "passes-2s-gop": (40.0, [Move(9.3, 10.1), Move(24.7, 27.5, y=100, size=50)], 2.0, False),
    "bframes-sign": (40.0, [Move(6.1, 7.0), Move(21.4, 0.0, stays=True)], 2.0, True),
    "thin-sign": (40.0, [Move(7.2, 8.0), Move(23.3, 0.0, stays=True, thin=True)], 2.0, True),
    "between-keyframes-5s-gop": (60.0, [Move(16.2, 16.8), Move(41.0, 43.5)], 5.0, True),
    "hevc": (40.0, [Move(11.5, 12.6), Move(27.2, 29.0, y=90, size=40)], 2.0, True),
    "mpeg-ts": (40.0, [Move(13.3, 14.0), Move(30.5, 31.5)], 2.0, True),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    seconds, moves, gop_s, bframes = CASES[request.param]
    folder = tmp_path_factory.mktemp(request.param)
    path = folder / "idle.mp4"
    write_idle(
        path, seconds, moves, gop_s, bframes, "libx265" if request.param == "hevc" else "libx264"
    )
    if request.param == "mpeg-ts":  # as an HLS stream's segments are: the stream starts late
        path = remux(path, folder / "idle.ts")
    source = decode_source(SourceRef("upload", None, str(path)), folder, Settings(data_dir=folder))
    plan = gate_for(path)
    assert plan.gate is not None, plan.summary
    full = sample_video(source, config(None), folder / "full")
    gated = sample_video(source, config(plan.gate), folder / "gated")
    return Pair(source, full, gated, plan.gate, moves)


def test_the_gate_keeps_every_sampled_time_and_decodes_less(pair: Pair) -> None:
    full, gated = pair.full, pair.gated
    # The same sampled times; a held time is the sampling grid's own, where the full decode
    # took the first decoded frame at or after it (within one frame: B-frames are skipped).
    assert len(gated.rows) == len(full.rows)
    for mine, theirs in zip(gated.rows, full.rows, strict=True):
        assert abs(mine["t_s"] - theirs["t_s"]) <= 1 / FPS + 1e-6
    assert gated.held > 0 and gated.skipped > 0
    assert gated.decoded + gated.skipped >= full.decoded  # NONREF frames are skipped in both
    assert gated.decoded < 0.8 * full.decoded
    assert math.isclose(gated.processed_s, full.processed_s, abs_tol=1 / FPS)
    assert sum(1 for r in gated.rows if r["held"]) == gated.held
    assert not any(r["held"] for r in full.rows)


def test_decoded_frames_are_the_full_decode_and_held_ones_repeat_the_last(pair: Pair) -> None:
    full, gated = pair.full.analysis_frames(), pair.gated.analysis_frames()
    last_decoded = None
    for index, row in enumerate(pair.gated.rows):
        if row["held"]:
            assert last_decoded is not None
            assert np.array_equal(gated[index], gated[last_decoded])
            assert pair.gated.thumbnail_path(index).samefile(
                pair.gated.thumbnail_path(last_decoded)
            )
            # Still: what the held frame shows is what the full decode shows there, but noise.
            assert np.abs(gated[index].astype(int) - full[index].astype(int)).mean() < 4.0
        else:
            assert np.array_equal(gated[index], full[index]), row["t_s"]
            last_decoded = index


def test_motion_is_found_on_the_same_frames_as_with_the_full_decode(pair: Pair) -> None:
    """Every event is seen from the same first to the same last sampled frame."""
    assert motion_frames(pair.gated) == motion_frames(pair.full)
    assert motion_frames(pair.full)  # the scene's events are there to be seen


def test_a_gate_cut_to_a_chunk_starts_with_its_first_gop() -> None:
    keyframes = [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    gate = Gate.of_spans([(0.0, 2.0), (6.5, 7.0)], keyframes, end_s=12.0)
    assert gate.ranges == (DecodeRange(0.0, 2.0), DecodeRange(6.0, 7.0))
    chunk = gate.within(4.0, 10.0)
    assert chunk.ranges == (DecodeRange(4.0, 7.0),)  # its first GOP 4-6 joins the event's 6-7
    assert gate.within(8.0, math.inf).ranges == (DecodeRange(8.0, 10.0),)


def test_a_stream_without_keyframe_cadence_is_decoded_whole_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "one-gop.mp4"
    write_idle(path, 8.0, [Move(3.0, 4.0)], 60.0, False)
    plan = gate_for(path)
    assert plan.gate is None
    assert plan.summary["used"] is False and "keyframe" in plan.summary["fallback"]
    assert gate_summary(plan, ())["skipped_spans"] == []


def test_the_cost_summary_lists_the_still_stretches_within_what_was_processed(
    pair: Pair,
) -> None:
    plan = plan_gate(map_activity(Path(pair.source.path)))
    summary = gate_summary(plan, still_stretches(list(pair.gated.rows)))
    spans = summary["skipped_spans"]
    assert summary["used"] is True and spans
    still = sum(s["end_s"] - s["start_s"] for s in spans)
    assert math.isclose(still / pair.gated.processed_s, summary["still_fraction"], abs_tol=0.05)
    for move in pair.moves:  # no still stretch holds a planted change
        changing = (move.t0, move.t0 + 1 / FPS) if move.stays or move.thin else (move.t0, move.t1)
        for span in spans:
            assert changing[1] <= span["start_s"] or changing[0] >= span["end_s"], (move, span)


def test_held_frames_go_through_no_detector_and_carry_their_source_rows(pair: Pair) -> None:
    """Through the detect stage: the detectors run on the decoded frames only; a held frame's
    rows are its source frame's (the last decoded one), so every event is still seen from the
    same first to the same last sampled frame as with the full decode."""
    rows = pair.gated.rows
    found, report = detect_frames(pair.gated, rows, [MotionConfig()], DetectorMode.parse("motion"))
    motion = found["motion"]
    decoded = [r["sample_index"] for r in rows if not r["held"]]
    assert report.held == pair.gated.held > 0
    assert report.detectors["motion"]["frames"] == len(decoded) < len(rows)
    assert sorted({int(i) for i in motion.frame_index}) == motion_frames(pair.full)
    source = None
    for row in rows:
        if not row["held"]:
            source = row["sample_index"]
            continue
        mine = motion.frame_index == row["sample_index"]
        theirs = motion.frame_index == source
        assert np.array_equal(motion.boxes[mine], motion.boxes[theirs]), row["t_s"]
        assert np.allclose(motion.t_s[mine], row["t_s"])
