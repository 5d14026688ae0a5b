"""The idle-heavy cases of ``benchmarks/pipeline.py`` (issues 32, 42): the activity gate off, on
(the default) and in keyframe mode.

    nice -n 15 .venv/bin/python benchmarks/pipeline.py --cases idle [--only "20% GOP 2 s"]
    nice -n 15 .venv/bin/python benchmarks/pipeline.py --cases idle-short   # 60 s each

Each case is a clip of ``benchmarks/_idle.py`` (1080p 30 fps; 5, 20 or 50 % of the time active;
2 or 10 s GOPs; x264's B-frames or none; noisy or clean; 10 min, or 60 s for ``idle-short``),
and, back to back on the same file: the plain decode, then the flow in a fresh process with the
gate off (``VES_SKIP_STILL=false``), on (``true``, the default) and in keyframe mode
(``keyframes``). Printed per case: the times and their ratios to the plain decode (issue 42's
targets, default settings: <= 0.25x at 5 %, <= 0.5x at 20 %; keyframe mode on a rate-capped
20 % clip <= 0.6x), the frames decoded and the seconds skipped (cost.json's ``frames``), the
recall of the planted events in each mode (``benchmarks/_idle_recall.py`` defines it) and the
largest move of an event's first or last seen between off and on (target: within one sample
interval). Then per case the slowest stages, the events missed, and those a
skipped span covers. Each run's result (cost.json, rows) is kept in benchmarks/.cache/idle-runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise, product
from pathlib import Path
from typing import Any

from benchmarks._idle import IdleScene, IdleSpec, make_idle_clip
from benchmarks._idle_recall import Sighting, find_events

_TEN_MIN = tuple(
    IdleSpec(600, active, gop_s, bframes, noisy)
    for active, gop_s, bframes, noisy in product(
        (0.05, 0.2, 0.5), (2, 10), (True, False), (True, False)
    )
)
IDLE_CASES = {"idle": _TEN_MIN, "idle-short": tuple(replace(c, seconds=60) for c in _TEN_MIN)}
DEFAULT_IDLE = (IdleSpec(600, 0.2),)  # the 20 % target, in the default set


@dataclass(frozen=True)
class Measures:
    """How ``benchmarks/pipeline.py`` measures (passed in: it imports this module): its plain
    decode of a file, its flow run in a fresh process, and the tiny clip that warms Prefect."""

    decode: Callable[[Path], tuple[float, int]]
    flow: Callable[..., dict[str, Any]]
    tiny: Path


RUNS = Path(__file__).resolve().parent / ".cache" / "idle-runs"
TARGETS = {0.05: 0.25, 0.2: 0.5}  # flow with default settings / plain decode (issue 42)


@dataclass(frozen=True)
class GateRun:
    """One flow run of an idle clip: its time, cost.json's frames and what it saw."""

    flow_s: float
    frames: Mapping[str, Any]
    found: Mapping[str, Sighting | None]
    interval_s: float
    stages: Mapping[str, float]
    gate: Mapping[str, Any]  # cost.json's activity_gate: the cue, and why it fell back

    @property
    def recall(self) -> float:
        return sum(s is not None for s in self.found.values()) / max(1, len(self.found))

    @property
    def skipped_spans(self) -> list[tuple[float, float]]:
        """The stretches the gate did not decode (none when the run does not say)."""
        spans = self.frames.get("skipped_spans") or []
        return [(float(a), float(b)) for a, b in (_span(s) for s in spans)]


def _span(span: Any) -> tuple[float, float]:
    """A skipped span as ``(start_s, end_s)``, from a pair or a mapping."""
    if isinstance(span, Mapping):
        return span.get("start_s", 0.0), span.get("end_s", 0.0)
    return span[0], span[1]


def measure_gate(
    path: Path, scene: IdleScene, measures: Measures, detector: str, mode: str
) -> GateRun:
    """The flow on ``path`` with the gate's ``mode`` (``VES_SKIP_STILL``: ``false``, ``true``
    (the default) or ``keyframes``), scored against the planted events."""
    settings = {"VES_SKIP_STILL": mode}
    timeout_s = max(600.0, 4 * scene.idle.seconds)
    result = measures.flow(
        path,
        measures.tiny,
        {"detector": detector},
        timeout_s=timeout_s,
        settings=settings,
        rows=True,
    )
    rows = result["rows"]
    RUNS.mkdir(parents=True, exist_ok=True)  # kept to score again when the definition changes
    kept = RUNS / f"{Path(scene.idle.filename).stem}-{GATE_NAMES[mode]}.json"
    kept.write_text(json.dumps(result))
    interval_s = _sample_interval(rows["frames"])
    found = find_events(scene, rows["detections"], rows["frames"], interval_s)
    cost = result["cost"]
    frames, gate = cost.get("frames", {}), cost.get("activity_gate", {})
    return GateRun(result["flow_s"], frames, found, interval_s, cost["stages"], gate)


