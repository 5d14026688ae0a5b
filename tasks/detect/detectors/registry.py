"""Detector plugins by ``type``: the configs (one discriminated union) and what builds each.

A run's detector mode (``motion+person+ocr``, ``yolo+face``... see ``mode``) becomes a tuple of
configs here, from the service's settings and the run's options; ``create`` builds a plugin from
its config. Adding a detector is a config class with its own ``type``, a class implementing
``Detector``, and one line in ``REGISTRY``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from tasks.detect.detectors.base import Detector
from tasks.detect.detectors.face import FaceConfig, FaceDetector
from tasks.detect.detectors.motion import MotionConfig, MotionDetector
from tasks.detect.detectors.ocr import OcrConfig, OcrDetector
from tasks.detect.detectors.person import PersonConfig, PersonDetector
from tasks.detect.detectors.yolo import YoloConfig, YoloDetector
from ves.detector_mode import DetectorMode
from ves.settings import Settings

DetectorConfig = Annotated[
    MotionConfig | PersonConfig | FaceConfig | OcrConfig | YoloConfig,
    Field(discriminator="type"),
]
DETECTOR_CONFIG: TypeAdapter[DetectorConfig] = TypeAdapter(DetectorConfig)

REGISTRY: dict[str, Callable[[Any], Detector]] = {
    "motion": MotionDetector,
    "person": PersonDetector,
    "face": FaceDetector,
    "ocr": OcrDetector,
    "yolo": YoloDetector,
}


def create(config: DetectorConfig) -> Detector:
    """The plugin of ``config`` (may raise ``DetectorUnavailable`` while loading its model)."""
    return REGISTRY[config.type](config)


def configs_for(mode: DetectorMode, settings: Settings, yolo_model: Path | None) -> tuple[Any, ...]:
    """The configs of a detector mode, ``motion`` first (it gates the others).

    A ``yolo`` mode without any model still yields a ``yolo`` config (with an empty path), so the
    run falls back to motion visibly instead of silently running without it.
    """
    configs: list[Any] = [MotionConfig()]
    if mode.needs_model:
        configs.append(
            YoloConfig(
                model_path=yolo_model or Path(),
                names_path=settings.yolo_names,
                confidence=settings.yolo_confidence,
                threads=settings.onnx_threads,
            )
        )
    if mode.names_people:
        configs.append(
            PersonConfig(model_path=settings.person_model, threads=settings.onnx_threads)
        )
    if mode.finds_faces:
        configs.append(FaceConfig(model_path=settings.face_model, threads=settings.onnx_threads))
    if mode.reads_text:
        configs.append(OcrConfig(threads=settings.onnx_threads, min_score=settings.ocr_min_score))
    return tuple(configs)
