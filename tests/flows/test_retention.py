"""The retention sweep after the real process-video flow: the lobby's artifacts (its review copy
among them) are kept until the expiry its ``cost.json`` states and deleted once
``finished_at + retention_days`` has passed;
the ``retention-sweep`` flow and its hourly deployment in ``prefect.yaml``."""

from __future__ import annotations

import inspect
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from prefect.client.schemas.schedules import CronSchedule
from prefect.flows import load_flow_from_entrypoint

from cli.supervisor import PROJECT_DIR
from flows.orchestrator import WORK_POOL
from flows.process_video import ProcessVideoParams, process_video
from flows.retention import RetentionSweepParams, retention_sweep
from storage.artifacts.blobs import open_blob_store
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.usage import ALL, UsageStore, month_of
from storage.catalog.videos import VideoStore
from synthetic import GroundTruth
from tasks.retention import sweep_retention
from tests.fixtures.published import new_video, published_run
from tests.fixtures.settings_env import export_settings
from tests.flows.conftest import QueueRun
from ves.settings import Settings


@pytest.mark.slow
def test_the_lobby_is_kept_until_its_stated_expiry_then_deleted_with_its_records_kept(
    queue_upload_run: QueueRun,
    lobby: tuple[Path, GroundTruth],
    settings: Settings,
    catalog: Catalog,
) -> None:
    queued = queue_upload_run(lobby[0])
    published = process_video(ProcessVideoParams(run_id=queued.run_id))
    store = open_blob_store(settings)
    runs, videos, usage = RunStore(catalog), VideoStore(catalog), UsageStore(catalog)
    run = runs.get(queued.run_id)
    retention = json.loads(store.get_bytes(f"{published}/cost.json"))["retention"]
    stated = datetime.fromisoformat(retention["expires_at"])
    due = datetime.fromisoformat(run.finished_at or "") + timedelta(days=retention["days"])
    assert retention["days"] == settings.plan("sandbox").retention_days == 7
    assert stated <= due  # never deleted before the expiry cost.json states
    assert run.artifacts_bytes and usage.value(run.tenant_id, ALL, "storage_bytes") > 0

    early = sweep_retention(settings, catalog, stated - timedelta(seconds=1))

    assert early.swept == () and store.exists(f"{published}/manifest.json")
    assert store.exists(f"{published}/review.mp4")  # the review copy lives with the run
    assert videos.get(run.tenant_id, run.video_id).state == "succeeded"

    late = sweep_retention(settings, catalog, due + timedelta(seconds=1))

    assert [s.run.run_id for s in late.swept] == [run.run_id]
    assert late.swept[0].freed_bytes == run.artifacts_bytes and late.swept[0].video_expired
    assert store.list(published) == []
    assert not store.exists(f"{published}/review.mp4")  # and goes with it
    kept = runs.get(run.run_id)
    assert kept.state == "succeeded" and kept.expired_at is not None
    assert kept.artifacts_path == published
    assert videos.get(run.tenant_id, run.video_id).state == "expired"
    assert runs.latest_succeeded(run.tenant_id, run.video_id) is None
    assert usage.value(run.tenant_id, ALL, "storage_bytes") == 0
    month = month_of(run.finished_at or "")
    assert usage.value(run.tenant_id, month, "executions") == 1
    assert usage.value(run.tenant_id, month, "processed_s") > 0


def test_the_retention_sweep_flow_deletes_what_is_due(
    settings: Settings, catalog: Catalog, tenants: TenantStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    export_settings(monkeypatch, settings)  # the flow reads its settings
    acme = tenants.create_tenant("acme").tenant_id
    store = open_blob_store(settings)
    old = published_run(catalog, store, acme, new_video(catalog, acme), days_ago=8)
    young = published_run(catalog, store, acme, new_video(catalog, acme), days_ago=1)

    preview = retention_sweep(RetentionSweepParams(dry_run=True))
    assert preview["expired_runs"] == [old.run_id] and store.list(old.artifacts_path or "")

    result = retention_sweep()

    assert result["expired_runs"] == [old.run_id] and result["freed_bytes"] == 1000
    assert result["expired_videos"] == [old.video_id]
    assert store.list(old.artifacts_path or "") == []
    assert store.list(young.artifacts_path or "")


def _deployment(name: str) -> dict[str, Any]:
    project = yaml.safe_load((PROJECT_DIR / "prefect.yaml").read_text())
    (found,) = [d for d in project["deployments"] if d["name"] == name]
    return dict(found)


def test_prefect_yaml_deploys_the_sweep_hourly_on_the_process_pool() -> None:
    deployment = _deployment("retention-sweep")
    assert deployment["entrypoint"] == "flows/retention.py:retention_sweep"
    assert deployment["work_pool"]["name"] == WORK_POOL
    (schedule,) = deployment["schedules"]
    assert schedule.get("active", True)
    cron = CronSchedule(cron=schedule["cron"], timezone=schedule.get("timezone"))
    assert cron.cron == "0 * * * *" and cron.timezone == "UTC"


@pytest.mark.parametrize("name", ["process-video", "retention-sweep"])
def test_every_deployment_entrypoint_loads_its_flow(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    entrypoint = _deployment(name)["entrypoint"]
    monkeypatch.chdir(PROJECT_DIR)  # entrypoints are relative to the project, as for `deploy`
    loaded = load_flow_from_entrypoint(entrypoint)
    assert loaded.name == name
    assert Path(inspect.getsourcefile(loaded.fn) or "") == PROJECT_DIR / entrypoint.split(":")[0]
    if name == "retention-sweep":  # scheduled runs pass no parameters
        assert loaded.parameters.required == []
