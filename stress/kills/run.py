"""``python -m stress.kills``: kill -9 trials against the whole service as ``make run`` starts it.

    .venv/bin/python -m stress.kills [--trials 20] [--seed 1] [--keep DIR]

``ves serve`` runs in a throwaway data folder (SQLite catalog, local store, local Prefect server,
worker and warm starter; a heartbeat timeout of 8 s). One tenant uploads two 40 s clips with a
known truth and runs each once. A reader (``stress.kills.prober``) then reads what is served and
asks questions for the whole session. Each trial executes a clip again, waits until its run
reaches a stage drawn at random (``decode`` ... ``cost``, ``publish``) plus a random delay, and
SIGKILLs one target, in turn: the flow run's process, the Prefect worker, the API, the Prefect
server, or every process of the service at once (a power cut). ``ves serve`` stops everything
when one of its children dies, so after any kill but the flow's the trial starts it again, as
a process manager would. Then:

- the run must end ``succeeded`` or ``failed`` with a reason, within the service's restart plus
  the heartbeat timeout plus the reaper's period (half the timeout) plus 10 s;
- the clip executed once more must succeed and match its truth;
- ``stress.kills.checks`` must find nothing: catalog integrity, no run left active, every
  succeeded run whole (sha256 of every file), nothing under any other run's key, usage
  counters equal to the records, every flow run final in Prefect.

At the end, everything the reader was served must come from a succeeded, whole run. A trial
survives when all of that holds; the last line is ``kills: S/N trials survived ...``.
"""

from __future__ import annotations

import argparse
import itertools
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from storage.artifacts.blobs import open_blob_store
from storage.catalog.database import Catalog
from storage.catalog.records import Run
from storage.catalog.runs.store import RunStore
from stress.kills.checks import check_all
from stress.kills.prober import Prober
from stress.kills.world import (
    HEARTBEAT_TIMEOUT_S,
    TARGETS,
    KillWorld,
    movers_match_truth,
    service_env,
)
from tasks.context import STAGE_WEIGHTS
from testkit.service import wait_video
from ves.settings import Settings

STAGES = tuple(STAGE_WEIGHTS)
ENDED = ("succeeded", "failed")
SLACK_S = 10.0


@dataclass(frozen=True)
class Trial:
    number: int
    target: str  # one of TARGETS
    stage: str  # the run's stage to wait for
    at: float  # then this share of the stage's usual length before the kill (0..1)


@dataclass
class Outcome:
    trial: Trial
    caught: str = ""  # the run's state/stage at the kill
    killed: int = 0  # processes killed
    ended: str = ""  # how the run ended: "failed processing_stopped", "succeeded"
    ended_s: float = 0.0  # kill -> the run ended
    bound_s: float = 0.0
    restart_s: float | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def survived(self) -> bool:
        return not self.problems


def plan_trials(count: int, seed: int) -> list[Trial]:
    """``count`` trials: every target in turn (shuffled each round), a random stage and delay."""
    rng = random.Random(seed)
    targets: list[str] = []
    while len(targets) < count:
        targets += rng.sample(TARGETS, len(TARGETS))
    return [
        Trial(i, targets[i], rng.choice(STAGES), round(rng.uniform(0.0, 1.0), 2))
        for i in range(count)
    ]


def _wait_run(runs: RunStore, run_id: str, done: Callable[[Run], bool], timeout_s: float) -> Run:
    deadline = time.monotonic() + timeout_s
    while True:
        run = runs.get(run_id)
        if done(run) or time.monotonic() > deadline:
            return run
        time.sleep(0.005)


def _reached(stage: str) -> Callable[[Run], bool]:
    order = {name: i for i, name in enumerate(STAGES)}
    return lambda run: run.state in ENDED or order.get(run.stage or "", -1) >= order[stage]


def _left(stage: str) -> Callable[[Run], bool]:
    return lambda run: run.state in ENDED or run.stage != stage


def run_trial(world: KillWorld, runs: RunStore, trial: Trial, stage_s: dict[str, float]) -> Outcome:
    """One trial; ``stage_s``: how long each stage of a clip's run usually takes."""
    outcome = Outcome(trial)
    video_id = world.videos[trial.number % len(world.videos)]
    run_id = world.execute(video_id)
    if _wait_run(runs, run_id, _reached(trial.stage), timeout_s=180).stage == trial.stage:
        # Into the stage by ``at`` of its usual length, or to its very end if it ends sooner.
        _wait_run(runs, run_id, _left(trial.stage), trial.at * stage_s.get(trial.stage, 0.0))
    caught = runs.get(run_id)
    outcome.caught = f"{caught.state}/{caught.stage}"
    killed_at = time.monotonic()
    outcome.killed = len(world.kill(trial.target))
    if trial.target != "flow":
        outcome.restart_s = world.restart_after_kill()
    outcome.bound_s = (outcome.restart_s or 0.0) + 1.5 * HEARTBEAT_TIMEOUT_S + SLACK_S
    ended = _wait_run(runs, run_id, lambda run: run.state in ENDED, outcome.bound_s)
    outcome.ended_s = time.monotonic() - killed_at
    outcome.ended = f"{ended.state} {ended.error_code or ''}".strip()
    if ended.state not in ENDED:
        outcome.problems.append(f"run {run_id} still {ended.state} after {outcome.ended_s:.0f} s")
    outcome.problems += _again(world, video_id)
    return outcome


