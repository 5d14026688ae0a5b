"""How far the dry run's estimate is from the real run: wall time and compute, leave-one-out.

    .venv/bin/python benchmarks/estimate.py [--short 8] [--long 4] [--seed 0] [--mode motion+ocr]

Random synthetic scenes (``synthetic.random_scene``: 852x480 to 1920x1080, 15 to 30 fps,
10..20 s "short" and 30..60 s "long" ones, moving objects, signs, cuts, lighting and noise drawn
per seed) are processed by the real flow, in-process under a temporary Prefect server as the
other benchmarks do, after one warm-up run that is not counted. Each run records its measured
figures in the catalog (``run_costs``) as the service's runs do. Then, for each run, the cost model
is fitted on every OTHER run (leave-one-out) and asked for that run's compute and wall time; the
wall time is execute -> success (in-process, the start is the catalog's queued -> running, a few
milliseconds; under ``ves serve`` the fitted start adds the worker's ~1 s). The same is printed
for the fallback constants (no fitted runs), and finally the coefficients fitted on all runs, the
figures ``tasks/cost/model.py``'s ``FALLBACK`` was taken from.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from storage.catalog.runs.costs import CostSample
from tasks.cost.model import CostModel, Workload, fallback_model, fit_model

CACHE = Path(__file__).resolve().parent / ".cache" / "estimate"
TARGET = 0.25  # p90 of the wall time's absolute relative error


def process(scenes: list, mode: str, data_dir: Path) -> list[CostSample]:
    """Run each scene through the real flow; the samples its runs recorded (warm-up excluded)."""
    from flows.process_video import ProcessVideoParams, process_video
    from storage.catalog.database import Catalog
    from storage.catalog.runs.costs import RunCostStore
    from testkit.perception import queue_scene_run, scene_video

    catalog = Catalog.open(data_dir / "catalog.sqlite3")
    for n, scene in enumerate(scenes):
        path, _ = scene_video(scene, CACHE)
        _, run_id = queue_scene_run(catalog, path, mode)
        started = time.perf_counter()
        process_video(ProcessVideoParams(run_id=run_id))
        spec = scene.spec
        label = "warm-up" if n == 0 else f"{n}/{len(scenes) - 1}"
        print(
            f"  [{label}] seed {scene.seed}: {spec.duration_s:.0f} s {spec.width}x{spec.height}"
            f" @ {spec.fps} fps in {time.perf_counter() - started:.1f} s",
            flush=True,
        )
    samples = RunCostStore(catalog).newest(10_000)
    return sorted(samples, key=lambda s: s.recorded_at)[1:]  # the warm-up run is not counted


def _real_wall(sample: CostSample) -> float:
    return sample.start_s + sample.wall_s


def _errors(rows: list[tuple[CostSample, CostModel]]) -> list[float]:
    return [abs(m.wall_s(Workload.of_sample(s)) / _real_wall(s) - 1) for s, m in rows]


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def report(samples: list[CostSample], mode: str, min_runs: int) -> None:
    """Per-run estimates against the real figures, leave-one-out and with the fallback."""
    loo = [(s, fit_model([o for o in samples if o is not s], mode, min_runs)) for s in samples]
    fallback = [(s, fallback_model(mode)) for s in samples]
    print(f"\n{len(samples)} runs, `{mode}`, {time.strftime('%Y-%m-%d', time.gmtime())}")
    print(
        "| video | compute s | est. (fitted) | est. (fallback) | wall s | est. (fitted) "
        "| error | est. (fallback) | error |\n|---|---|---|---|---|---|---|---|---|"
    )
    for (s, fitted), (_, base) in zip(loo, fallback, strict=True):
        work = Workload.of_sample(s)
        real = _real_wall(s)
        est, est_fb = fitted.wall_s(work), base.wall_s(work)
        print(
            f"| {s.processed_s:.0f} s {s.width}x{s.height} @ {s.source_fps:g} fps "
            f"| {s.compute_s:.2f} | {sum(fitted.stage_seconds(work).values()):.2f} "
            f"| {sum(base.stage_seconds(work).values()):.2f} | {real:.2f} | {est:.2f} "
            f"| {est / real - 1:+.0%} | {est_fb:.2f} | {est_fb / real - 1:+.0%} |"
        )
    for name, rows in (("fitted, leave-one-out", loo), ("fallback constants", fallback)):
        compute = [
            abs(sum(m.stage_seconds(Workload.of_sample(s)).values()) / s.compute_s - 1)
            for s, m in rows
        ]
        print(
            f"compute |error| {name}: p50 {statistics.median(compute):.1%}, "
            f"p90 {_quantile(compute, 0.9):.1%}"
        )
        errors = _errors(rows)
        p50, p90 = statistics.median(errors), _quantile(errors, 0.9)
        verdict = "met" if p90 <= TARGET else "MISSED"
        print(
            f"wall time |error| {name}: p50 {p50:.1%}, p90 {p90:.1%} "
            f"(target p90 <= {TARGET:.0%}: {verdict})"
        )
    whole = fit_model(samples, mode, min_runs)
    print(
        f"\nfitted on all {len(samples)} runs (start {whole.start_s:.3f} s, overhead "
        f"{whole.overhead_s:.3f} s):"
    )
    for stage, coefficients in whole.stages.items():
        print(f"  {stage}: ({', '.join(f'{c:.6g}' for c in coefficients)})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--short", type=int, default=8)
    parser.add_argument("--long", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", default="motion+ocr")
    parser.add_argument("--min-runs", type=int, default=3)
    parser.add_argument(
        "--samples", type=Path, help="report on the runs a previous call saved, without running"
    )
    args = parser.parse_args()
    if args.samples:
        report(load(args.samples), args.mode, args.min_runs)
        return
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

    from prefect.settings import PREFECT_LOGGING_TO_API_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    from synthetic import random_scenes

    scenes = random_scenes(args.short + 1, args.seed, profile="short")
    scenes += random_scenes(args.long, args.seed + 1, profile="long")
    with (
        tempfile.TemporaryDirectory() as tmp,
        temporary_settings({PREFECT_LOGGING_TO_API_ENABLED: False}),
        prefect_test_harness(server_startup_timeout=180),
    ):
        os.environ["VES_DATA_DIR"] = tmp
        os.environ.setdefault("VES_CHUNK_S", "0")  # one pass: chunks have their own speed-up
        samples = process(scenes, args.mode, Path(tmp))
    saved = CACHE / f"samples-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}.json"
    saved.write_text(json.dumps([dataclasses.asdict(s) for s in samples], indent=1))
    print(f"\nthe runs' figures: {saved} (--samples {saved} reports on them again)")
    report(samples, args.mode, args.min_runs)


def load(path: Path) -> list[CostSample]:
    return [CostSample(**row) for row in json.loads(path.read_text())]


if __name__ == "__main__":
    main()
