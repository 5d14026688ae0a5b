"""Retention, the catalog side: which runs are due under each plan, and what expiring one keeps
(every record, all usage history) and changes (bytes held, the video's state)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.catalog.database import Catalog
from storage.catalog.retention import RetentionStore
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.usage import ALL, UsageStore
from storage.catalog.videos import VideoStore
from tests.fixtures.published import finish_at, new_video, published_run
from ves.clock import utc_now
from ves.plans import PlanLimits
from ves.settings import Settings


@pytest.fixture
def settings(data_dir: Path) -> Settings:
    """The sandbox plan keeps artifacts 7 days (its default), the ``long`` plan 30."""
    plans = {"sandbox": PlanLimits(), "long": PlanLimits(retention_days=30)}
    return Settings(data_dir=data_dir, plans=plans)


@pytest.fixture
def store(catalog: Catalog) -> RetentionStore:
    return RetentionStore(catalog)


@pytest.fixture
def acme(tenants: TenantStore) -> str:
    return tenants.create_tenant("acme").tenant_id


def due_ids(store: RetentionStore, settings: Settings, now: datetime | None = None) -> list[str]:
    found = store.due(now or utc_now(), lambda plan: settings.plan(plan).retention_days)
    return [run.run_id for run in found]


def usage_rows(catalog: Catalog) -> dict[tuple[str, str, str], float]:
    with catalog.read() as conn:
        rows = (
            conn.execute(text("SELECT tenant_id, period, metric, value FROM usage"))
            .mappings()
            .all()
        )
    return {(r["tenant_id"], r["period"], r["metric"]): r["value"] for r in rows}


def test_runs_past_their_plans_retention_are_due_oldest_first(
    store: RetentionStore, settings: Settings, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    video = new_video(catalog, acme)
    nine = published_run(catalog, data_dir, acme, video, days_ago=9)
    eight = published_run(catalog, data_dir, acme, video, days_ago=8)
    published_run(catalog, data_dir, acme, video, days_ago=6)
    published_run(catalog, data_dir, acme, video, days_ago=8, state="failed")
    assert due_ids(store, settings) == [nine.run_id, eight.run_id]
    (first, _) = store.due(utc_now(), lambda plan: settings.plan(plan).retention_days)
    assert first.artifacts_bytes == 1000
    finished = datetime.fromisoformat(nine.finished_at or "")
    assert datetime.fromisoformat(first.due_at) == finished + timedelta(days=7)


def test_due_means_now_at_or_after_finished_at_plus_the_retention(
    store: RetentionStore, settings: Settings, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    run = published_run(catalog, data_dir, acme, new_video(catalog, acme), days_ago=1)
    now = utc_now().replace(microsecond=123000)
    finish_at(catalog, run.run_id, now - timedelta(days=7))
    assert due_ids(store, settings, now) == [run.run_id]
    assert due_ids(store, settings, now - timedelta(milliseconds=1)) == []


def test_a_tenant_on_a_longer_plan_keeps_its_runs_longer(
    store: RetentionStore,
    settings: Settings,
    catalog: Catalog,
    data_dir: Path,
    tenants: TenantStore,
) -> None:
    patient = tenants.create_tenant("patient", plan="long").tenant_id
    video = new_video(catalog, patient)
    kept = published_run(catalog, data_dir, patient, video, days_ago=8)
    gone = published_run(catalog, data_dir, patient, video, days_ago=31)
    assert due_ids(store, settings) == [gone.run_id]
    assert kept.run_id not in due_ids(store, settings, utc_now() + timedelta(days=21))
    assert due_ids(store, settings, utc_now() + timedelta(days=23)) == [gone.run_id, kept.run_id]


def test_expiring_keeps_every_record_and_gives_back_exactly_the_runs_bytes(
    store: RetentionStore, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    video, other = new_video(catalog, acme), new_video(catalog, acme)
    old = published_run(catalog, data_dir, acme, video, days_ago=8, size=1234)
    published_run(catalog, data_dir, acme, other, days_ago=1, size=5000)
    before = usage_rows(catalog)
    assert before[(acme, ALL, "storage_bytes")] == 6234

    expiry = store.expire(old.run_id, "2030-01-01T00:00:00.000Z")

    assert expiry is not None and expiry.freed_bytes == 1234
    after = usage_rows(catalog)
    assert after.pop((acme, ALL, "storage_bytes")) == 5000
    before.pop((acme, ALL, "storage_bytes"))
    assert after == before  # executions, processed seconds, videos: history untouched
    run = RunStore(catalog).get(old.run_id)
    assert run.state == "succeeded" and run.expired_at == "2030-01-01T00:00:00.000Z"
    assert run.artifacts_path == old.artifacts_path and run.artifacts_bytes == 1234
    assert VideoStore(catalog).get(acme, video).video_id == video
    assert UsageStore(catalog).of(acme, utc_now().isoformat()).storage_bytes == 5000


def test_a_run_is_expired_once(
    store: RetentionStore, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    run = published_run(catalog, data_dir, acme, new_video(catalog, acme), days_ago=8, size=700)
    assert store.expire(run.run_id, "2030-01-01T00:00:00.000Z") is not None
    assert store.expire(run.run_id, "2030-01-02T00:00:00.000Z") is None
    assert usage_rows(catalog)[(acme, ALL, "storage_bytes")] == 0
    assert RunStore(catalog).get(run.run_id).expired_at == "2030-01-01T00:00:00.000Z"
    assert [f.run_id for f in store.expired_folders()] == [run.run_id]


def test_a_video_expires_with_its_newest_succeeded_run_only(
    store: RetentionStore, settings: Settings, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    lone, renewed = new_video(catalog, acme), new_video(catalog, acme)
    lone_run = published_run(catalog, data_dir, acme, lone, days_ago=8)
    old_run = published_run(catalog, data_dir, acme, renewed, days_ago=9)
    new_run = published_run(catalog, data_dir, acme, renewed, days_ago=1)

    for due in store.due(utc_now(), lambda plan: settings.plan(plan).retention_days):
        store.expire(due.run_id, "2030-01-01T00:00:00.000Z")

    runs, videos = RunStore(catalog), VideoStore(catalog)
    assert videos.get(acme, lone).state == "expired"
    assert runs.latest_succeeded(acme, lone) is None
    assert videos.get(acme, renewed).state == "succeeded"
    assert runs.latest_succeeded(acme, renewed) == runs.get(new_run.run_id)
    assert runs.get(old_run.run_id).expired_at is not None
    assert runs.get(lone_run.run_id).expired_at is not None


def test_a_video_whose_newest_run_failed_keeps_that_state(
    store: RetentionStore, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    video = new_video(catalog, acme)
    succeeded = published_run(catalog, data_dir, acme, video, days_ago=8)
    published_run(catalog, data_dir, acme, video, days_ago=1, state="failed")
    expiry = store.expire(succeeded.run_id, "2030-01-01T00:00:00.000Z")
    assert expiry is not None and not expiry.video_expired
    assert VideoStore(catalog).get(acme, video).state == "failed"
    assert RunStore(catalog).latest_succeeded(acme, video) is None
