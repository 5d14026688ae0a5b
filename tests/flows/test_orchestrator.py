"""The reaper: every run that stopped without finishing ends ``failed``, and only those.

The orchestrator is replaced by a scripted ``Submitter`` that says which flow runs ended badly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from flows.orchestrator import SUBMIT_GRACE_S, close_flow_runs, reap, reap_exports
from storage.artifacts.layout import RunLayout
from storage.catalog.database import Catalog
from storage.catalog.exports import ExportStore
from storage.catalog.records import Run
from storage.catalog.runs.store import RunFailure, RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from ves.clock import to_rfc3339, utc_now
from ves.settings import Settings

CRASHED = "the processing crashed or was killed (flow run fr-crashed crashed)"


@dataclass
class ScriptedSubmitter:
    """Answers ``ended_badly`` from a script and records what it was asked and told."""

    bad: dict[str, str] = field(default_factory=dict)
    asked: list[list[str]] = field(default_factory=list)
    crashed: list[tuple[str, str]] = field(default_factory=list)
    open: list[str] = field(default_factory=list)  # flow runs Prefect holds open
    completed: list[tuple[str, str]] = field(default_factory=list)

    async def submit(self, run: Run, *, concurrency: int) -> str:
        return f"fr-{run.run_id}"

    async def ended_badly(self, flow_run_ids: Sequence[str]) -> dict[str, str]:
        self.asked.append(sorted(flow_run_ids))
        return {i: m for i, m in self.bad.items() if i in flow_run_ids}

    async def mark_crashed(self, flow_run_id: str, message: str) -> None:
        self.crashed.append((flow_run_id, message))

    async def still_open(self) -> list[str]:
        return list(self.open)

    async def mark_completed(self, flow_run_id: str, message: str) -> None:
        self.completed.append((flow_run_id, message))


@dataclass(frozen=True)
class Case:
    """A run to set up: its state, flow run, age and heartbeat; and whether it is reaped."""

    name: str
    state: str  # queued | running | succeeded
    flow_run_id: str | None
    created_s_ago: float = 0.0
    heartbeat_s_ago: float = 0.0
    reaped_with: tuple[str, str] | None = None  # (error code, message fragment)


CASES = [
    Case("crashed", "running", "fr-crashed", reaped_with=("processing_stopped", CRASHED)),
    Case(
        "crashed_before_start",
        "queued",
        "fr-crashed-queued",
        reaped_with=("processing_stopped", "flow run fr-crashed-queued"),
    ),
    Case(
        "silent",
        "running",
        "fr-silent",
        heartbeat_s_ago=300,
        reaped_with=("processing_stopped", "no sign of life"),
    ),
    Case(
        "never_submitted",
        "queued",
        None,
        created_s_ago=SUBMIT_GRACE_S + 30,
        reaped_with=("not_submitted", "never reached the orchestrator"),
    ),
    Case("healthy_running", "running", "fr-ok", heartbeat_s_ago=30),
    Case("healthy_queued", "queued", "fr-waiting", created_s_ago=600),  # submitted: waits
    Case("just_created", "queued", None, created_s_ago=SUBMIT_GRACE_S - 30),
    Case("done", "succeeded", "fr-done-but-failed-later", created_s_ago=900, heartbeat_s_ago=900),
]
BAD = {
    "fr-crashed": CRASHED,
    "fr-crashed-queued": "the run was cancelled in the orchestrator (flow run fr-crashed-queued)",
    "fr-done-but-failed-later": "the processing failed in the orchestrator (flow run x failed)",
}


def ago(seconds: float) -> str:
    return to_rfc3339(utc_now() - timedelta(seconds=seconds))


def set_up(catalog: Catalog, settings: Settings, tenant_id: str, case: Case) -> Run:
    """A run in the case's state, with a work folder holding a file."""
    video = VideoStore(catalog).create(
        NewVideo(tenant_id, case.name, "url", "https://media.example.com/a.mp4")
    )
    runs = RunStore(catalog)
    run = runs.create(tenant_id, video.video_id, {})
    if case.flow_run_id:
        runs.set_flow_run(run.run_id, case.flow_run_id)
    if case.state in {"running", "succeeded"}:
        assert runs.start(run.run_id)
    if case.state == "succeeded":
        assert runs.succeed(run.run_id, "/published")
    with catalog.write() as conn:
        conn.execute(
            text("UPDATE runs SET created_at = :created, heartbeat_at = :beat WHERE run_id = :id"),
            {
                "created": ago(case.created_s_ago),
                "beat": ago(case.heartbeat_s_ago),
                "id": run.run_id,
            },
        )
    layout = RunLayout(settings.work_root, tenant_id, video.video_id, run.run_id)
    layout.prepare()
    (layout.scratch_dir / "source.bin").write_bytes(b"partial download")
    return runs.get(run.run_id)


