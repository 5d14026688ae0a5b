"""A 2-hour 1080p idle-heavy recording (issue 42): the flow with default settings, in chunks,
against a plain decode of the same file in the same run, with its peak memory.

    nice -n 15 .venv/bin/python benchmarks/pipeline.py --cases idle-2h

The recording is ``benchmarks/_idle.py``'s 10-minute clip (5 % active, 2 s GOPs, B-frames,
constant quality) written twelve times back to back by stream copy, timestamps shifted: 228
planted passes and walkers, and the sign and light of each copy switching back at each join (a
real change the gate must decode). It runs under a plan that allows a 2-hour video
(``VES_PLANS``: the sandbox plan with ``max_video_s`` and the month's seconds raised), so the
run is bounded by the plan, not cut by it; the deployment's own bound (``VES_MAX_DURATION_S``,
600 s unless set) is raised to 2 hours as an operator would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks._clips import repeat_segment
from benchmarks._idle import CACHE, IdleSpec, make_idle_clip
from benchmarks._idle_cases import Measures
from benchmarks._runs import cpu_seconds

TIMES = 12
BASE = IdleSpec(600, 0.05, 2, True, False)
LONG_PLAN = {"sandbox": {"max_video_s": 7200.0, "processed_s_per_month": 100_000.0}}


def long_clip(fresh: bool) -> Path:
    clip, _ = make_idle_clip(BASE, fresh)
    path = CACHE / f"idle-1080p-{TIMES * BASE.seconds}s-5pct-gop2-b-clean.mp4"
    if fresh or not path.exists():
        partial = path.with_name(f".{path.name}.partial")
        repeat_segment(clip, partial, TIMES, segment_s=BASE.seconds)
        partial.replace(path)
    return path


def run_long_idle(measures: Measures, detector: str, fresh: bool = False) -> dict[str, Any]:
    """Plain decode, then the flow with default settings; prints one table line and returns
    the flow's result."""
    path = long_clip(fresh)
    cpu_before = cpu_seconds()
    decode_s, frames = measures.decode(path)
    decode_cpu_s = cpu_seconds() - cpu_before
    result = measures.flow(
        path,
        measures.tiny,
        {"detector": detector},
        timeout_s=4 * TIMES * BASE.seconds,
        settings={"VES_PLANS": json.dumps(LONG_PLAN), "VES_MAX_DURATION_S": "7200"},
    )
    cost, flow_s = result["cost"], result["flow_s"]
    counted = cost.get("frames", {})
    gate = cost.get("activity_gate", {})
    print("\n2-hour idle-heavy recording, default settings")
    print(
        "| recording | plain decode s | flow s (/ decode) | processed s | decoded; held; skipped "
        "| judged still | cue | flow peak MiB |\n|---|---|---|---|---|---|---|---|"
    )
    print(
        f"| 2 h 1080p, 5 % active, GOP 2 s, B-frames, clean ({frames} frames) | {decode_s:.1f} "
        f"| {flow_s:.1f} ({flow_s / decode_s:.2f}x) | {cost.get('processed_s')} "
        f"| {counted.get('decoded')}; {counted.get('held')}; {counted.get('skipped')} "
        f"| {gate.get('still_fraction')} | {gate.get('cue')} "
        f"| {result['added_mib']:.0f} |",
        flush=True,
    )
    print(f"stages: {json.dumps(cost.get('stages', {}), sort_keys=True)}")
    print(
        f"CPU: plain decode {decode_cpu_s:.1f} s, flow {result['cpu_s']:.1f} s, flow / decode "
        f"{result['cpu_s'] / decode_cpu_s:.2f} (steadier than wall times on a busy machine)"
    )
    return result
