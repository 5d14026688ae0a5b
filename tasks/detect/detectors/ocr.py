"""The ``ocr`` detector: text in the video, read by RapidOCR's PP-OCR models on onnxruntime.

The models (text detection and recognition, PP-OCRv6 small) ship inside the ``rapidocr`` wheel, so
nothing is downloaded. Text detection runs on the frame limited to ``det_limit_side`` pixels (640:
about 150 to 250 ms per 720p or 1080p frame here), recognition on crops of the full-size frame,
so small clean text is still read. The angle classifier is off: text in video is rarely upside
down, and it costs a third more.

It reads only the frames the sample stage kept at full size (``FrameView.text_look``: refreshes and
settled changes, bounded per minute, see ``tasks.sample.text_looks``), then follows each text over
every sampled frame through the glances (``tasks.detect.text_tracks``). Each text at one place is
one tracked instance: its rows carry class ``text``, the text read, the mean OCR score and the
instance number as ``track_ids``.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from tasks.detect.detectors.base import FrameView
from tasks.detect.text_tracks import Box, Reading, TextInstance, TextTrackConfig, text_instances
from tasks.detections import TEXT_CLASS, Detections
from tasks.sample.frames import Frame
from ves.errors import DetectorUnavailable


class OcrConfig(BaseModel):
    """Settings of the ``ocr`` detector.

    Attributes:
        type: plugin discriminator.
        threads: onnxruntime intra-op threads (the machine's cores, shared with decoding).
        det_limit_side: longest side, in pixels, text detection runs at.
        min_score: recognition confidence below which a reading is dropped.
        min_chars: readings with fewer letters or digits are dropped (specks read as ``.``).
        max_line_height: readings whose box is taller than this fraction of the frame are
            dropped: no line of text is a third of the picture high, and the text detector
            sometimes boxes a whole textured frame (seen on random scenes: "80" over the frame,
            which then hid every moving thing from motion).
        same_level: grey levels within which a text's region counts as unchanged.
        max_gap_s: a text hidden for less than this (someone walking by) stays one sighting.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["ocr"] = "ocr"
    threads: int = Field(2, ge=1, le=64)
    det_limit_side: int = Field(640, ge=160, le=4096)
    min_score: float = Field(0.6, ge=0.0, le=1.0)
    min_chars: int = Field(2, ge=1)
    max_line_height: float = Field(0.3, gt=0.0, le=1.0)
    same_level: float = Field(12.0, gt=0.0)
    max_gap_s: float = Field(2.0, ge=0.0)


_ENGINE_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _engine(threads: int, det_limit_side: int) -> Any:
    """A RapidOCR engine (loading the three ONNX sessions takes ~0.5 s: kept per process)."""
    from rapidocr import RapidOCR

    params = {
        "Global.log_level": "error",
        "Global.use_cls": False,
        "Det.limit_side_len": det_limit_side,
        "Det.limit_type": "max",
        "EngineConfig.onnxruntime.intra_op_num_threads": threads,
        "EngineConfig.onnxruntime.inter_op_num_threads": 1,
    }
    return RapidOCR(params=params)


@lru_cache(maxsize=1)
def _libc() -> Any:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def _give_back_freed_memory() -> None:
    """Hand the C heap's free pages back to the system after a read (glibc's ``malloc_trim``).

    Each look's images have their own sizes, and the heap they leave behind fragments: a 10
    minute 1080p run's peak memory grew to 2.5x the 60 s run's, 1.07x with this (under a
    millisecond a look; 12 looks a minute). Elsewhere than glibc it does nothing.
    """
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def _quad_box(quad: npt.NDArray[np.float64], width: int, height: int) -> Box:
    xs, ys = quad[:, 0], quad[:, 1]
    return (
        float(np.clip(xs.min() / width, 0, 1)),
        float(np.clip(ys.min() / height, 0, 1)),
        float(np.clip(xs.max() / width, 0, 1)),
        float(np.clip(ys.max() / height, 0, 1)),
    )


class OcrDetector:
    """Reads text on the text looks and follows it over every sampled frame."""

    name = "ocr"

    def __init__(self, config: OcrConfig | None = None) -> None:
        self.config = config = config or OcrConfig()
        try:
            with _ENGINE_LOCK:
                self.engine = _engine(config.threads, config.det_limit_side)
        except Exception as exc:  # a broken install: missing model files, onnxruntime errors
            raise DetectorUnavailable(f"the OCR models could not be loaded ({exc})") from exc
        self.frames_seen = 0  # frames read by the last ``detect``

    def read(self, image: Frame) -> list[tuple[Box, str, float]]:
        """Every text read on an RGB image: normalised box, text, score (the model's core)."""
        try:
            result = self.engine(np.ascontiguousarray(image[:, :, ::-1]))  # RapidOCR wants BGR
        except Exception as exc:
            raise DetectorUnavailable(
                f"the OCR model failed while reading a frame ({exc})"
            ) from exc
        finally:
            _give_back_freed_memory()
        if result.boxes is None or result.txts is None:
            return []
        height, width = image.shape[:2]
        found = []
        for quad, text, score in zip(result.boxes, result.txts, result.scores, strict=True):
            text = " ".join(str(text).split())
            letters = sum(ch.isalnum() for ch in text)
            box = _quad_box(np.asarray(quad, np.float64), width, height)
            plausible = box[3] - box[1] <= self.config.max_line_height
            sure = float(score) >= self.config.min_score and letters >= self.config.min_chars
            if sure and plausible:
                found.append((box, text, score))
        return found

    def detect(self, frames: Sequence[FrameView]) -> Detections:
        readings = []
        self.frames_seen = 0
        for view in frames:
            image = view.full()
            if image is None:
                continue
            self.frames_seen += 1
            readings += [Reading(view.index, box, t, float(s)) for box, t, s in self.read(image)]
        if not readings or not frames:
            return Detections.empty((TEXT_CLASS,))
        glances = frames[0].glances
        complete = [view.index for view in frames] == list(range(len(frames)))
        if glances is None or len(glances) != len(frames) or not complete:
            raise ValueError("the OCR detector needs every sampled frame, in order, with glances")
        times = [view.t_s for view in frames]
        scene = np.cumsum([view.refresh for view in frames]).tolist()
        cfg = TextTrackConfig(same_level=self.config.same_level, max_gap_s=self.config.max_gap_s)
        return _rows(text_instances(readings, glances, times, scene, cfg), times)


def _rows(instances: Sequence[TextInstance], times: Sequence[float]) -> Detections:
    boxes, scores, samples, texts, ids = [], [], [], [], []
    for number, inst in enumerate(instances, start=1):
        for sample in sorted(inst.samples):
            boxes.append(inst.box)
            scores.append(inst.score)
            samples.append(sample)
            texts.append(inst.text)
            ids.append(number)
    return Detections(
        boxes=np.asarray(boxes, np.float32),
        scores=np.asarray(scores, np.float32),
        class_ids=np.zeros(len(boxes), np.int64),
        frame_index=np.asarray(samples, np.int64),
        t_s=np.asarray([times[s] for s in samples], np.float32),
        track_ids=np.asarray(ids, np.int64),
        class_names=(TEXT_CLASS,),
        texts=texts,  # type: ignore[arg-type]
    )