@pytest.fixture
def acme(tenants: TenantStore) -> str:
    return tenants.create_tenant("acme").tenant_id


def work_dir(settings: Settings, run: Run) -> Path:
    return RunLayout(settings.work_root, run.tenant_id, run.video_id, run.run_id).work_dir


def test_reap_fails_exactly_the_stopped_runs(
    settings: Settings, catalog: Catalog, acme: str
) -> None:
    runs = RunStore(catalog)
    made = {case.name: set_up(catalog, settings, acme, case) for case in CASES}
    submitter = ScriptedSubmitter(dict(BAD))

    reaped = asyncio.run(reap(settings, runs, submitter))

    expected = {c.name for c in CASES if c.reaped_with}
    assert sorted(reaped) == sorted(made[name].run_id for name in expected)
    for case in CASES:
        before, after = made[case.name], runs.get(made[case.name].run_id)
        if case.reaped_with is None:
            assert after == before, case.name
            assert work_dir(settings, after).is_dir(), case.name
            continue
        code, fragment = case.reaped_with
        assert (after.state, after.error_code) == ("failed", code), case.name
        assert after.error_message is not None and fragment in after.error_message, case.name
        assert VideoStore(catalog).get(acme, after.video_id).state == "failed"
        assert not work_dir(settings, after).exists(), case.name
    # The orchestrator is asked only about flow runs of runs still active after the sweep.
    asked_for = {c.flow_run_id for c in CASES if c.flow_run_id and c.state != "succeeded"}
    assert submitter.asked == [sorted(asked_for - {"fr-silent"})]
    # The silent run's flow run is told it is dead, with the run's own message.
    silent = runs.get(made["silent"].run_id)
    assert submitter.crashed == [("fr-silent", silent.error_message)]


def test_a_second_reap_finds_nothing(settings: Settings, catalog: Catalog, acme: str) -> None:
    runs = RunStore(catalog)
    for case in CASES:
        set_up(catalog, settings, acme, case)
    submitter = ScriptedSubmitter(dict(BAD))
    assert len(asyncio.run(reap(settings, runs, submitter))) == 4
    assert asyncio.run(reap(settings, runs, submitter)) == []


def test_reap_with_nothing_to_do(settings: Settings, catalog: Catalog, acme: str) -> None:
    submitter = ScriptedSubmitter()
    assert asyncio.run(reap(settings, RunStore(catalog), submitter)) == []
    assert submitter.asked == [[]]


def test_a_flow_that_ended_badly_does_not_undo_a_success(
    settings: Settings, catalog: Catalog, acme: str
) -> None:
    done = set_up(catalog, settings, acme, CASES[-1])
    submitter = ScriptedSubmitter(dict(BAD))
    assert asyncio.run(reap(settings, RunStore(catalog), submitter)) == []
    assert RunStore(catalog).get(done.run_id) == done


