"""The cost model: seconds per stage from what a run processes, fitted on this installation's runs.

Each stage's seconds are linear in the driver it scales with, with non-negative coefficients
(least squares, ``scipy.optimize.nnls``):

| stage | drivers |
|---|---|
| decode | 1, megabytes of source (download, hash and probe grow with the bytes) |
| sample | 1, megapixels decoded, frames analysed, megabytes of source (decoding costs with the
  bitrate as much as with the pixels: a noisy 23 Mbit/s 1080p clip decodes 8x slower than a
  clean one) |
| detect | 1, frames analysed, seconds of video (OCR looks are per minute) |
| track .. cost | 1, frames analysed |
| join | 1, frames analysed (chunked runs only) |

Megapixels decoded are nominal (duration x frame rate x width x height) and megabytes are the
source's bitrate x duration: what is known before a run, so a fit and a prediction read the same
drivers. Each detector mode is fitted on its own
runs (the newest ``VES_COST_MODEL_RUNS``); with fewer than ``VES_COST_MODEL_MIN_RUNS`` of them, the
``FALLBACK`` constants below, measured on the development machine (2 shared cores) by
``benchmarks/estimate.py`` (fitted on its 12 varied runs, 2026-11-25).

Wall time is the stages' sum, with the sample and detect stages of a chunked run divided by the
speed-up chunks side by side bring (fitted on chunked runs; fallback 1.15,
docs/measured/performance.md), plus the flow's own overhead (catalog, publish) and the start
(execute -> the flow's start), both medians of the same runs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import nnls

from storage.catalog.runs.costs import CostSample
from ves.detector_mode import parts_of

STAGES = ("decode", "sample", "detect", "track", "world_state", "timeline", "evidence", "cost")
PARALLEL = ("sample", "detect")  # the stages chunks run side by side
DOWNSTREAM = ("detect", "track", "world_state", "timeline", "evidence", "cost")  # after sampling


@dataclass(frozen=True)
class Workload:
    """What a run will process: the drivers of every stage."""

    duration_s: float  # seconds of video processed
    source_fps: float
    width: int
    height: int
    sample_fps: float
    detector_mode: str
    chunks: int = 1
    bytes_per_s: float = 0.0  # the source's bitrate

    @property
    def megabytes(self) -> float:
        return self.bytes_per_s * self.duration_s / 1e6

    @property
    def frames_decoded(self) -> int:
        return math.ceil(self.duration_s * self.source_fps)

    @property
    def frames_analysed(self) -> int:
        return math.ceil(self.duration_s * min(self.sample_fps, self.source_fps))

    @property
    def megapixels(self) -> float:
        return self.frames_decoded * self.width * self.height / 1e6

    @classmethod
    def of_sample(cls, sample: CostSample) -> Workload:
        return cls(
            sample.processed_s,
            sample.source_fps,
            sample.width,
            sample.height,
            sample.sample_fps,
            sample.detector_mode,
            sample.chunks,
            sample.source_bytes / sample.duration_s if sample.duration_s > 0 else 0.0,
        )


def _per_frame(w: Workload) -> tuple[float, ...]:
    return (1.0, float(w.frames_analysed))


DRIVERS: dict[str, Callable[[Workload], tuple[float, ...]]] = {
    "decode": lambda w: (1.0, w.megabytes),
    "sample": lambda w: (1.0, w.megapixels, float(w.frames_analysed), w.megabytes),
    "detect": lambda w: (1.0, float(w.frames_analysed), w.duration_s),
    "track": _per_frame,
    "world_state": _per_frame,
    "timeline": _per_frame,
    "evidence": _per_frame,
    "cost": _per_frame,
    "join": _per_frame,
}

# Fallback coefficients (seconds; per megabyte, megapixel, frame analysed or second of video, in
# the order of DRIVERS), fitted by `benchmarks/estimate.py` on the development machine, 2 cores
# shared with two other test suites, 2026-11-25: 12 runs `motion+ocr` and 12 runs `motion` (the
# "fitted on all runs" lines). The common stages are the two fits' mean. `cost` times itself
# outside `cost.json` and no chunked run was measured, so `cost` and `join` are rough guesses.
_COMMON = {
    "decode": (0.046, 0.00078),
    "track": (0.022, 0.0003),
    "world_state": (0.035, 0.00001),
    "timeline": (0.028, 0.0),
    "evidence": (0.073, 0.00006),
    "cost": (0.005, 0.0),
    "join": (0.2, 0.002),
}
FALLBACK: dict[str, dict[str, tuple[float, ...]]] = {
    "motion": _COMMON | {"sample": (0.0, 0.00037, 0.0055, 0.124), "detect": (0.002, 0.0026, 0.0)},
    "reads_text": _COMMON
    | {"sample": (0.048, 0.00053, 0.0085, 0.1245), "detect": (2.51, 0.0, 0.0)},
}
FALLBACK_START_S = 1.22  # execute -> running p50 under `ves serve` (docs/measured/performance.md)
FALLBACK_OVERHEAD_S = 0.06  # the flow's own work besides its stages (the same runs)
# chunks side by side on 2 cores (docs/measured/performance.md, long videos)
FALLBACK_SPEEDUP = 1.15


def fallback_stages(detector_mode: str) -> dict[str, tuple[float, ...]]:
    """The fallback coefficients of a detector mode (text reading dominates the rest)."""
    return FALLBACK["reads_text" if "ocr" in parts_of(detector_mode) else "motion"]


@dataclass(frozen=True)
class CostModel:
    """Coefficients per stage, and what wall time adds to the stages' compute."""

    stages: dict[str, tuple[float, ...]]
    source: Literal["fitted", "fallback"]
    runs_used: int = 0
    fitted_at: str | None = None
    start_s: float = FALLBACK_START_S
    overhead_s: float = FALLBACK_OVERHEAD_S
    speedup: float = FALLBACK_SPEEDUP

    def stage_seconds(self, work: Workload) -> dict[str, float]:
        """Expected compute seconds of each stage (``join`` too for a chunked run)."""
        names = STAGES + (("join",) if work.chunks > 1 else ())
        return {name: _dot(self.stages[name], DRIVERS[name](work)) for name in names}

    def wall_s(self, work: Workload, stages: dict[str, float] | None = None) -> float:
        """Expected seconds from execute to the run's success (no wait for a slot)."""
        stages = stages if stages is not None else self.stage_seconds(work)
        compute = sum(stages.values())
        if work.chunks > 1:
            side_by_side = sum(stages[s] for s in PARALLEL)
            compute += side_by_side / max(self.speedup, 1.0) - side_by_side
        return self.start_s + self.overhead_s + compute

    def downstream(self, work: Workload) -> tuple[float, float]:
        """The stages after sampling as ``(fixed seconds, seconds per frame analysed)``.

        What a run must still spend once sampling stops after ``n`` frames: ``fixed + n * per``
        (detect's per-second term read per frame at the run's analysed rate).
        """
        rate = max(min(work.sample_fps, work.source_fps), 1e-6)
        fixed = sum(self.stages[s][0] for s in DOWNSTREAM)
        per = sum(self.stages[s][1] for s in DOWNSTREAM) + self.stages["detect"][2] / rate
        return fixed, per


