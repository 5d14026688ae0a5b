"""The sampling state of one pass over a video: which frames to keep, and what is written for
each one kept (its thumbnail JPEG, its raw analysis frame, its glance and, when text is read, a
larger JPEG), with the scene-change score against the previous one. ``tasks.sample.stage``
drives it over the decoded frames.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import av
import cv2
import numpy as np
import numpy.typing as npt

from tasks.context import ComputeBudget
from tasks.decode.stage import SourceInfo
from tasks.sample.frames import (
    ANALYSIS,
    GLANCES,
    PEOPLE_DIR,
    TEXT_DIR,
    frame_name,
    link_or_copy,
    write_jpeg,
)
from tasks.sample.gate import Gate, GateCount
from tasks.sample.scene_score import scene_score, tiny_grey, tiny_step
from tasks.sample.text_looks import LookConfig, LookPlanner, glance_of


@dataclass(frozen=True)
class SampleConfig:
    sample_fps: float
    max_duration_s: float
    analysis_width: int
    thumbnail_width: int
    scene_cut_threshold: float
    text_width: int = 0  # width of the frames kept for reading text; 0: keep none
    person_width: int = 0  # width of the frames kept for the person detector; 0: keep none
    skip_loop_filter: bool = False  # decode without the deblocking filter (see Settings)
    looks: LookConfig = field(default_factory=LookConfig)
    budget: ComputeBudget | None = None  # max_compute_s: sampling stops where it runs out
    gate: Gate | None = None  # the activity gate: decode only its ranges (None: every frame)


@dataclass(frozen=True)
class Span:
    """The stretch of a video one sampling pass decodes (the whole video by default).

    Decoding starts at the keyframe at ``decode_from_s`` (reached by seeking) and stops before
    ``end_s``; sampled times stay on the grid of the whole video (multiples of 1 / sample_fps
    from 0), so two passes over the same stretch keep the same frames.
    """

    decode_from_s: float = 0.0
    end_s: float = math.inf

    @property
    def whole(self) -> bool:
        return self.decode_from_s <= 0.0 and math.isinf(self.end_s)


def _even(value: float) -> int:
    return max(2, round(value / 2) * 2)


def scaled_size(width: int, height: int, target_width: int) -> tuple[int, int]:
    """A size at most ``target_width`` wide with the source's aspect ratio (even numbers)."""
    scale = min(1.0, target_width / width)
    return _even(width * scale), _even(height * scale)


@dataclass(frozen=True)
class _Kept:
    """What a held frame repeats of the last decoded one."""

    index: int
    analysis: bytes
    glance: bytes | None


