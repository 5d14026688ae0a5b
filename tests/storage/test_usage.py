"""Usage counters: checked and counted in one transaction, per period, as the plan says."""

from __future__ import annotations

import threading

import pytest

from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunFailure, RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.usage import ALL, UsageStore, consume, month_bounds, month_of
from storage.catalog.videos import NewVideo, VideoStore
from ves.clock import now_rfc3339
from ves.errors import PlanLimitExceeded
from ves.plans import PlanLimits


@pytest.mark.parametrize(
    ("now", "bounds"),
    [
        ("2026-11-21T10:00:00Z", ("2026-11-01", "2026-11-30")),
        ("2028-02-03T00:00:00Z", ("2028-02-01", "2028-02-29")),  # a leap year
        ("2026-12-31T23:59:59Z", ("2026-12-01", "2026-12-31")),
    ],
)
def test_month_bounds(now: str, bounds: tuple[str, str]) -> None:
    assert month_bounds(now) == bounds


def test_consume_counts_within_the_limit_and_refuses_past_it(catalog: Catalog) -> None:
    tenant = TenantStore(catalog).create_tenant("acme")
    check = ("asks_per_day", 2, "2026-11-21")
    for _ in range(2):
        with catalog.write() as conn:
            consume(conn, tenant.tenant_id, ("2026-11", "2026-11-21"), "asks", check)
    with pytest.raises(PlanLimitExceeded) as refused, catalog.write() as conn:
        consume(conn, tenant.tenant_id, ("2026-11", "2026-11-21"), "asks", check)
    assert (refused.value.limit, refused.value.value, refused.value.used) == ("asks_per_day", 2, 2)
    usage = UsageStore(catalog)
    assert usage.value(tenant.tenant_id, "2026-11-21", "asks") == 2
    assert usage.value(tenant.tenant_id, "2026-11", "asks") == 2  # the refused one not counted


def test_parallel_registrations_at_the_limit_pass_exactly_as_often_as_allowed(
    catalog: Catalog,
) -> None:
    tenant = TenantStore(catalog).create_tenant("acme")
    limits = PlanLimits(videos=5)
    outcomes: list[str] = []

    def register() -> None:
        try:
            VideoStore(Catalog.connect(catalog.url)).create(
                NewVideo(tenant.tenant_id, "v", "url", "https://example.com/v.mp4"), limits
            )
            outcomes.append("ok")
        except PlanLimitExceeded:
            outcomes.append("402")

    threads = [threading.Thread(target=register) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["402"] * 7 + ["ok"] * 5
    assert UsageStore(catalog).value(tenant.tenant_id, ALL, "videos") == 5


def test_parallel_executes_at_the_monthly_limit_pass_exactly_as_often_as_allowed(
    catalog: Catalog,
) -> None:
    tenant = TenantStore(catalog).create_tenant("acme")
    videos = [
        VideoStore(catalog).create(NewVideo(tenant.tenant_id, "v", "url", "https://e.com/v.mp4"))
        for _ in range(12)
    ]
    limits = PlanLimits(executions_per_month=5, concurrent_runs=12)
    outcomes: list[str] = []
    start = threading.Barrier(len(videos))

    def execute(video_id: str) -> None:
        start.wait()
        try:
            RunStore(catalog).create(tenant.tenant_id, video_id, {}, limits)
            outcomes.append("ok")
        except PlanLimitExceeded:
            outcomes.append("402")

    threads = [threading.Thread(target=execute, args=(v.video_id,)) for v in videos]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["402"] * 7 + ["ok"] * 5
    month = month_of(now_rfc3339())
    assert UsageStore(catalog).value(tenant.tenant_id, month, "executions") == 5


@pytest.mark.parametrize(("bill", "counted"), [(False, 0.0), (True, 12.5)])
def test_a_failed_runs_seconds_count_as_the_plan_says(
    catalog: Catalog, bill: bool, counted: float
) -> None:
    tenant = TenantStore(catalog).create_tenant("acme")
    video = VideoStore(catalog).create(
        NewVideo(tenant.tenant_id, "v", "url", "https://example.com/v.mp4")
    )
    runs = RunStore(catalog)
    run = runs.create(tenant.tenant_id, video.video_id, {}, PlanLimits())
    assert runs.start(run.run_id)
    runs.processed(run.run_id, 12.5)
    assert runs.fail(run.run_id, RunFailure("source_truncated", "cut short"), bill_processed=bill)
    month = month_of(now_rfc3339())
    assert UsageStore(catalog).value(tenant.tenant_id, month, "processed_s") == counted
    assert UsageStore(catalog).value(tenant.tenant_id, month, "executions") == 1


def test_a_succeeded_run_counts_its_seconds_and_bytes_once(catalog: Catalog) -> None:
    tenant = TenantStore(catalog).create_tenant("acme")
    video = VideoStore(catalog).create(
        NewVideo(tenant.tenant_id, "v", "url", "https://example.com/v.mp4")
    )
    runs = RunStore(catalog)
    run = runs.create(tenant.tenant_id, video.video_id, {})
    assert runs.start(run.run_id)
    assert runs.succeed(run.run_id, "/x", processed_s=20.0, artifacts_bytes=1000)
    assert not runs.succeed(run.run_id, "/x", processed_s=20.0, artifacts_bytes=1000)
    usage = UsageStore(catalog).of(tenant.tenant_id, now_rfc3339())
    assert (usage.processed_s, usage.storage_bytes, usage.executions) == (20.0, 1000, 1)
    assert runs.get(run.run_id).artifacts_bytes == 1000
    assert usage.remaining(PlanLimits())["executions"] == 49


def test_parallel_starts_take_exactly_the_plans_concurrent_runs(catalog: Catalog) -> None:
    """Six flows handed six runs of one tenant at the same instant (two workers that polled
    together): exactly ``concurrent_runs`` start, the rest wait, and another tenant is not held."""
    tenants = TenantStore(catalog)
    busy, other = tenants.create_tenant("busy"), tenants.create_tenant("other")
    run_ids = []
    for tenant in [busy] * 6 + [other]:
        video = VideoStore(catalog).create(
            NewVideo(tenant.tenant_id, "v", "url", "https://e.com/v.mp4")
        )
        run_ids.append(RunStore(catalog).create(tenant.tenant_id, video.video_id, {}).run_id)
    outcomes: dict[str, str] = {}
    start = threading.Barrier(len(run_ids))

    def take(run_id: str) -> None:
        start.wait()
        outcomes[run_id] = RunStore(Catalog.connect(catalog.url)).try_start(run_id, at_most=2)

    threads = [threading.Thread(target=take, args=(r,)) for r in run_ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes[r] for r in run_ids[:6]) == ["busy"] * 4 + ["started"] * 2
    assert outcomes[run_ids[6]] == "started"
    states = sorted(RunStore(catalog).get(r).state for r in run_ids[:6])
    assert states == ["queued"] * 4 + ["running"] * 2