def _dot(coefficients: tuple[float, ...], drivers: tuple[float, ...]) -> float:
    return float(sum(c * d for c, d in zip(coefficients, drivers, strict=True)))


def fallback_model(detector_mode: str) -> CostModel:
    """The documented constants, for a mode this installation has not run often enough."""
    return CostModel(dict(fallback_stages(detector_mode)), "fallback")


_MIN_STAGE_S = 0.01  # a stage faster than this weighs as if it took this long


def fit_stage(name: str, samples: Sequence[CostSample]) -> tuple[float, ...]:
    """Non-negative least squares of one stage's seconds against its drivers, in relative terms.

    Samples that did not run the stage (``join`` of whole runs) are left out; with none, the
    stage's fallback.
    """
    used = [s for s in samples if name in s.stages]
    if not used:
        return fallback_stages(samples[0].detector_mode if samples else "motion")[name]
    x = np.array([DRIVERS[name](Workload.of_sample(s)) for s in used], dtype=np.float64)
    y = np.array([s.stages[name] for s in used], dtype=np.float64)
    # Relative errors are what an estimate is judged by: each run weighs by 1 / its seconds,
    # so a long run does not drown the short ones.
    weight = 1.0 / np.maximum(y, _MIN_STAGE_S)
    x, y = x * weight[:, None], y * weight
    scale = np.maximum(np.abs(x).max(axis=0), 1e-12)  # columns of comparable size for nnls
    solution, _ = nnls(x / scale, y)
    return tuple(float(c) for c in solution / scale)


def _chunk_speedup(samples: Sequence[CostSample], overhead_s: float) -> float:
    """Median over chunked runs of the sample+detect compute over the wall time it took."""
    ratios = []
    for s in samples:
        if s.chunks <= 1:
            continue
        parallel = sum(s.stages.get(p, 0.0) for p in PARALLEL)
        took = s.wall_s - overhead_s - (s.compute_s - parallel)
        if parallel > 0 and took > 0:
            ratios.append(parallel / took)
    return min(max(statistics.median(ratios), 1.0), 8.0) if ratios else FALLBACK_SPEEDUP


def fit_model(samples: Sequence[CostSample], detector_mode: str, min_runs: int) -> CostModel:
    """The model of a detector mode from the installation's samples (the newest first).

    Fewer than ``min_runs`` runs of the mode: the fallback constants, still with the start and
    overhead the installation measured when it has run anything at all.
    """
    own = [s for s in samples if s.detector_mode == detector_mode]
    if len(own) < min_runs:
        base = fallback_model(detector_mode)
        if len(samples) < min_runs:
            return base
        return _with_overheads(base, samples, base.stages, "fallback", 0)
    stages = {name: fit_stage(name, own) for name in DRIVERS}
    fitted = _with_overheads(fallback_model(detector_mode), own, stages, "fitted", len(own))
    return CostModel(
        fitted.stages,
        "fitted",
        len(own),
        max(s.recorded_at for s in own),
        fitted.start_s,
        fitted.overhead_s,
        _chunk_speedup(own, fitted.overhead_s),
    )


def _with_overheads(
    base: CostModel,
    samples: Sequence[CostSample],
    stages: dict[str, tuple[float, ...]],
    source: Literal["fitted", "fallback"],
    runs_used: int,
) -> CostModel:
    whole = [s for s in samples if s.chunks <= 1] or list(samples)
    overhead = statistics.median(max(s.wall_s - s.compute_s, 0.0) for s in whole)
    start = statistics.median(s.start_s for s in samples)
    return CostModel(stages, source, runs_used, None, start, overhead, base.speedup)
