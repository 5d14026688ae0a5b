"""The process-video flow against a plain decode and a naive user script, in the same run.

    .venv/bin/python benchmarks/pipeline.py [--cases default|all|idle|idle-short|idle-2h]
        [--only 1080p] [--fresh]
    .venv/bin/python benchmarks/pipeline.py --clip PATH [--detector MODE]

Each case is a synthetic clip (60 s or 10 min; 720p or 1080p; H.264 with x264's default
B-frames or none; noisy, ~2 Mbit/s at 720p and ~4 at 1080p, or clean) and a detector mode; the
clips are cached under benchmarks/.cache (see ``benchmarks/_clips.py``). For each case, back to
back in one run:
  1. plain decode: PyAV decodes every frame (``thread_type="AUTO"``), converting none: the
     floor any pipeline pays;
  2. the naive user script: the same decode, every frame to an RGB array, differenced at full
     size with the previous one (grey, OpenCV's absdiff, threshold, count changed pixels);
  3. the flow: ``process_video`` in a fresh process under a temporary Prefect server, after a
     warm-up run on a tiny clip so that Prefect's cold start is not counted; with its peak
     memory over the process's baseline.
It prints a table (times, x realtime, flow / plain decode, naive / flow, the flow's peak memory),
the flow's three slowest stages per case (from cost.json), the memory of each 10 min run
against its 60 s run, and what each way of decoding less costs on each clip (every frame,
non-reference frames skipped, and no deblocking filter, every B-frame skipped) against the plain
decode. The default cases take about a quarter of an hour here; ``--cases all``
is the whole matrix (32 cases, hours). ``--cases idle`` (and ``idle-short``, 60 s clips) are
issue 32's idle-heavy clips with planted events, the flow with the activity gate off, on and
in keyframe mode against the plain decode, and the recall of the events
(``benchmarks/_idle_cases.py``); the default set ends with one of them (10 min, 20 % active).
``--cases idle-2h`` is issue 42's 2-hour recording (``benchmarks/_idle_long.py``).
With ``--clip`` the flow's
``cost.json`` detectors block is printed too (each detector's frames, boxes, seconds and
counters, e.g. the person network's passes), and the CPU time of the plain decode and of the
flow (its process's threads, Prefect's server aside): on a shared machine the CPU a piece of
work costs moves less than its wall time. The last line is the ratio flow / plain decode.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import av
import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._clips import ClipSpec, make_clip
from benchmarks._idle_cases import DEFAULT_IDLE, IDLE_CASES, Measures, run_idle_cases
from benchmarks._idle_long import run_long_idle
from benchmarks._runs import PeakMemory, cpu_seconds, run_flow, scored_rows
from synthetic import demo_scene, scale_scene, write_video

if TYPE_CHECKING:
    pass

CACHE = Path(__file__).resolve().parent / ".cache"


def clip(seconds: int, fresh: bool) -> Path:
    """A cached 1280x720 30 fps clip of ``seconds`` with noise, about 2 Mbit/s."""
    path = CACHE / f"pipeline-720p-{seconds}s.mp4"
    if fresh or not path.exists():
        CACHE.mkdir(exist_ok=True)
        spec = scale_scene(demo_scene(), width=1280, height=720, duration_s=seconds, fps=30)
        write_video(replace(spec, noise=3.0, bitrate=2_000_000), path)
    return path


def plain_decode(
    path: Path, skip: Literal["NONREF", "BIDIR"] | None = None, no_loop_filter: bool = False
) -> tuple[float, int]:
    """Decode every frame (or what ``skip`` leaves: ``NONREF``, ``BIDIR``), converting none."""
    started = time.perf_counter()
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        if skip:
            stream.codec_context.skip_frame = skip
        if no_loop_filter:
            stream.codec_context.options = {"skip_loop_filter": "all"}
        frames = sum(1 for _ in container.decode(stream))
    return time.perf_counter() - started, frames


DECODE_TECHNIQUES: tuple[tuple[str, Literal["NONREF", "BIDIR"] | None, bool], ...] = (
    ("every frame (the plain decode)", None, False),
    ("non-reference frames skipped (the flow at <= 1/3 of the frame rate)", "NONREF", False),
    ("  and no deblocking filter (the flow's default)", "NONREF", True),
    ("every B-frame skipped, no deblocking (not taken: see docs)", "BIDIR", True),
)


def print_techniques(path: Path, label: str) -> None:
    """What each way of decoding less costs on ``path``, as a ratio to the plain decode."""
    base_s = 0.0
    for name, skip, no_filter in DECODE_TECHNIQUES:
        seconds, frames = plain_decode(path, skip, no_filter)
        base_s = base_s or seconds
        print(f"{label}: {name}: {seconds:.1f} s, {frames} frames, {seconds / base_s:.2f}x")


def child(path: Path, tiny: Path, options: dict[str, Any], rows: bool = False) -> None:
    """One measurement in a fresh process: warm up Prefect, then run the flow on ``path``
    (with ``rows``, the run's detections and sampled frames too, for scoring)."""
    from prefect.testing.utilities import prefect_test_harness

    with tempfile.TemporaryDirectory() as tmp, prefect_test_harness(server_startup_timeout=120):
        os.environ["VES_DATA_DIR"] = tmp
        run_flow(Path(tmp), tiny, options)  # the first flow in a process pays the start-ups
        cpu_before = cpu_seconds()
        with PeakMemory() as memory:
            flow_s, cost, run_dir = run_flow(Path(tmp), path, options)
        result = {
            "flow_s": flow_s,
            "cost": cost,
            "added_mib": memory.added_mib,
            "cpu_s": cpu_seconds() - cpu_before,
        }
        if rows:
            result["rows"] = scored_rows(run_dir)
    print(json.dumps(result))


def measure_in_child(
    path: Path,
    tiny: Path,
    options: dict[str, Any] | None = None,
    models_dir: Path | None = None,
    timeout_s: float = 600,
    settings: dict[str, str] | None = None,
    rows: bool = False,
) -> dict[str, Any]:
    """Run the flow on ``path`` in a fresh process (``settings``: more environment, e.g.
    ``VES_SKIP_STILL``); its wall time, cost.json and peak memory (and with ``rows``, the
    run's rows ``scored_rows`` keeps)."""
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
    env |= settings or {}
    if models_dir is not None:
        env["VES_MODELS_DIR"] = str(models_dir)
    chosen = json.dumps(options or {"detector": "motion"})
    command = [sys.executable, __file__, "--child", str(path), str(tiny), chosen]
    done = subprocess.run(
        [*command, "rows"] if rows else command,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout_s,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


DEFAULT_MODE = "motion+person+ocr"
CHANGED_LEVEL = 25  # a pixel changed when its grey level moved by more than this (noise ~3)


@dataclass(frozen=True)
class Case:
    """A clip and the detector mode the flow runs on it."""

    clip: ClipSpec
    detector: str = DEFAULT_MODE


DEFAULT_CASES = (
    Case(ClipSpec(60, 720)),
    Case(ClipSpec(60, 720), "motion"),
    Case(ClipSpec(60, 1080)),
    Case(ClipSpec(600, 1080)),
)
ALL_CASES = tuple(
    Case(ClipSpec(seconds, height, bframes, noisy), detector)
    for seconds, height, bframes, noisy, detector in product(
        (60, 600), (720, 1080), (True, False), (True, False), (DEFAULT_MODE, "motion")
    )
)


@dataclass(frozen=True)
class Row:
    """One case's three measurements, all on the same file in the same run."""

    label: str
    detector: str
    seconds: float
    frames: int
    decode_s: float
    naive_s: float
    flow: dict[str, Any]
    kind: str = ""  # the clip but its length: a 10 min run is compared with the 60 s one
    decode_cpu_s: float = 0.0  # the plain decode's CPU time (its threads' too)


def naive_script(path: Path) -> float:
    """What a user writes: every frame to RGB, differenced at full size with the previous one.

    OpenCV's classic recipe (grey, absdiff, threshold, count): numpy's ``max(axis=2)`` over
    the colour channels would cost 60 ms a 720p frame here and make the flow look better.
    """
    started = time.perf_counter()
    previous: np.ndarray | None = None
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for frame in container.decode(stream):
            grey = cv2.cvtColor(frame.to_ndarray(format="rgb24"), cv2.COLOR_RGB2GRAY)
            if previous is not None:
                diff = cv2.absdiff(grey, previous)
                cv2.countNonZero(cv2.threshold(diff, CHANGED_LEVEL, 255, cv2.THRESH_BINARY)[1])
            previous = grey
    return time.perf_counter() - started


def measure(path: Path, label: str, detector: str, tiny: Path, kind: str = "") -> Row:
    """Plain decode, naive script and the flow on ``path``, back to back."""
    seconds = clip_seconds(path)
    cpu_before = cpu_seconds()
    decode_s, frames = plain_decode(path)
    decode_cpu_s = cpu_seconds() - cpu_before
    naive_s = naive_script(path)
    flow = measure_in_child(path, tiny, {"detector": detector}, timeout_s=max(600.0, 4 * seconds))
    return Row(label, detector, seconds, frames, decode_s, naive_s, flow, kind, decode_cpu_s)


def clip_seconds(path: Path) -> float:
    """The duration of ``path`` from its container (or its video stream)."""
    with av.open(str(path)) as container:
        if container.duration is not None:
            return float(container.duration / av.time_base)
        stream = container.streams.video[0]
        assert stream.duration is not None and stream.time_base is not None
        return float(stream.duration * stream.time_base)


TABLE_HEAD = (
    "| case | mode | plain decode s (x rt) | naive s (x rt) | flow s (x rt) "
    "| flow / decode | naive / flow | flow peak MiB |\n|---|---|---|---|---|---|---|---|"
)


def table_line(row: Row) -> str:
    """A case's times (x realtime), the two ratios and the flow's peak memory."""
    flow_s = row.flow["flow_s"]
    times = " | ".join(
        f"{s:.1f} ({row.seconds / s:.1f}x)" for s in (row.decode_s, row.naive_s, flow_s)
    )
    return (
        f"| {row.label} | `{row.detector}` | {times} | {flow_s / row.decode_s:.2f} "
        f"| {row.naive_s / flow_s:.2f} | {row.flow['added_mib']:.0f} |"
    )


def print_stages(rows: list[Row]) -> None:
    """The flow's three slowest stages per case, from its cost.json."""
    for row in rows:
        stages = sorted(row.flow["cost"]["stages"].items(), key=lambda kv: -kv[1])
        top = ", ".join(f"{name} {s:.1f} s" for name, s in stages[:3])
        print(f"{row.label} `{row.detector}`: {top} of {row.flow['flow_s']:.1f} s")


def print_memory(rows: list[Row]) -> None:
    """The peak memory of each 10 min run against the 60 s run of the same kind."""
    short = {(r.kind, r.detector): r for r in rows if r.kind and r.seconds <= 60}
    for row in rows:
        match = short.get((row.kind, row.detector))
        if row.kind and row.seconds > 60 and match is not None:
            long_mib, short_mib = row.flow["added_mib"], match.flow["added_mib"]
            ratio = long_mib / max(short_mib, 1.0)
            print(
                f"peak memory {row.label} `{row.detector}`: {long_mib:.0f} MiB, "
                f"60 s: {short_mib:.0f} MiB (ratio {ratio:.2f}; flat is ~1)"
            )


def run_cases(cases: tuple[Case, ...], fresh: bool) -> None:
    """Every case, each clip generated (or found in the cache) just before it is measured.

    Each table line is printed as soon as its case is measured (a long run shows progress).
    """
    tiny, rows = clip(2, fresh), []
    print(f"pipeline, {time.strftime('%Y-%m-%d', time.gmtime())}, {os.cpu_count()} cores")
    print(TABLE_HEAD, flush=True)
    for case in cases:
        path = make_clip(case.clip, fresh)
        kind = case.clip.label.split(" ", 2)[2]  # "720p B-frames noisy"
        rows.append(measure(path, case.clip.label, case.detector, tiny, kind))
        print(table_line(rows[-1]), flush=True)
    print_stages(rows)
    print_memory(rows)
    for case in cases:
        if case.detector == DEFAULT_MODE:
            print_techniques(make_clip(case.clip, False), case.clip.label)


def run_clip(path: Path, detector: str) -> None:
    """The three-way comparison on a user's file; the last line is flow / plain decode."""
    row = measure(path, path.name, detector, clip(2, False))
    print(f"{path.name}: {row.seconds:.1f} s, {row.frames} frames")
    print(TABLE_HEAD)
    print(table_line(row))
    print_stages([row])
    print(f"detectors: {json.dumps(row.flow['cost'].get('detectors', {}), sort_keys=True)}")
    cpu_s = row.flow["cpu_s"]
    print(
        f"CPU: plain decode {row.decode_cpu_s:.1f} s, flow {cpu_s:.1f} s, "
        f"flow / decode {cpu_s / row.decode_cpu_s:.2f} (steadier than wall times on a busy machine)"
    )
    print(f"flow / plain decode: {row.flow['flow_s'] / row.decode_s:.2f}")


def idle_measures(fresh: bool) -> Measures:
    """This module's ways of measuring, for the idle cases (``benchmarks/_idle_cases.py``)."""
    return Measures(plain_decode, measure_in_child, clip(2, fresh))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--cases", choices=("default", "all", "idle", "idle-short", "idle-2h"), default="default"
    )
    parser.add_argument("--only", default="", help="only the cases whose label has this text")
    parser.add_argument("--clip", type=Path, help="measure this video file instead")
    parser.add_argument("--detector", default=DEFAULT_MODE, help="detector mode with --clip")
    parser.add_argument("--fresh", action="store_true", help="regenerate the clips")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        path, tiny, options = Path(args.child[0]), Path(args.child[1]), json.loads(args.child[2])
        child(path, tiny, options, rows=args.child[3:] == ["rows"])
    elif args.clip:
        run_clip(args.clip.resolve(), args.detector)
    elif args.cases == "idle-2h":
        run_long_idle(idle_measures(args.fresh), args.detector, args.fresh)
    elif args.cases.startswith("idle"):
        chosen_idle = tuple(c for c in IDLE_CASES[args.cases] if args.only in c.label)
        run_idle_cases(chosen_idle, args.fresh, idle_measures(args.fresh), args.detector)
    else:
        cases = DEFAULT_CASES if args.cases == "default" else ALL_CASES
        chosen = tuple(c for c in cases if args.only in f"{c.clip.label} {c.detector}")
        run_cases(chosen, args.fresh)
        idle = tuple(c for c in DEFAULT_IDLE if args.only in c.label)
        if args.cases == "default" and idle:
            run_idle_cases(idle, args.fresh, idle_measures(False), DEFAULT_MODE)


if __name__ == "__main__":
    main()
