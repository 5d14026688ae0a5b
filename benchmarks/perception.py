"""Perception on random scenes it was never tuned on: the real flow against known truth.

    .venv/bin/python benchmarks/perception.py [--family scenes|cases] [--range heldout|tuning]
        [--scenes 200] [--modes motion+person+ocr,motion]

SEED RANGES (fixed here before any figure of them was seen, issue 30): constants of the
detectors and the tracker are chosen on the ``tuning`` range only (seeds 0..199, the range every
figure before issue 30 was measured and tuned on); the ``heldout`` range (100000..100199) is
never looked at while tuning, and its figures are the ones reported. ``--scenes N`` takes the
first N seeds of the range. Each table names the commit, the command and the seeds it ran.

FAMILIES: ``--family scenes`` (the default) draws ``synthetic.random_scene``; ``--family cases``
draws ``synthetic.random_case_scene`` (scenes built around picture changes, returns, non-rigid
shapes, shadows, photos and pairs), with its own ranges (tuning 0..99, held out 200000..200099,
``testkit.perception.FAMILY_SEED_RANGES``), and adds a table per case.

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
import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from storage.artifacts.layout import RunLayout, artifact_path
from storage.artifacts.reads import ArtifactReader
from synthetic import CASES
from synthetic.summary import summarise
from tasks.sample.frames import FRAMES_DIR
from testkit.perception import FAMILIES, FAMILY_SEED_RANGES, ScoredScene, run_scene

CACHE = Path(__file__).resolve().parent / ".cache" / "perception"
DEFAULT_MODE = "motion+person+ocr"  # the service's default (ves.detector_mode)


def range_seeds(name: str, scenes: int, family: str = "scenes") -> list[int]:
    """The first ``scenes`` seeds of the family's range ``name`` (``tuning`` or ``heldout``)."""
    seeds = FAMILY_SEED_RANGES[family][name]
    if not 0 < scenes <= len(seeds):
        raise SystemExit(f"--scenes must be 1..{len(seeds)} for the {name} range")
    return list(seeds[:scenes])


