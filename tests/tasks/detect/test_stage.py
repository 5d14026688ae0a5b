"""The detect stage: plugins by type, what ran, and honest fallback (models built with ``onnx``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from synthetic import lobby_scene, write_video
from tasks.detect.detectors.base import FrameView
from tasks.detect.detectors.motion import MotionConfig, MotionDetector
from tasks.detect.detectors.ocr import OcrConfig
from tasks.detect.detectors.registry import DETECTOR_CONFIG, configs_for, create
from tasks.detect.detectors.yolo import YoloConfig, YoloDetector
from tasks.detect.stage import DetectReport, detect_frames, detections_table
from tasks.detect.text_tracks import explained_by_text
from tasks.detections import TEXT_CLASS, Detections, detections_from_table
from tasks.sample.sampler import SampleConfig
from tasks.sample.stage import SampledFrames, sample_video
from tasks.track.stage import track_table
from tests.fixtures.onnx_models import build_colour_detector
from tests.tasks.sample.test_stage import probe
from ves.detector_mode import DetectorMode
from ves.errors import DetectorUnavailable
from ves.settings import Settings


@pytest.fixture(scope="module")
def lobby_frames(tmp_path_factory: pytest.TempPathFactory) -> SampledFrames:
    root = tmp_path_factory.mktemp("lobby")
    write_video(lobby_scene(), root / "lobby.mp4")
    source = probe(root / "lobby.mp4", Settings(data_dir=root))
    return sample_video(source, SampleConfig(5.0, 600.0, 240, 480, 0.3), root / "scratch")


@pytest.fixture(scope="module")
def colour_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("models") / "colours.onnx"
    build_colour_detector(path, (320, 320), dynamic_batch=True)
    return path


@pytest.mark.parametrize(
    ("mode", "types"),
    [
        ("motion", ["motion"]),
        ("motion+ocr", ["motion", "ocr"]),
        ("yolo", ["motion", "yolo"]),
        ("yolo+ocr", ["motion", "yolo", "ocr"]),
    ],
)
def test_a_mode_is_motion_first_then_its_plugins(
    mode: str, types: list[str], settings: Settings
) -> None:
    configs = configs_for(DetectorMode.parse(mode), settings, Path("m.onnx"))
    assert [c.type for c in configs] == types


def test_configs_are_chosen_by_type_and_strict() -> None:
    assert isinstance(DETECTOR_CONFIG.validate_python({"type": "ocr"}), OcrConfig)
    assert isinstance(DETECTOR_CONFIG.validate_python({"type": "motion"}), MotionConfig)
    yolo = DETECTOR_CONFIG.validate_python({"type": "yolo", "model_path": "m.onnx"})
    assert isinstance(yolo, YoloConfig) and yolo.model_path == Path("m.onnx")
    with pytest.raises(ValueError, match="tag"):
        DETECTOR_CONFIG.validate_python({"type": "sonar"})
    with pytest.raises(ValueError, match="extra"):
        DETECTOR_CONFIG.validate_python({"type": "ocr", "language": "klingon"})


def test_create_builds_the_plugin_of_a_config(colour_model: Path) -> None:
    assert isinstance(create(MotionConfig()), MotionDetector)
    yolo = create(YoloConfig(model_path=colour_model))
    assert isinstance(yolo, YoloDetector) and yolo.name == "yolo"


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match=r"motion, motion\+person, .*, yolo\+ocr"):
        DetectorMode.parse("radar")


def test_a_yolo_mode_without_a_model_falls_back_and_says_so(
    lobby_frames: SampledFrames, settings: Settings
) -> None:
    rows = list(lobby_frames.rows)
    found, report = detect_frames(
        lobby_frames,
        rows,
        configs_for(DetectorMode.parse("yolo"), settings, None),
        DetectorMode.parse("yolo"),
    )
    assert set(found) == {"motion"}
    assert (str(report.mode), report.physical) == ("motion", "motion")
    assert report.fallback_reason is not None and "no yolo model is configured" in (
        report.fallback_reason
    )


def test_a_corrupt_person_model_falls_back_to_motion_and_says_so(
    lobby_frames: SampledFrames, tmp_path: Path
) -> None:
    broken = tmp_path / "person.onnx"
    broken.write_bytes(b"\x08\x01 not a network")
    mode = DetectorMode.parse("motion+person")
    settings = Settings(data_dir=tmp_path, person_model=broken)
    found, report = detect_frames(
        lobby_frames, list(lobby_frames.rows), configs_for(mode, settings, None), mode
    )
    assert set(found) == {"motion"} and str(report.mode) == "motion"
    assert report.fallback_reason is not None and "person model" in report.fallback_reason
    assert report.notes() == (
        f"detector fallback: asked for motion+person, ran motion ({report.fallback_reason})",
    )


def test_yolo_runs_only_where_motion_was_seen(
    lobby_frames: SampledFrames, settings: Settings, colour_model: Path
) -> None:
    rows = list(lobby_frames.rows)
    configs = configs_for(DetectorMode.parse("yolo"), settings, colour_model)
    found, report = detect_frames(lobby_frames, rows, configs, DetectorMode.parse("yolo"))
    assert str(report.mode) == "yolo" and report.fallback_reason is None
    moving = set(found["motion"].frame_index.tolist())
    refreshed = {r["sample_index"] for r in rows if r["refresh"]}
    assert set(found["yolo"].frame_index.tolist()) <= moving | refreshed
    assert report.detectors["yolo"]["frames"] == len(moving | refreshed) < len(rows)
    assert set(found["yolo"].class_names) == {"red", "blue"}


def test_a_model_that_fails_while_running_falls_back(
    lobby_frames: SampledFrames,
    settings: Settings,
    colour_model: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fails(self: YoloDetector, frames: Sequence[FrameView]) -> Detections:
        raise DetectorUnavailable("the yolo model failed on frame 3 (out of memory)")

    monkeypatch.setattr(YoloDetector, "detect", fails)
    rows = list(lobby_frames.rows)
    configs = configs_for(DetectorMode.parse("yolo"), settings, colour_model)
    found, report = detect_frames(lobby_frames, rows, configs, DetectorMode.parse("yolo"))
    assert set(found) == {"motion"} and str(report.mode) == "motion"
    assert report.fallback_reason == "yolo: the yolo model failed on frame 3 (out of memory)"


def test_report_names_what_ran() -> None:
    report = DetectReport(
        DetectorMode.parse("yolo+ocr"), ran=["motion", "ocr"], failures={"yolo": "gone"}
    )
    assert (str(report.mode), report.physical) == ("motion+ocr", "motion")
    assert report.notes() == ("detector fallback: asked for yolo+ocr, ran motion+ocr (yolo: gone)",)
    assert DetectReport(DetectorMode.parse("motion"), ran=["motion"]).notes() == ()


def _dets(rows: list[tuple[int, tuple[float, float, float, float]]], **extra: object) -> Detections:
    return Detections(
        boxes=np.asarray([box for _, box in rows], np.float32),
        scores=np.full(len(rows), 0.9, np.float32),
        class_ids=np.zeros(len(rows), np.int64),
        frame_index=np.asarray([f for f, _ in rows], np.int64),
        t_s=np.asarray([f * 0.2 for f, _ in rows], np.float32),
        **extra,  # type: ignore[arg-type]
    )


SIGN = (0.70, 0.20, 0.90, 0.30)
TEXT_IN_SIGN = (0.72, 0.22, 0.88, 0.28)


def test_a_motion_track_that_is_a_sign_appearing_is_explained_by_its_text() -> None:
    frames = range(20, 45)
    sign = _dets([(f, SIGN) for f in frames], track_ids=np.ones(25, np.int64))
    walker = _dets(
        [(f, (0.01 * f, 0.6, 0.01 * f + 0.1, 0.9)) for f in frames],
        track_ids=np.full(25, 2, np.int64),
    )
    text = _dets([(f, TEXT_IN_SIGN) for f in frames], class_names=(TEXT_CLASS,))
    both = Detections.concatenate([sign, walker])
    assert explained_by_text(both, text).tolist() == [1]
    # Text read on under 70 % of the track's frames does not explain it.
    few = text.select(text.frame_index < 30)
    assert explained_by_text(both, few).tolist() == []


def test_the_track_stage_keeps_text_rows_and_drops_the_sign_motion() -> None:
    frames = range(0, 30)
    sign = _dets([(f, SIGN) for f in frames])
    text = _dets(
        [(f, TEXT_IN_SIGN) for f in frames],
        class_names=(TEXT_CLASS,),
        texts=["EXIT 3"] * 30,
        track_ids=np.ones(30, np.int64),
    )
    table = detections_table({"motion": sign, "ocr": text})
    tracks, count = track_table(table, "motion")
    assert count == 1
    assert set(tracks.column("detector").to_pylist()) == {"ocr"}
    back = detections_from_table(tracks)
    assert set(back.texts.tolist()) == {"EXIT 3"} and len(back) == 30
    assert isinstance(tracks, pa.Table)
