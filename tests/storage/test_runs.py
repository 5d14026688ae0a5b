"""Runs: the state machine (run AND video state), tenant scoping, the silent-run sweep."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import text

from storage.catalog.database import Catalog
from storage.catalog.records import Run
from storage.catalog.runs.store import WAITING_STAGE, RunFailure, RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from ves.clock import to_rfc3339, utc_now
from ves.errors import Conflict, NotFound

BROKEN = RunFailure("source_invalid", "the source is not a video")

MakeVideo = Callable[..., str]


@pytest.fixture
def runs(catalog: Catalog) -> RunStore:
    return RunStore(catalog)


@pytest.fixture
def videos(catalog: Catalog) -> VideoStore:
    return VideoStore(catalog)


@pytest.fixture
def acme(tenants: TenantStore) -> str:
    return tenants.create_tenant("acme").tenant_id


@pytest.fixture
def make_video(videos: VideoStore, acme: str) -> MakeVideo:
    """``make_video()``: a registered URL video of acme; ``make_video("upload")``: one awaiting
    its upload."""

    def make(kind: str = "url", tenant_id: str | None = None) -> str:
        tenant = tenant_id or acme
        if kind == "upload":
            new = NewVideo(tenant, "up", "upload", None, {"filename": "a.mp4"})
        else:
            new = NewVideo(tenant, "clip", "url", "https://media.example.com/a.mp4")
        return videos.create(new).video_id

    return make


def video_state(videos: VideoStore, tenant_id: str, video_id: str) -> str:
    return videos.get(tenant_id, video_id).state


def set_column(catalog: Catalog, run_id: str, column: str, seconds_ago: float) -> None:
    """Move a run's timestamp column into the past."""
    assert column in {"heartbeat_at", "created_at"}
    moment = to_rfc3339(utc_now() - timedelta(seconds=seconds_ago))
    with catalog.write() as conn:
        conn.execute(
            text(f"UPDATE runs SET {column} = :moment WHERE run_id = :run_id"),
            {"moment": moment, "run_id": run_id},
        )


def finished(runs: RunStore, acme: str, video_id: str, state: str) -> Run:
    """A run of the video taken to ``succeeded`` or ``failed`` (via ``running``)."""
    time.sleep(0.002)  # run ids order by creation millisecond
    run = runs.create(acme, video_id, {})
    assert runs.start(run.run_id)
    done = runs.succeed(run.run_id, f"/a/{run.run_id}") if state == "succeeded" else None
    if state == "failed":
        done = runs.fail(run.run_id, BROKEN)
    assert done
    return runs.get(run.run_id)


def test_the_happy_path_moves_run_and_video_together(
    runs: RunStore, videos: VideoStore, acme: str, make_video: MakeVideo
) -> None:
    video_id = make_video()
    assert video_state(videos, acme, video_id) == "registered"

    run = runs.create(acme, video_id, {"sample_fps": 2})
    assert (run.state, run.progress, run.params, run.stage) == (
        "queued",
        0.0,
        {"sample_fps": 2},
        None,
    )
    assert run.heartbeat_at == run.created_at and run.started_at is None
    assert video_state(videos, acme, video_id) == "queued"

    assert runs.start(run.run_id) is True
    started = runs.get(run.run_id)
    assert (started.state, started.started_at is not None) == ("running", True)
    assert video_state(videos, acme, video_id) == "running"

    runs.progress(run.run_id, "sample", 0.4)
    assert (runs.get(run.run_id).stage, runs.get(run.run_id).progress) == ("sample", 0.4)
    runs.progress(run.run_id, "detect", 7.0)  # clamped
    assert runs.get(run.run_id).progress == 1.0

    assert runs.succeed(run.run_id, "/data/artifacts/run") is True
    done = runs.get(run.run_id)
    assert (done.state, done.progress, done.artifacts_path) == (
        "succeeded",
        1.0,
        "/data/artifacts/run",
    )
    assert (done.error_code, done.error_message, done.finished_at is not None) == (None, None, True)
    assert video_state(videos, acme, video_id) == "succeeded"
    assert videos.get(acme, video_id).latest_run == done


