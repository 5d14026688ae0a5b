"""The ``ocr`` detector with the real PP-OCR models, against signs whose text and times are known.

The video has two signs: one shown all along, one for 15 s only, and people walking below them;
the detect stage must read both strings and place the second one's interval within 1.5 s.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from synthetic import (
    GroundTruth,
    MovingObject,
    SceneSpec,
    TextSign,
    ground_truth,
    render_frame,
    write_video,
)
from tasks.detect.detectors.base import FrameView
from tasks.detect.detectors.ocr import OcrConfig, OcrDetector
from tasks.detect.detectors.registry import configs_for
from tasks.detect.stage import detect_frames
from tasks.detections import Detections
from tasks.sample.sampler import SampleConfig
from tasks.sample.stage import SampledFrames, sample_video
from tests.tasks.sample.test_stage import probe
from ves.detector_mode import DetectorMode
from ves.settings import Settings

pytestmark = pytest.mark.slow

ALWAYS = TextSign("OPEN DAILY", 0.0, 30.0, (320, 48), font_px=36)
FOR_15_S = TextSign("SALE 50%", 10.0, 25.0, (470, 190), font_px=32)


MOTION_OCR = DetectorMode.parse("motion+ocr")


def two_signs() -> SceneSpec:
    """30 s at 640x360, 10 fps: a sign all along, one from 10 to 25 s, two people walking below."""
    walker = MovingObject("walker", (210, 40, 40), (40, 88), ((1.0, -30, 300), (12.0, 670, 300)))
    visitor = MovingObject("visitor", (50, 80, 210), (44, 80), ((14.0, 670, 290), (28.0, -30, 290)))
    return SceneSpec(
        width=640,
        height=360,
        fps=10,
        duration_s=30.0,
        objects=(walker, visitor),
        signs=(ALWAYS, FOR_15_S),
        noise=2.0,
    )


@dataclass(frozen=True)
class Sampled:
    truth: GroundTruth
    frames: SampledFrames


@pytest.fixture(scope="module")
def signs(tmp_path_factory: pytest.TempPathFactory) -> Sampled:
    root = tmp_path_factory.mktemp("signs")
    truth = write_video(two_signs(), root / "signs.mp4")
    source = probe(root / "signs.mp4", Settings(data_dir=root))
    cfg = SampleConfig(5.0, 600.0, 240, 480, 0.3, text_width=1280)
    return Sampled(truth, sample_video(source, cfg, root / "scratch"))


def test_reads_every_sign_on_a_frame_where_the_truth_says_it_is() -> None:
    spec = two_signs()
    image = render_frame(spec, 150)  # t = 15 s: both signs
    truth = {t.text: t.box for t in ground_truth(spec).texts_at(150)}
    read = OcrDetector(OcrConfig()).read(image)
    assert sorted(text for _, text, _ in read) == sorted(truth)
    for box, text, score in read:
        plate = truth[text]
        centre = ((box[0] + box[2]) / 2 * spec.width, (box[1] + box[3]) / 2 * spec.height)
        assert plate[0] <= centre[0] <= plate[2] and plate[1] <= centre[1] <= plate[3], text
        assert score >= 0.8


def test_a_frame_without_text_reads_nothing() -> None:
    blank = np.full((360, 640, 3), 128, dtype=np.uint8)
    assert OcrDetector(OcrConfig()).read(blank) == []


def test_both_signs_are_found_and_the_second_ones_interval_is_true(signs: Sampled) -> None:
    rows = list(signs.frames.rows)
    settings = Settings(data_dir=Path(signs.frames.frames_dir))
    found, report = detect_frames(
        signs.frames, rows, configs_for(MOTION_OCR, settings, None), MOTION_OCR
    )
    assert str(report.mode) == "motion+ocr" and report.fallback_reason is None
    texts = found["ocr"]
    by_instance: dict[int, list[int]] = {}
    for i, number in enumerate(texts.track_ids):
        by_instance.setdefault(int(number), []).append(i)
    seen = {
        str(texts.texts[rows_of[0]]): (
            float(texts.t_s[rows_of].min()),
            float(texts.t_s[rows_of].max()),
        )
        for rows_of in by_instance.values()
    }
    assert set(seen) == {ALWAYS.text, FOR_15_S.text}
    start, end = seen[FOR_15_S.text]
    print(f"{FOR_15_S.text!r}: seen {start:.1f}-{end:.1f} s, truth 10.0-25.0 s")
    assert abs(start - FOR_15_S.start_s) <= 1.5 and abs(end - FOR_15_S.end_s) <= 1.5
    start, end = seen[ALWAYS.text]
    assert start <= 1.5 and end >= signs.truth.duration_s - 1.5


def test_text_is_read_on_few_frames_only(signs: Sampled) -> None:
    looks = [r["t_s"] for r in signs.frames.rows if r["text_look"]]
    assert looks[0] == 0.0  # the first frame is always read
    assert len(looks) <= 12  # at most 12 a minute (the default budget), in a 30 s video
    assert all(b - a >= 1.0 - 1e-6 for a, b in itertools.pairwise(looks))
    # A look follows the second sign's appearance within a second and a half (once it settled).
    assert any(FOR_15_S.start_s <= t <= FOR_15_S.start_s + 1.5 for t in looks), looks


def test_text_frames_are_kept_at_full_size_and_only_for_looks(signs: Sampled) -> None:
    text_dir = Path(signs.frames.frames_dir) / "text"
    kept = sorted(p.name for p in text_dir.iterdir())
    looks = [r["sample_index"] for r in signs.frames.rows if r["text_look"]]
    assert kept == [f"{i:07d}.jpg" for i in looks]
    view = FrameView(looks[0], 0.0, True, signs.frames.frames_dir, (240, 136), Detections.empty())
    assert view.full() is None  # a view not marked as a look has no full-size frame
    marked = FrameView(
        looks[0], 0.0, True, signs.frames.frames_dir, (240, 136), Detections.empty(), True
    )
    full = marked.full()
    assert full is not None and full.shape == (360, 640, 3)  # never upscaled past the source


def test_ocr_that_cannot_load_falls_back_to_motion(
    signs: Sampled, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> None:
        raise RuntimeError("model file is truncated")

    monkeypatch.setattr("tasks.detect.detectors.ocr._engine", broken)
    rows = list(signs.frames.rows)
    settings = Settings(data_dir=Path(signs.frames.frames_dir))
    found, report = detect_frames(
        signs.frames, rows, configs_for(MOTION_OCR, settings, None), MOTION_OCR
    )
    assert set(found) == {"motion"} and str(report.mode) == "motion"
    assert report.fallback_reason is not None and "truncated" in report.fallback_reason
    assert report.notes() and "asked for motion+ocr, ran motion" in report.notes()[0]
