"""Perception on random scenes it was never tuned on: the real flow against known truth.

    .venv/bin/python benchmarks/perception.py [--scenes 200] [--seed 0] [--modes motion+ocr,motion]

Each scene comes from ``synthetic.random_scene`` (seeded: 480p/720p/1080p, 15/25/30 fps,
mp4/mkv, textured and gradient objects of 30..250 px with stops and crossings, 0..3 signs of
28..80 px anywhere and at any time, scene cuts, lighting steps and drifts, noise, clean to heavy
compression). Every scene is processed by ``process_video`` in-process under a temporary Prefect
server, read back from its Parquet and scored by ``synthetic.scoring`` (see its docstring for
how objects, identities and texts are matched). One table per detector mode; the targets are
those of the default mode (``motion+ocr``). Encoded scenes are cached in benchmarks/.cache.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from storage.artifacts.reads import ArtifactReader
from synthetic import random_scene
from synthetic.scoring import summarise
from testkit.perception import ScoredScene, run_scene

CACHE = Path(__file__).resolve().parent / ".cache" / "perception"


def run_mode(mode: str, seeds: list[int], data_dir: Path) -> list[ScoredScene]:
    reader = ArtifactReader()
    scored = []
    for n, seed in enumerate(seeds, 1):
        started = time.perf_counter()
        done = run_scene(random_scene(seed), seed, mode, data_dir, reader)
        scored.append(done)
        s = done.score
        print(
            f"  [{mode} {n}/{len(seeds)}] seed {seed}: objects {s.predicted_objects}/"
            f"{s.truth_objects} matched {s.matched_objects}, texts {s.matched_texts}/"
            f"{s.truth_texts} (read {s.predicted_texts}), asked {s.asked_count} "
            f"({time.perf_counter() - started:.1f} s)",
            flush=True,
        )
    return scored


def print_table(mode: str, scored: list[ScoredScene]) -> None:
    summary = summarise([s.score for s in scored])
    print(f"\n{mode}: {summary.scenes} scenes")
    print(f"| {'figure':44s} | {'value':13s} | target |")
    print(f"|{'-' * 46}|{'-' * 15}|--------|")
    for figure, value, target in summary.rows():
        print(f"| {figure:44s} | {value:13s} | {target:6s} |")
    worst = [s.seed for s in scored if not s.score.count_exact]
    missed = [s.seed for s in scored if s.score.matched_texts < s.score.truth_texts]
    print(f"seeds with a wrong count: {worst[:40]}; with a missed text: {missed[:40]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modes", default="motion+ocr,motion")
    args = parser.parse_args()
    from prefect.settings import PREFECT_LOGGING_TO_API_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    seeds = [args.seed * 100_000 + i for i in range(args.scenes)]
    with (
        tempfile.TemporaryDirectory() as tmp,
        temporary_settings({PREFECT_LOGGING_TO_API_ENABLED: False}),
        prefect_test_harness(server_startup_timeout=180),
    ):
        data_dir = Path(tmp)
        os.environ["VES_DATA_DIR"] = tmp
        CACHE.mkdir(parents=True, exist_ok=True)
        (data_dir / "media").symlink_to(CACHE)
        results = {mode: run_mode(mode, seeds, data_dir) for mode in args.modes.split(",")}
    for mode, scored in results.items():
        print_table(mode, scored)


if __name__ == "__main__":
    main()