class Sampler:
    """Per-video sampling state: the next time to keep, outputs, and the previous tiny frame."""

    def __init__(self, cfg: SampleConfig, source: SourceInfo, frames: Path, span: Span):
        self.cfg, self.frames_dir, self.span = cfg, frames, span
        self.analysis_size = scaled_size(source.width, source.height, cfg.analysis_width)
        self.thumb_size = scaled_size(source.width, source.height, cfg.thumbnail_width)
        self.tiny_step = tiny_step(self.thumb_size[0])
        self.text_size = scaled_size(source.width, source.height, cfg.text_width)
        self.person_size = scaled_size(source.width, source.height, cfg.person_width)
        self.turns = source.rotation // 90 % 4  # quarter turns counterclockwise to be upright
        step = 1.0 / cfg.sample_fps
        self.next_t = math.ceil(span.decode_from_s / step - 1e-6) * step
        self.previous: npt.NDArray[np.uint8] | None = None
        self.rows: list[dict[str, Any]] = []
        self.planner = LookPlanner(cfg.looks)
        self.glance_shape = (0, 0)
        self.budget_stop_s: float | None = None
        self._last_glance: bytes | None = None
        self.last: _Kept | None = None  # the last decoded frame kept, which a held frame repeats
        self.held = 0
        self.last_held_t = 0.0
        self.gated = GateCount()  # packets the gate fed to the decoder, and skipped
        (frames / TEXT_DIR).mkdir(exist_ok=True)
        if cfg.person_width:
            (frames / PEOPLE_DIR).mkdir(exist_ok=True)
        self.glance_file = (frames / GLANCES).open("wb")
        self.analysis_file = (frames / ANALYSIS).open("wb")

    def close(self) -> None:
        self.glance_file.close()
        self.analysis_file.close()

    def upright(self, frame: av.VideoFrame, size: tuple[int, int]) -> npt.NDArray[np.uint8]:
        """The frame as RGB of ``size`` (upright width, height), turned as it is displayed."""
        width, height = size if self.turns % 2 == 0 else size[::-1]
        # AREA averages the pixels it drops: clean thumbnails, and cheaper than the default.
        small = frame.reformat(width=width, height=height, format="rgb24", interpolation="AREA")
        rgb = np.asarray(small.to_ndarray(), dtype=np.uint8)
        return np.ascontiguousarray(np.rot90(rgb, self.turns)) if self.turns else rgb

    def wants(self, t: float) -> bool:
        return t + 1e-6 >= self.next_t

    def out_of_budget(self, t: float) -> bool:
        """The run's compute budget refuses the frame at ``t`` (never one of the first two)."""
        budget = self.cfg.budget
        if budget is None or len(self.rows) < 2 or budget.allows(len(self.rows)):
            return False
        self.budget_stop_s = t
        return True

    def _thumbnail(self, frame: av.VideoFrame, index: int) -> npt.NDArray[np.uint8]:
        """The thumbnail; where the person detector runs, its larger frame is kept first and
        the thumbnail scaled from it (one conversion of the decoded frame, not two)."""
        if not self.cfg.person_width or self.person_size[0] <= self.thumb_size[0]:
            return self.upright(frame, self.thumb_size)
        people = self.upright(frame, self.person_size)
        path = self.frames_dir / PEOPLE_DIR / frame_name(index)
        write_jpeg(people, path, quality=90)
        return np.asarray(cv2.resize(people, self.thumb_size, interpolation=cv2.INTER_AREA))

    def keep(self, frame: av.VideoFrame, t: float) -> None:
        index = len(self.rows)
        rgb = self._thumbnail(frame, index)
        write_jpeg(rgb, self.frames_dir / frame_name(index), quality=85)
        analysis = cv2.resize(rgb, self.analysis_size, interpolation=cv2.INTER_AREA)
        analysis_bytes = np.ascontiguousarray(analysis, dtype=np.uint8).tobytes()
        self.analysis_file.write(analysis_bytes)
        tiny = tiny_grey(rgb, self.tiny_step)
        score = scene_score(self.previous, tiny)
        refresh = index == 0 or score >= self.cfg.scene_cut_threshold
        reason = "start" if index == 0 else ("scene_change" if refresh else None)
        look = self._glance(frame, np.asarray(rgb, dtype=np.uint8), t, refresh, index)
        self._row(t, score, refresh, reason, look, held=False)
        self.last = _Kept(index, analysis_bytes, self._last_glance)
        self.previous = tiny
        step = 1.0 / self.cfg.sample_fps
        self.next_t = max(self.next_t + step, t + step / 2)

    def hold_until(self, end_s: float) -> None:
        """Keep every sampled time before ``end_s`` (a still stretch the gate did not decode)
        as a copy of the last decoded frame kept: the same thumbnail (a hard link), analysis
        frame and glance, scene score 0, no text look."""
        step = 1.0 / self.cfg.sample_fps
        while self.cfg.gate and self.last is not None and self.next_t < end_s - 1e-6:
            if self.out_of_budget(self.next_t):
                return
            index = len(self.rows)
            link_or_copy(
                self.frames_dir / frame_name(self.last.index), self.frames_dir / frame_name(index)
            )
            people = self.frames_dir / PEOPLE_DIR / frame_name(self.last.index)
            if people.exists():
                link_or_copy(people, self.frames_dir / PEOPLE_DIR / frame_name(index))
            self.analysis_file.write(self.last.analysis)
            if self.last.glance is not None:
                self.glance_file.write(self.last.glance)
            self._row(self.next_t, 0.0, False, None, False, held=True)
            self.held += 1
            self.last_held_t = self.next_t
            self.next_t += step

    def _row(
        self, t: float, score: float, refresh: bool, reason: str | None, look: bool, held: bool
    ) -> None:
        self.rows.append(
            {
                "sample_index": len(self.rows),
                "t_s": t,
                "scene_score": score,
                "refresh": refresh,
                "refresh_reason": reason,
                "text_look": look,
                "held": held,
            }
        )

    def _glance(
        self, frame: av.VideoFrame, rgb: npt.NDArray[np.uint8], t: float, refresh: bool, index: int
    ) -> bool:
        """Record the frame's glance; keep it at full size if text should be read on it.

        Only a run that reads text needs glances (the looks and the OCR's text tracks), so a
        run without OCR computes none.
        """
        if not self.cfg.text_width:
            return False
        glance = glance_of(rgb)
        self.glance_shape = (int(glance.shape[0]), int(glance.shape[1]))
        self._last_glance = glance.tobytes()
        self.glance_file.write(self._last_glance)
        if not self.planner.wants(t, glance, refresh):
            return False
        path = self.frames_dir / TEXT_DIR / frame_name(index)
        write_jpeg(self.upright(frame, self.text_size), path, quality=92)
        return True