def test_a_failure_records_its_reason_on_run_and_video(
    runs: RunStore, videos: VideoStore, acme: str, make_video: MakeVideo
) -> None:
    video_id = make_video()
    run = runs.create(acme, video_id, {})
    assert runs.fail(run.run_id, BROKEN) is True  # a queued run may fail (never started)
    failed = runs.get(run.run_id)
    assert (failed.state, failed.error_code, failed.error_message) == (
        "failed",
        "source_invalid",
        "the source is not a video",
    )
    assert failed.artifacts_path is None
    assert video_state(videos, acme, video_id) == "failed"
    again = runs.create(acme, video_id, {})  # a failed video may run again
    assert again.state == "queued" and video_state(videos, acme, video_id) == "queued"


@pytest.mark.parametrize("state", ["queued", "running", "awaiting_upload"])
def test_create_conflicts_while_the_video_is_busy_or_has_no_bytes(
    runs: RunStore, videos: VideoStore, acme: str, make_video: MakeVideo, state: str
) -> None:
    video_id = make_video("upload" if state == "awaiting_upload" else "url")
    if state != "awaiting_upload":
        run = runs.create(acme, video_id, {})
        if state == "running":
            runs.start(run.run_id)
    assert video_state(videos, acme, video_id) == state
    before = runs.active()
    with pytest.raises(Conflict, match=state.replace("_", " ").split()[0]):
        runs.create(acme, video_id, {})
    assert runs.active() == before
    assert video_state(videos, acme, video_id) == state


@pytest.mark.parametrize("state", ["succeeded", "failed"])
def test_a_finished_video_may_run_again(
    runs: RunStore, acme: str, make_video: MakeVideo, state: str
) -> None:
    video_id = make_video()
    finished(runs, acme, video_id, state)
    assert runs.create(acme, video_id, {}).state == "queued"


def test_other_tenants_and_unknown_ids_are_not_found(
    runs: RunStore, tenants: TenantStore, acme: str, make_video: MakeVideo
) -> None:
    other = tenants.create_tenant("other").tenant_id
    video_id = make_video()
    with pytest.raises(NotFound):
        runs.create(other, video_id, {})
    with pytest.raises(NotFound):
        runs.create(acme, "vid_unknown", {})
    with pytest.raises(NotFound):
        runs.get("run_unknown")
    assert runs.active() == []
    assert runs.latest_succeeded(other, video_id) is None


@pytest.mark.parametrize(
    ("path", "call", "expected_state"),
    [
        (["succeed"], "fail", "succeeded"),  # fail after succeed is refused
        (["succeed"], "succeed", "succeeded"),  # finished only once
        (["succeed"], "start", "succeeded"),
        (["fail"], "start", "failed"),  # a reaped run cannot be revived by a late flow
        (["fail"], "succeed", "failed"),
        (["fail"], "fail", "failed"),
        ([], "succeed", "queued"),  # success needs running
        (["start"], "start", "running"),
    ],
)
def test_refused_transitions_return_false_and_change_nothing(
    runs: RunStore,
    videos: VideoStore,
    acme: str,
    make_video: MakeVideo,
    path: list[str],
    call: str,
    expected_state: str,
) -> None:
    video_id = make_video()
    run_id = runs.create(acme, video_id, {}).run_id
    actions = {
        "start": lambda: runs.start(run_id),
        "succeed": lambda: runs.succeed(run_id, "/elsewhere"),
        "fail": lambda: runs.fail(run_id, RunFailure("late", "too late")),
    }
    if path and path[0] != "start":
        assert runs.start(run_id)
    for step in path:
        assert actions[step]()
    before = runs.get(run_id)
    video_before = video_state(videos, acme, video_id)
    assert actions[call]() is False
    assert runs.get(run_id) == before
    assert before.state == expected_state
    assert video_state(videos, acme, video_id) == video_before


def test_progress_and_beats_only_touch_running_runs(
    runs: RunStore, acme: str, make_video: MakeVideo
) -> None:
    run_id = runs.create(acme, make_video(), {}).run_id
    runs.progress(run_id, "decode", 0.5)
    runs.beat(run_id)
    queued = runs.get(run_id)
    assert (queued.stage, queued.progress) == (None, 0.0)
    runs.start(run_id)
    runs.fail(run_id, BROKEN)
    failed = runs.get(run_id)
    runs.progress(run_id, "sample", 0.9)
    runs.beat(run_id)
    assert runs.get(run_id) == failed