def _sample_interval(frames: Sequence[Mapping[str, Any]]) -> float:
    """The run's sample interval: the commonest step between sampled times."""
    times = sorted(float(f["t_s"]) for f in frames)
    steps = sorted(round(b - a, 3) for a, b in pairwise(times))
    return steps[len(steps) // 2] if steps else 0.0


GATE_NAMES = {"false": "off", "true": "on", "keyframes": "keyframes"}


@dataclass(frozen=True)
class IdleRow:
    """One idle case: the plain decode and the flow with the gate off, on (the default: the
    packet cue) and in keyframe mode."""

    scene: IdleScene
    decode_s: float
    off: GateRun
    on: GateRun
    keyframes: GateRun

    def largest_move(self) -> tuple[float, str]:
        """The largest move of a first or last seen between off and on, and whose."""
        moves = [(0.0, "-")]
        for name, off in self.off.found.items():
            on = self.on.found.get(name)
            if off is not None and on is not None:
                move = max(abs(on.first_s - off.first_s), abs(on.last_s - off.last_s))
                moves.append((move, name))
        return max(moves)


TABLE_HEAD = (
    "| case | active | GOP s | B-frames | noise | plain decode s | flow off s (/ decode) "
    "| flow on s (/ decode) | flow keyframes s (/ decode) | decoded off; on; keyframes "
    "| skipped s (on; keyframes) | recall off / on / keyframes "
    "| largest first/last move s (interval) |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def idle_line(row: IdleRow) -> str:
    """A case's figures as one table line."""
    idle, runs = row.scene.idle, (row.off, row.on, row.keyframes)
    decoded = "; ".join(str(r.frames.get("decoded", "?")) for r in runs)
    skipped = "; ".join(f"{sum(b - a for a, b in r.skipped_spans):.0f}" for r in runs[1:])
    move, name = row.largest_move()
    total = len(row.scene.events)
    times = " | ".join(f"{r.flow_s:.1f} ({r.flow_s / row.decode_s:.2f}x)" for r in runs)
    recall = " / ".join(f"{r.recall * total:.0f}/{total}" for r in runs)
    return (
        f"| {idle.label} | {idle.active:.0%} | {idle.gop_s} | {'yes' if idle.bframes else 'no'} "
        f"| {'noisy' if idle.noisy else 'clean'} | {row.decode_s:.1f} | {times} | {decoded} "
        f"| {skipped} | {recall} | {move:.2f} {name} ({row.on.interval_s:.2f}) |"
    )


def print_misses(row: IdleRow) -> None:
    """The slowest stages off and on, the events a run missed, those a skipped span covers,
    and moves past one interval."""
    label = row.scene.idle.label
    runs = (("off", row.off), ("on", row.on), ("keyframes", row.keyframes))
    for which, run in runs:
        stages = sorted(run.stages.items(), key=lambda kv: -kv[1])[:4]
        print(f"{label}: gate {which}: " + ", ".join(f"{n} {s:.1f} s" for n, s in stages))
        if run.gate.get("fallback"):
            print(f"{label}: gate {which} fell back: {run.gate['fallback']}")
    for which, run in runs:
        missed = [name for name, seen in run.found.items() if seen is None]
        if missed:
            print(f"{label}: gate {which} missed {', '.join(missed)}")
    for event in row.scene.events:
        end = event.start_s if event.kind in ("sign", "light") else event.end_s
        covered = [s for s in row.on.skipped_spans if s[0] < end and event.start_s < s[1]]
        if covered:
            print(f"{label}: {event.name} ({event.start_s:.1f}-{end:.1f} s) in skipped {covered}")
    move, name = row.largest_move()
    if move > row.on.interval_s + 1e-6:
        print(f"{label}: {name} seen {move:.2f} s apart off and on (> one sample interval)")


def measure_idle(idle: IdleSpec, fresh: bool, measures: Measures, detector: str) -> IdleRow:
    """The plain decode and the flow with the gate off and on, on one idle clip."""
    path, scene = make_idle_clip(idle, fresh)
    decode_s, _ = measures.decode(path)
    off, on, keyframes = (
        measure_gate(path, scene, measures, detector, mode) for mode in GATE_NAMES
    )
    return IdleRow(scene, decode_s, off, on, keyframes)


def run_idle_cases(
    cases: Sequence[IdleSpec], fresh: bool, measures: Measures, detector: str
) -> None:
    """Every idle case, each line printed as soon as it is measured, then what was missed."""
    print(f"\nidle-heavy cases, detector `{detector}`, gate off, on and in keyframe mode")
    print(TABLE_HEAD, flush=True)
    rows = []
    for idle in cases:
        rows.append(measure_idle(idle, fresh, measures, detector))
        print(idle_line(rows[-1]), flush=True)
    for row in rows:
        print_misses(row)
        target = TARGETS.get(row.scene.idle.active)
        if target is not None:
            ratio = row.on.flow_s / row.decode_s
            verdict = "met" if ratio <= target else "NOT met"
            print(f"{row.scene.idle.label}: gate on {ratio:.2f}x, target <= {target}x {verdict}")
