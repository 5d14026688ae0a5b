"""Live sessions in the catalog: windows chained in one transaction, billed once, stoppable."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from storage.catalog.database import Catalog
from storage.catalog.runs.live import STOPPED_CODE, LiveRunStore
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.usage import ALL, month_of, used
from storage.catalog.videos import NewVideo, VideoStore
from storage.catalog.webhooks.store import WebhookStore
from stress.kills.checks import expected_usage
from ves.clock import now_rfc3339
from ves.errors import Conflict, NotFound
from ves.settings import Settings


@pytest.fixture
def live(catalog: Catalog) -> LiveRunStore:
    return LiveRunStore(catalog)


@pytest.fixture
def acme(tenants: TenantStore) -> str:
    return tenants.create_tenant("acme").tenant_id


def _video(catalog: Catalog, tenant: str, kind: str = "hls") -> str:
    url = "https://cams.example.com/live.m3u8" if kind == "hls" else "https://e.com/a.mp4"
    return VideoStore(catalog).create(NewVideo(tenant, "cam", kind, url)).video_id


def _usage(catalog: Catalog, tenant: str, metric: str, period: str | None = None) -> float:
    with catalog.read() as conn:
        return used(conn, tenant, period or month_of(now_rfc3339()), metric)


def test_a_window_succeeds_and_the_next_starts_in_one_step(
    catalog: Catalog, live: LiveRunStore, acme: str
) -> None:
    runs, video = RunStore(catalog), _video(catalog, acme)
    first = runs.create(acme, video, {"follow": True})
    assert runs.start(first.run_id)
    second = live.follow_on(first.run_id, "key/1", 4.0, 100)
    assert second is not None
    assert runs.get(first.run_id).state == "succeeded"
    following = runs.get(second)
    assert (following.state, following.follows_run_id) == ("running", first.run_id)
    assert following.params == {"follow": True}
    assert VideoStore(catalog).get(acme, video).state == "running"
    third = live.follow_on(second, "key/2", 6.0, 250)
    assert third is not None and live.chain(third) == [first.run_id, second, third]
    assert runs.succeed(third, "key/3", 2.0, 300)
    # Each window's seconds once; one execution for the session.
    assert _usage(catalog, acme, "processed_s") == pytest.approx(12.0)
    assert _usage(catalog, acme, "executions") == 1.0
    assert _usage(catalog, acme, "storage_bytes", ALL) == 650.0
    with catalog.read() as conn:
        rows = [dict(r) for r in conn.execute(text("SELECT * FROM runs")).mappings()]
    want = expected_usage(catalog, Settings(), rows)
    assert want[(acme, month_of(now_rfc3339()), "executions")] == 1


def test_a_window_the_reaper_failed_does_not_follow_on(
    catalog: Catalog, live: LiveRunStore, acme: str
) -> None:
    runs = RunStore(catalog)
    run = runs.create(acme, _video(catalog, acme), {})
    assert live.follow_on(run.run_id, "key", 1.0, 1) is None  # still queued
    assert runs.get(run.run_id).state == "queued"


def test_a_stop_reaches_the_sessions_current_window(
    catalog: Catalog, live: LiveRunStore, acme: str
) -> None:
    runs, video = RunStore(catalog), _video(catalog, acme)
    first = runs.create(acme, video, {"follow": True})
    assert runs.start(first.run_id)
    second = live.follow_on(first.run_id, "key/1", 4.0, 100)
    assert second is not None and not live.stop_requested(second)
    stopped = live.request_stop(acme, video, first.run_id)  # the first window's run names it
    assert stopped.run_id == second and stopped.stop_requested_at is not None
    assert live.stop_requested(second)
    assert runs.succeed(second, "key/2", 4.0, 100)
    with pytest.raises(Conflict):
        live.request_stop(acme, video, first.run_id)


def test_a_queued_run_stops_at_once(catalog: Catalog, live: LiveRunStore, acme: str) -> None:
    runs, video = RunStore(catalog), _video(catalog, acme)
    run = runs.create(acme, video, {"follow": True})
    stopped = live.request_stop(acme, video, run.run_id)
    assert (stopped.state, stopped.error_code) == ("failed", STOPPED_CODE)
    assert VideoStore(catalog).get(acme, video).state == "failed"
    assert _usage(catalog, acme, "processed_s") == 0.0


def test_unknown_foreign_and_not_live_runs_are_refused(
    catalog: Catalog, live: LiveRunStore, acme: str, tenants: TenantStore
) -> None:
    runs, video = RunStore(catalog), _video(catalog, acme)
    run = runs.create(acme, video, {})
    other = tenants.create_tenant("other").tenant_id
    with pytest.raises(NotFound):
        live.request_stop(other, video, run.run_id)
    with pytest.raises(NotFound):
        live.request_stop(acme, video, "run_nosuchrun")
    recording = _video(catalog, acme, "url")
    plain = runs.create(acme, recording, {})
    assert runs.start(plain.run_id)
    with pytest.raises(Conflict):
        live.request_stop(acme, recording, plain.run_id)


def test_the_reaper_leaves_the_flow_run_of_a_session_that_goes_on(
    catalog: Catalog, live: LiveRunStore, acme: str
) -> None:
    runs, video = RunStore(catalog), _video(catalog, acme)
    first = runs.create(acme, video, {"follow": True})
    runs.set_flow_run(first.run_id, "flow-1")
    assert runs.start(first.run_id)
    second = live.follow_on(first.run_id, "key/1", 4.0, 100)
    assert second is not None and runs.get(second).flow_run_id == "flow-1"
    later = "9999-12-31T00:00:00Z"
    assert runs.ended_with_flow_runs(["flow-1"], finished_before=later) == []
    assert runs.succeed(second, "key/2", 4.0, 100)
    ended = runs.ended_with_flow_runs(["flow-1"], finished_before=later)
    assert [r.run_id for r in ended] == [second]  # the session's last window speaks for it


def test_each_window_and_a_stopped_queued_run_are_told_to_webhooks(
    catalog: Catalog, live: LiveRunStore, acme: str
) -> None:
    hooks = WebhookStore(catalog)
    endpoint = hooks.create_endpoint(
        acme, "https://a.example.com/h", ["run.succeeded", "run.failed"], None, 10
    )
    runs, video = RunStore(catalog), _video(catalog, acme)
    first = runs.create(acme, video, {"follow": True})
    assert runs.start(first.run_id)
    second = live.follow_on(first.run_id, "key/1", 4.0, 100)
    assert second is not None and runs.succeed(second, "key/2", 4.0, 100)
    queued = runs.create(acme, video, {"follow": True})
    live.request_stop(acme, video, queued.run_id)
    told = [
        (d.event_type, d.payload["data"]["run_id"])
        for d in hooks.deliveries(acme, endpoint.webhook_id, 100)
    ]
    assert sorted(told) == sorted(
        [
            ("run.succeeded", first.run_id),
            ("run.succeeded", second),
            ("run.failed", queued.run_id),
        ]
    )
