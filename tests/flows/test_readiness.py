"""Readiness probes of the Prefect side against a stub of the Prefect REST API.

The stub answers the three calls the probes make (health, the pool's workers, the count of
scheduled runs of the retention deployment) with what a healthy or a broken Prefect answers; the
real server is checked end to end in tests/test_e2e.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi import Body, FastAPI

from flows.readiness import PrefectProbes, timed
from testkit.live_server import serve_app
from ves.clock import to_rfc3339, utc_now


class StubPrefect:
    def __init__(self) -> None:
        self.worker_ages_s: list[float | None] = [5.0]
        self.scheduled = 3
        self.asked: list[dict[str, Any]] = []
        self.app = FastAPI()
        self.app.get("/api/health")(lambda: True)
        self.app.post("/api/work_pools/ves-process/workers/filter")(self.workers)
        self.app.get("/api/deployments/name/retention-sweep/retention-sweep")(
            lambda: {"id": "dep-1"}
        )
        self.app.post("/api/flow_runs/count")(self.count)

    def workers(self) -> list[dict[str, Any]]:
        now = utc_now()
        return [
            {
                "last_heartbeat_time": None
                if age is None
                else to_rfc3339(now - timedelta(seconds=age))
            }
            for age in self.worker_ages_s
        ]

    def count(self, body: dict[str, Any] = Body(...)) -> int:  # noqa: B008
        self.asked.append(body)
        return self.scheduled


@pytest.fixture
def stub() -> Iterator[tuple[StubPrefect, PrefectProbes]]:
    prefect = StubPrefect()
    with serve_app(prefect.app) as url:
        yield prefect, PrefectProbes(f"{url}/api")


def test_a_healthy_prefect_is_ok_on_every_probe(stub: tuple[StubPrefect, PrefectProbes]) -> None:
    prefect, probes = stub
    checks = [timed(p) for p in (probes.api, probes.worker, probes.scheduler)]
    assert [c.state for c in checks] == ["ok", "ok", "ok"]
    assert checks[1].detail == "1 worker(s) of ves-process; last poll 5 s ago"
    assert checks[2].detail == "3 scheduled runs of retention-sweep/retention-sweep"
    assert prefect.asked == [
        {
            "deployments": {"id": {"any_": ["dep-1"]}},
            "flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}},
        }
    ]


@pytest.mark.parametrize(
    ("ages", "detail"),
    [
        ([], "no worker has polled the ves-process pool"),
        ([None], "no worker has polled the ves-process pool"),
        ([200.0, 500.0], "the last worker of ves-process polled 200 s ago"),
    ],
)
def test_no_recent_worker_is_down(
    stub: tuple[StubPrefect, PrefectProbes], ages: list[float | None], detail: str
) -> None:
    prefect, probes = stub
    prefect.worker_ages_s = ages
    check = timed(probes.worker)
    assert check.state == "down" and check.detail == f"RuntimeError: {detail}"


def test_a_scheduler_that_queues_nothing_is_down(stub: tuple[StubPrefect, PrefectProbes]) -> None:
    prefect, probes = stub
    prefect.scheduled = 0
    check = timed(probes.scheduler)
    assert check.state == "down" and "the scheduler fails" in check.detail
