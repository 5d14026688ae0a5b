"""The whole tenant isolation matrix (``stress.isolation``) against a live API: 0 leaks."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI

from api.app import create_app
from storage.catalog import Catalog
from stress.isolation import cells_of, check_all, http_routes
from stress.isolation_world import RefusingSubmitter, TenantWorld, make_tenants
from tests.fixtures.live_server import serve_app
from tests.fixtures.settings_env import export_settings
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
    app = create_app(settings, catalog, submitter=RefusingSubmitter())
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
