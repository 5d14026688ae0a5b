"""The whole tenant isolation matrix (``stress.isolation.run``) against a live API: 0 leaks."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI

from api.app import create_app
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from stress.isolation.run import as_deployed, cells_of, check_all, http_routes
from stress.isolation.world import RefusingSubmitter, TenantWorld, make_tenants
from testkit.live_server import serve_app
from tests.conftest import Client
from tests.fixtures.published import new_video, published_run
from tests.fixtures.settings_env import export_settings
from ves.ids import new_id
from ves.settings import Settings


@pytest.fixture
def worlds(
    prefect_harness: None,
    settings: Settings,
    catalog: Catalog,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[TenantWorld, TenantWorld]:
    export_settings(monkeypatch, settings)
    return make_tenants(catalog, tmp_path / "media")


@pytest.mark.slow
def test_no_route_or_tool_tells_another_tenants_ids_from_unknown_ones(
    worlds: tuple[TenantWorld, TenantWorld], settings: Settings, catalog: Catalog
) -> None:
    app = create_app(as_deployed(settings), catalog, submitter=RefusingSubmitter())
    with serve_app(app) as url:
        report = check_all(app, url, worlds, timing=0)
    print(report.render())
    assert not report.leaks, report.render()
    assert report.cells >= 60, report.render()


def test_a_route_with_a_parameter_nobody_fills_fails_the_check() -> None:
    app = FastAPI()

    @app.get("/api/product/videos/{video_id}/notes/{note_id}")
    def note(video_id: str, note_id: str) -> None:
        return None

    (route,) = [r for r in http_routes(app) if "{note_id}" in r[1]]
    a = TenantWorld("a", "ten_a", "k", "t", "vid_a", "run_a", "vid_u", "ev_a", "ev_a_0.jpg")
    problem = cells_of(route, a, a)
    assert isinstance(problem, str) and "note_id" in problem


def test_a_thumbnail_of_another_tenants_run_is_answered_as_an_unknown_run(
    client_for: Client, catalog: Catalog, tenants: TenantStore, settings: Settings
) -> None:
    """The defect the matrix found: with B's video, A's run id answered "no thumbnail" and an
    unknown run id "no run <run_id>", so B could tell that A's run ids exist."""
    b = client_for("tenant-b")
    a_tenant, b_tenant = (
        tenants.find_tenant(n) or tenants.create_tenant(n) for n in ("tenant-a", "tenant-b")
    )
    a_run = published_run(
        catalog,
        settings.data_dir,
        a_tenant.tenant_id,
        new_video(catalog, a_tenant.tenant_id),
        days_ago=0,
    )
    b_video = new_video(catalog, b_tenant.tenant_id)
    name = f"{new_id('ev')}_0.jpg"
    answers = [
        b.get(f"/api/product/videos/{b_video}/runs/{run_id}/thumbs/{name}").json()
        for run_id in (a_run.run_id, new_id("run"))
    ]
    assert [a["status"] for a in answers] == [404, 404]
    assert answers[0]["detail"] == answers[1]["detail"] == f"no thumbnail {name}"
