"""Stage 3, detect: run the detector plugins over the sampled frames.

The ``motion`` detector looks at every sampled frame (read back from disk one at a time, small
and in colour), rebuilding its background where the sample stage marked a scene refresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow.parquet as pq
from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts import write_table
from tasks.context import RunContext
from tasks.detections import Detections, detections_to_table
from tasks.detectors.motion import MotionConfig, MotionDetector
from tasks.sample import SampledFrames


def detect_motion(
    sampled: SampledFrames, frames: Sequence[dict[str, Any]], config: MotionConfig
) -> Detections:
    """Motion boxes on every sampled frame (the pure core of the stage)."""
    detector = MotionDetector(config)
    parts = [
        detector.detect(
            row["sample_index"],
            row["t_s"],
            sampled.analysis_frame(row["sample_index"]),
            refreshed=row["refresh"],
        )
        for row in frames
    ]
    return Detections.concatenate(parts) if parts else Detections.empty()


@task(name="detect", cache_policy=NONE)
def detect_task(ctx: RunContext, sampled: SampledFrames) -> int:
    """Detect on the sampled frames; writes ``detections.parquet``; returns the box count."""
    ctx.report("detect")
    frames = pq.read_table(ctx.layout.out_dir / "frames.parquet").to_pylist()
    detections = detect_motion(sampled, frames, MotionConfig())
    write_table(ctx.layout.out_dir, "detections", detections_to_table(detections, "motion"))
    get_run_logger().info("motion: %d boxes on %d frames", len(detections), sampled.count)
    return len(detections)
