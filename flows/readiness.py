"""Is the service able to work? Each part it needs, checked with its state and latency.

``GET /readyz`` and ``ves status`` answer from the same checks:

- ``catalog``: the catalog answers a query;
- ``artifact_storage``: a file can be written and removed in the artifact tree;
- ``prefect_api``: the Prefect server answers;
- ``worker``: a worker of the ``ves-process`` pool polled it within ``WORKER_STALE_S``;
- ``person_detector``: the person network of the default detector mode is there and whole
  (its recorded sha256; ``tasks.detect.detectors.person_model``). When it is down, runs still
  succeed: they fall back to motion only and say so in ``cost.json``'s ``fallback``;
- ``scheduler``: the ``retention-sweep`` deployment has scheduled runs waiting. Prefect's
  scheduler keeps runs of a schedule queued ahead (hours of an hourly cron); when its loop
  fails (as with SQLAlchemy 2.1 under Prefect 3.8.8) none are ever created. Prefect's own
  ``/api/health`` and ``/api/ready`` say nothing of its services, so this is what tells.

Prefect is asked over its REST API with short timeouts, so a probe never hangs on a dead server.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

import httpx

from flows.orchestrator import WORK_POOL
from storage.catalog.database import Catalog
from ves.clock import utc_now
from ves.detector_mode import DetectorMode
from ves.settings import Settings

RETENTION_DEPLOYMENT = "retention-sweep/retention-sweep"
WORKER_STALE_S = 90.0
_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Check:
    """One part's state: ``ok`` or ``down``, how long the check took, and what it saw."""

    state: str
    latency_ms: float
    detail: str

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    def as_dict(self) -> dict[str, object]:
        return {"state": self.state, "latency_ms": self.latency_ms, "detail": self.detail}


@dataclass(frozen=True)
class Readiness:
    checks: Mapping[str, Check]

    @property
    def ready(self) -> bool:
        return all(c.ok for c in self.checks.values())

    @property
    def failing(self) -> list[str]:
        return [name for name, c in self.checks.items() if not c.ok]

    def as_dict(self) -> dict[str, object]:
        return {
            "status": "ready" if self.ready else "not_ready",
            "failing": self.failing,
            "checks": {name: c.as_dict() for name, c in self.checks.items()},
        }


Probe = Callable[[], str]  # returns what it saw; raises when the part is down


def timed(probe: Probe) -> Check:
    """Run one probe; any exception means the part is down, with the exception as detail."""
    started = time.perf_counter()
    try:
        detail, state = probe(), "ok"
    except Exception as exc:
        detail, state = f"{type(exc).__name__}: {exc}", "down"
    return Check(state, round((time.perf_counter() - started) * 1000, 2), detail)


def prefect_api_url(settings: Settings) -> str:
    """The Prefect API this service uses: ``PREFECT_API_URL`` when set, else its local server."""
    return os.environ.get("PREFECT_API_URL") or f"http://127.0.0.1:{settings.prefect_port}/api"


def check_readiness(settings: Settings, catalog: Catalog) -> Readiness:
    """Every check, in the order a broken service is best diagnosed."""
    prefect = PrefectProbes(prefect_api_url(settings))
    probes: dict[str, Probe] = {
        "catalog": lambda: _probe_catalog(catalog),
        "artifact_storage": lambda: _probe_storage(settings),
        "prefect_api": prefect.api,
        "worker": prefect.worker,
        "scheduler": prefect.scheduler,
        "person_detector": lambda: probe_person_model(settings),
    }
    return Readiness({name: timed(probe) for name, probe in probes.items()})


def probe_person_model(settings: Settings) -> str:
    """What the default mode's person network is (raises ``DetectorUnavailable`` when it is
    missing or corrupt; a mode without ``person`` needs none)."""
    from tasks.detect.detectors.person_model import DEFAULT_MODEL, check_model

    if not DetectorMode.parse(settings.detector).names_people:
        return f"not used by the default mode {settings.detector}"
    path = settings.person_model or DEFAULT_MODEL
    check_model(path)
    return f"ready: {path.name}"


def _probe_catalog(catalog: Catalog) -> str:
    catalog.ping()
    return "answers"


def _probe_storage(settings: Settings) -> str:
    root = settings.artifacts_dir
    root.mkdir(parents=True, exist_ok=True)
    probe = root / f".ready-{uuid.uuid4().hex}"
    probe.write_bytes(b"ok")
    probe.unlink()
    return f"writable: {root}"


class PrefectProbes:
    """Probes of the Prefect server, its worker pool and its scheduler, over its REST API."""

    def __init__(self, api_url: str) -> None:
        self.api_url = api_url.rstrip("/")

    def _call(self, method: str, path: str, body: object = None) -> object:
        response = httpx.request(
            method, f"{self.api_url}{path}", json=body, timeout=_TIMEOUT_S, follow_redirects=False
        )
        response.raise_for_status()
        return response.json()

    def api(self) -> str:
        self._call("GET", "/health")
        return f"answers at {self.api_url}"

    def worker(self) -> str:
        workers = self._call("POST", f"/work_pools/{WORK_POOL}/workers/filter", {})
        if not isinstance(workers, list):
            raise TypeError(f"unexpected answer: {workers!r}")
        beats = [
            _parse_time(w["last_heartbeat_time"]) for w in workers if w.get("last_heartbeat_time")
        ]
        if not beats:
            raise RuntimeError(f"no worker has polled the {WORK_POOL} pool")
        age = (utc_now() - max(beats)).total_seconds()
        if age > WORKER_STALE_S:
            raise RuntimeError(f"the last worker of {WORK_POOL} polled {age:.0f} s ago")
        return f"{len(beats)} worker(s) of {WORK_POOL}; last poll {age:.0f} s ago"

    def scheduler(self) -> str:
        deployment = self._call("GET", f"/deployments/name/{RETENTION_DEPLOYMENT}")
        if not isinstance(deployment, dict):
            raise TypeError(f"unexpected answer: {deployment!r}")
        body = {
            "deployments": {"id": {"any_": [deployment["id"]]}},
            "flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}},
        }
        count = self._call("POST", "/flow_runs/count", body)
        if not isinstance(count, int) or count < 1:
            raise RuntimeError(f"no scheduled runs of {RETENTION_DEPLOYMENT}: the scheduler fails")
        return f"{count} scheduled runs of {RETENTION_DEPLOYMENT}"


def _parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=utc_now().tzinfo)