def test_fail_silent_fails_only_running_runs_that_stopped_beating(
    runs: RunStore, videos: VideoStore, catalog: Catalog, acme: str, make_video: MakeVideo
) -> None:
    ids: dict[str, str] = {}
    for name, state, heartbeat_s_ago in [
        ("silent", "running", 120),
        ("barely_alive", "running", 80),
        ("fresh", "running", 0),
        ("old_but_queued", "queued", 600),
    ]:
        run = runs.create(acme, make_video(), {})
        if state == "running":
            runs.start(run.run_id)
        set_column(catalog, run.run_id, "heartbeat_at", heartbeat_s_ago)
        ids[name] = run.run_id
    done = finished(runs, acme, make_video(), "succeeded")
    set_column(catalog, done.run_id, "heartbeat_at", 600)

    assert runs.fail_silent(90.0) == [ids["silent"]]
    silent = runs.get(ids["silent"])
    assert (silent.state, silent.error_code) == ("failed", "processing_stopped")
    assert silent.error_message is not None and "90 s" in silent.error_message
    assert video_state(videos, acme, silent.video_id) == "failed"
    states = {name: runs.get(run_id).state for name, run_id in ids.items()}
    assert states == {
        "silent": "failed",
        "barely_alive": "running",
        "fresh": "running",
        "old_but_queued": "queued",
    }
    assert runs.get(done.run_id).state == "succeeded"
    assert runs.fail_silent(90.0) == []  # already failed: not again


def test_a_run_waits_for_a_slot_and_starts_when_one_frees(
    runs: RunStore, acme: str, make_video: MakeVideo
) -> None:
    first, second, third = (runs.create(acme, make_video(), {}).run_id for _ in range(3))
    assert runs.try_start(first, at_most=2) == "started"
    assert runs.try_start(second, at_most=2) == "started"
    assert runs.try_start(third, at_most=2) == "busy"
    waiting = runs.get(third)
    assert (waiting.state, waiting.stage, waiting.started_at) == ("queued", WAITING_STAGE, None)
    assert runs.succeed(first, "/a/first")
    assert runs.try_start(third, at_most=2) == "started"
    started = runs.get(third)
    assert (started.state, started.stage) == ("running", None)
    assert runs.try_start(third, at_most=2) == "gone"  # started once only
    fourth = runs.create(acme, make_video(), {}).run_id
    assert runs.fail(fourth, BROKEN)
    assert runs.try_start(fourth, at_most=2) == "gone"  # failed while it waited
    assert runs.try_start("run_unknown", at_most=2) == "gone"


def test_fail_silent_fails_a_waiting_run_whose_flow_stopped_beating(
    runs: RunStore, catalog: Catalog, acme: str, make_video: MakeVideo
) -> None:
    """A flow killed while it waited for a slot leaves a queued run nobody will start."""
    holder = runs.create(acme, make_video(), {}).run_id
    assert runs.try_start(holder, at_most=1) == "started"
    waiting = runs.create(acme, make_video(), {}).run_id
    assert runs.try_start(waiting, at_most=1) == "busy"
    in_line = runs.create(acme, make_video(), {}).run_id  # no flow has it yet
    for run_id in (holder, waiting, in_line):
        set_column(catalog, run_id, "heartbeat_at", 600)
    assert sorted(runs.fail_silent(90.0)) == sorted([holder, waiting])
    assert runs.get(waiting).error_code == "processing_stopped"
    assert runs.get(in_line).state == "queued"


def test_active_lists_queued_and_running_oldest_first(
    runs: RunStore, acme: str, make_video: MakeVideo
) -> None:
    queued = runs.create(acme, make_video(), {}).run_id
    time.sleep(0.002)
    running = runs.create(acme, make_video(), {}).run_id
    runs.start(running)
    finished(runs, acme, make_video(), "failed")
    assert [r.run_id for r in runs.active()] == [queued, running]


def test_latest_succeeded_skips_newer_failures(
    runs: RunStore, acme: str, make_video: MakeVideo
) -> None:
    video_id = make_video()
    other_video = make_video()
    assert runs.latest_succeeded(acme, video_id) is None
    finished(runs, acme, video_id, "succeeded")
    newest_success = finished(runs, acme, video_id, "succeeded")
    finished(runs, acme, video_id, "failed")
    finished(runs, acme, other_video, "succeeded")
    time.sleep(0.002)
    runs.create(acme, video_id, {})  # queued, newest of all
    assert runs.latest_succeeded(acme, video_id) == newest_success