def provenance(range_name: str, seeds: list[int], family: str = "scenes") -> str:
    """The line each table carries: commit (and whether the tree was dirty), command, seeds."""
    root = Path(__file__).resolve().parent.parent
    git = ["git", "-C", str(root)]
    commit = subprocess.run(
        [*git, "rev-parse", "--short=10", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True)
    stamp = commit.stdout.strip() or "unknown"
    stamp += " (with uncommitted changes)" if dirty.stdout.strip() else ""
    command = shlex.join(["benchmarks/perception.py", *sys.argv[1:]])
    where = f"{family} family, {range_name} seeds {seeds[0]}..{seeds[-1]}"
    return f"commit {stamp}; command `{command}`; {where}"


def run_mode(
    mode: str,
    seeds: list[int],
    data_dir: Path,
    scores: Path | None,
    family: str = "scenes",
    keep: Path | None = None,
) -> list[ScoredScene]:
    reader = ArtifactReader()
    scored = []
    for n, seed in enumerate(seeds, 1):
        started = time.perf_counter()
        with keeping(None if keep is None else keep / str(seed)):
            done = run_scene(FAMILIES[family](seed), seed, mode, data_dir, reader)
        if keep is not None:
            for name in ("detections", "frames"):
                shutil.copy(artifact_path(done.run_dir, name), keep / str(seed))
        scored.append(done)
        write_score(scores, done)
        s = done.score
        print(
            f"  [{mode} {n}/{len(seeds)}] seed {seed}: objects {s.predicted_objects}/"
            f"{s.truth_objects} matched {s.matched_objects}, texts {s.matched_texts}/"
            f"{s.truth_texts} (read {s.predicted_texts}), asked {s.asked_count} "
            f"{' '.join(done.scene.cases)} ({time.perf_counter() - started:.1f} s)",
            flush=True,
        )
    return scored


@contextmanager
def keeping(folder: Path | None) -> Iterator[None]:
    """While a scene runs, keep its sampled thumbnails in ``folder/frames`` when its work folder
    is discarded (for ``benchmarks/retrack.py``, which replays the later stages on them)."""
    if folder is None:
        yield
        return
    discard = RunLayout.discard

    def keep_then_discard(layout: RunLayout) -> None:
        frames = layout.scratch_dir / FRAMES_DIR
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(frames, folder / FRAMES_DIR, ignore=shutil.ignore_patterns("*.u8", "text"))
        discard(layout)

    with mock.patch.object(RunLayout, "discard", keep_then_discard):
        yield


def print_table(mode: str, scored: list[ScoredScene], source: str) -> None:
    summary = summarise([s.score for s in scored])
    print(f"\n{mode}: {summary.scenes} scenes; {source}")
    print(f"| {'figure':44s} | {'value':13s} | target |")
    print(f"|{'-' * 46}|{'-' * 15}|--------|")
    for figure, value, target in summary.rows():
        print(f"| {figure:44s} | {value:13s} | {target:6s} |")
    worst = [s.seed for s in scored if not s.score.count_exact]
    missed = [s.seed for s in scored if s.score.matched_texts < s.score.truth_texts]
    print(f"seeds with a wrong count: {worst[:40]}; with a missed text: {missed[:40]}")


def print_cases(mode: str, scored: list[ScoredScene]) -> None:
    """One row per case: the figures of the scenes built around it (a scene of two cases
    counts in both rows)."""
    print(f"\n{mode}, per case:")
    print(
        "| case | scenes | count exact | phantoms / 100 | precision / recall | IDF1 | switches "
        "| first / last p95 (s) | identities exact | returns recognised |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case in CASES:
        some = [s.score for s in scored if case in s.scene.cases]
        if not some:
            continue
        m = summarise(some)
        ids = f"{m.identities_exact:.0%}" if m.identity_scenes else "not scored"
        returns = m.returns_recognised if m.identity_scenes else "not scored"
        print(
            f"| {case} | {m.scenes} | {m.count_exact:.0%} | {m.phantoms_per_100:.0f} | "
            f"{m.object_precision:.2f} / {m.object_recall:.2f} | {m.idf1:.2f} | {m.id_switches} | "
            f"{m.first_p95_s:.2f} / {m.last_p95_s:.2f} | {ids} | {returns} |"
        )


def write_score(path: Path | None, done: ScoredScene) -> None:
    """Append one JSON line for the scene (mode, seed and every field of its ``SceneScore``) as
    soon as it is scored, so a subset of the seeds, or a run stopped early, can be summarised
    again without running it."""
    if path is not None:
        row = {"mode": done.mode, "seed": done.seed, "cases": list(done.scene.cases)}
        row |= dataclasses.asdict(done.score)
        with path.open("a") as out:
            out.write(json.dumps(row) + "\n")


def parse_args() -> argparse.Namespace:
    """The command line (see the module doc)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--family", choices=sorted(FAMILIES), default="scenes")
    parser.add_argument("--range", choices=("heldout", "tuning"), default="heldout")
    parser.add_argument("--scenes", type=int, default=200)
    parser.add_argument("--modes", default=DEFAULT_MODE)
    parser.add_argument(
        "--scores", type=Path, help="append every scene's score to this file (JSON lines)"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep what the later stages read, per scene, under KEEP/<range>/<seed> "
        "(replayed by benchmarks/retrack.py; the cases family under KEEP/cases-<range>/<seed>)",
    )
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    from prefect.settings import PREFECT_LOGGING_TO_API_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    seeds = range_seeds(args.range, args.scenes, args.family)
    source = provenance(args.range, seeds, args.family)
    # benchmarks/retrack.py replays the scenes family from KEEP/<range>; cases go beside it.
    kept = args.range if args.family == "scenes" else f"{args.family}-{args.range}"
    keep_dir = None if args.keep is None else args.keep / kept
    with (
        tempfile.TemporaryDirectory() as tmp,
        temporary_settings({PREFECT_LOGGING_TO_API_ENABLED: False}),
        prefect_test_harness(server_startup_timeout=180),
    ):
        data_dir = Path(tmp)
        os.environ["VES_DATA_DIR"] = tmp
        CACHE.mkdir(parents=True, exist_ok=True)
        (data_dir / "media").symlink_to(CACHE)
        results = {
            mode: run_mode(mode, seeds, data_dir, args.scores, args.family, keep_dir)
            for mode in args.modes.split(",")
        }
    for mode, scored in results.items():
        print_table(mode, scored, source)
        if args.family == "cases":
            print_cases(mode, scored)


if __name__ == "__main__":
    main()