def _again(world: KillWorld, video_id: str) -> list[str]:
    """The clip executed once more must succeed and tell its truth."""
    with world.client() as client:
        accepted = client.post(f"/api/product/videos/{video_id}/execute")
        if accepted.status_code != 202:
            return [f"execute after the kill answered {accepted.status_code}: {accepted.text}"]
        video = wait_video(client, video_id, set(ENDED), timeout_s=300)
        if video["state"] != "succeeded":
            return [f"the run after the kill ended {video['state']}: {video['latest_run']}"]
        graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
    wrong = movers_match_truth(graph["objects"])
    return [f"the run after the kill: {wrong}"] if wrong else []


def _first_runs(world: KillWorld, runs: RunStore) -> dict[str, float]:
    """Run each clip once, alone, to its truth; how long each stage lasted (as the catalog
    shows it, which is what a trial waits for), the longest of the runs."""
    lengths: dict[str, float] = {}
    for video_id in world.videos:
        run_id, seen = world.execute(video_id), dict[str, float]()
        while (run := runs.get(run_id)).state not in ENDED:
            seen.setdefault(run.stage or "", time.monotonic())
            time.sleep(0.005)
        seen["end"] = time.monotonic()
        if run.state != "succeeded":
            raise AssertionError(f"the first run of a clip ended {run.state}: {run.error_message}")
        with world.client() as client:
            graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
        if wrong := movers_match_truth(graph["objects"]):
            raise AssertionError(f"the first run of a clip is wrong: {wrong}")
        times = sorted(seen.items(), key=lambda item: item[1])
        for (stage, began), (_, ended) in itertools.pairwise(times):
            lengths[stage] = max(lengths.get(stage, 0.0), ended - began)
    return lengths


def _checked(world: KillWorld, settings: Settings, outcome: Outcome) -> None:
    """The invariants, given a few seconds for Prefect to record flow runs that just ended."""
    deadline = time.monotonic() + 20
    while problems := check_all(settings, world.prefect_url):
        if time.monotonic() > deadline:
            outcome.problems += problems
            return
        time.sleep(1)


def run_trials(data: Path, trials: list[Trial]) -> tuple[list[Outcome], Prober, list[str]]:
    """Set the world up, run ``trials``, check what was served; stop the service at the end."""
    world = KillWorld(data, service_env(data))
    settings = Settings(data_dir=data, database_url=None, storage_url=None)  # as serve's
    try:
        world.setup()
        catalog = Catalog.from_settings(settings, migrate=False)
        runs = RunStore(catalog)
        stage_s = _first_runs(world, runs)
        prober = Prober(world.url, world.key, world.videos)
        prober.start()
        outcomes = []
        for trial in trials:
            outcome = run_trial(world, runs, trial, stage_s)
            _checked(world, settings, outcome)
            outcomes.append(outcome)
            print(row(outcome), flush=True)
        prober.stop()
        by_id = {
            r.run_id: {"state": r.state, "tenant_id": r.tenant_id, "video_id": r.video_id}
            for r in (runs.get(run_id) for run_id in prober.served)
        }
        served = prober.served_problems(open_blob_store(settings), by_id)
        catalog.dispose()
        return outcomes, prober, served
    finally:
        world.stop()


def row(o: Outcome) -> str:
    restart = f"{o.restart_s:.0f}" if o.restart_s is not None else "-"
    verdict = "yes" if o.survived else "NO: " + "; ".join(o.problems)
    return (
        f"| {o.trial.number + 1} | {o.trial.target} | {o.trial.stage} at {o.trial.at:.0%}"
        f" | {o.caught} | {o.killed} | {restart} | {o.ended} | {o.ended_s:.1f} / {o.bound_s:.0f}"
        f" | {verdict} |"
    )


HEADER = (
    "| # | killed | aimed at | run was | pids | restart s | run ended | ended s / bound"
    " | survived |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def summary(outcomes: list[Outcome], prober: Prober, served: list[str]) -> str:
    survived = sum(o.survived for o in outcomes)
    slowest = max((o.ended_s for o in outcomes), default=0.0)
    reads = sum(v for k, v in prober.outcomes.items() if k != "down")
    return (
        f"kills: {survived}/{len(outcomes)} trials survived, runs ended within {slowest:.0f} s"
        f" of the kill, {reads} reads while killing ({len(served)} served wrongly),"
        f" {prober.asks['answered']}/{prober.asks['tried']} asks answered"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="data folder to keep (default: a temporary one)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="ves-kills-"))
    print(HEADER, flush=True)
    try:
        outcomes, prober, served = run_trials(root / "data", plan_trials(args.trials, args.seed))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    for problem in served:
        print(f"served wrongly: {problem}")
    print(f"reads: {dict(prober.outcomes)}")
    print(summary(outcomes, prober, served), flush=True)
    sys.exit(0 if all(o.survived for o in outcomes) and not served else 1)


if __name__ == "__main__":
    main()