def test_flow_runs_left_open_after_their_run_ended_are_closed_as_the_run_ended(
    settings: Settings, catalog: Catalog, acme: str
) -> None:
    """The Prefect server was down when the flow tried to report, then its process was stopped:
    the flow run is closed COMPLETED (run succeeded) or CRASHED (run failed), once the run has
    been over for a heartbeat timeout; open flow runs of active or just-ended runs are left."""
    runs = RunStore(catalog)
    old = settings.heartbeat_timeout_s + 60
    published = set_up(catalog, settings, acme, Case("published", "succeeded", "fr-published"))
    failed = set_up(catalog, settings, acme, Case("failed", "running", "fr-failed"))
    assert runs.fail(failed.run_id, RunFailure("processing_stopped", "the worker was killed"))
    fresh = set_up(catalog, settings, acme, Case("fresh", "succeeded", "fr-fresh"))
    active = set_up(catalog, settings, acme, Case("active", "running", "fr-active"))
    with catalog.write() as conn:
        conn.execute(
            text("UPDATE runs SET finished_at = :at WHERE run_id IN (:a, :b)"),
            {"at": ago(old), "a": published.run_id, "b": failed.run_id},
        )
    submitter = ScriptedSubmitter(open=["fr-published", "fr-failed", "fr-fresh", "fr-active"])

    closed = asyncio.run(close_flow_runs(settings, runs, submitter))

    assert sorted(closed) == ["fr-failed", "fr-published"]
    assert submitter.completed == [("fr-published", f"run {published.run_id} was published")]
    assert submitter.crashed == [("fr-failed", "the worker was killed")]
    assert (fresh.state, active.state) == ("succeeded", "running")  # untouched, still open


def test_exports_that_stopped_beating_or_whose_flow_run_died_are_failed(
    settings: Settings, catalog: Catalog, acme: str
) -> None:
    """An export's flow beats while it works: one silent past the heartbeat timeout is failed
    even when Prefect still says its flow run is running (both were killed); one beating, or
    queued and waiting for a worker, is left alone."""
    video = VideoStore(catalog).create(
        NewVideo(acme, "v", "url", "https://media.example.com/a.mp4")
    )
    runs = RunStore(catalog)
    run = runs.create(acme, video.video_id, {})
    assert runs.start(run.run_id) and runs.succeed(run.run_id, "/published")
    exports = ExportStore(catalog)
    made = {name: exports.create(acme, video.video_id, run.run_id, None, {}) for name in NAMES}
    for name, export in made.items():
        exports.set_flow_run(export.export_id, f"fr-{name}")
        if name != "queued":
            assert exports.start(export.export_id)
    beats = {"silent": 3 * settings.heartbeat_timeout_s, "beating": 1.0, "crashed": 1.0}
    with catalog.write() as conn:
        for name, seconds in beats.items():
            conn.execute(
                text("UPDATE exports SET heartbeat_at = :beat WHERE export_id = :id"),
                {"beat": ago(seconds), "id": made[name].export_id},
            )
    submitter = ScriptedSubmitter({"fr-crashed": CRASHED})

    failed = asyncio.run(reap_exports(exports, submitter, settings.heartbeat_timeout_s))

    assert sorted(failed) == sorted([made["silent"].export_id, made["crashed"].export_id])
    silent = exports.get(made["silent"].export_id)
    assert (silent.state, silent.error_code) == ("failed", "processing_stopped")
    assert silent.error_message is not None and "no sign of life" in silent.error_message
    assert exports.get(made["crashed"].export_id).state == "failed"
    assert exports.get(made["beating"].export_id).state == "running"
    assert exports.get(made["queued"].export_id).state == "queued"
    exports.beat(made["beating"].export_id)  # a beat renews it; a second pass finds nothing
    assert asyncio.run(reap_exports(exports, submitter, settings.heartbeat_timeout_s)) == []


NAMES = ("silent", "beating", "crashed", "queued")
