"""Liveness and readiness probes (no key needed)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from api.deps import CatalogDep, SettingsDep
from api.schemas.health import Liveness, Readiness
from flows.readiness import check_readiness

router = APIRouter(tags=["health"])

_READY_EXAMPLE = {
    "status": "ready",
    "failing": [],
    "checks": {
        "catalog": {"state": "ok", "latency_ms": 0.4, "detail": "answers"},
        "artifact_storage": {
            "state": "ok",
            "latency_ms": 0.3,
            "detail": "writable: data/artifacts",
        },
        "prefect_api": {"state": "ok", "latency_ms": 3.1, "detail": "answers at http://..."},
        "worker": {
            "state": "ok",
            "latency_ms": 6.2,
            "detail": "1 worker(s) of ves-process; last poll 4 s ago",
        },
        "scheduler": {
            "state": "ok",
            "latency_ms": 9.8,
            "detail": "3 scheduled runs of retention-sweep/retention-sweep",
        },
        "person_detector": {
            "state": "ok",
            "latency_ms": 0.1,
            "detail": "ready: pedestrian_ssdlite.onnx",
        },
    },
}


@router.get("/healthz", summary="Liveness", description="200 while the API process runs.")
def healthz() -> Liveness:
    return Liveness(status="ok")


@router.get(
    "/readyz",
    summary="Readiness",
    description=(
        "Whether the service can work, part by part, each with its `state` (`ok` or `down`), "
        "`latency_ms` and what it saw: `catalog` answers, `artifact_storage` is writable, "
        "`prefect_api` answers, a `worker` of the `ves-process` pool polled within 90 s, the "
        "`scheduler` keeps runs of the hourly `retention-sweep` queued (none means Prefect's "
        "scheduler is failing), and the default mode's `person_detector` network is there and "
        "whole (missing or corrupt: runs fall back to motion only and say so). 200 when every "
        "part is ok, else 503 with the failing parts named in `failing`. `ves status` prints "
        "the same."
    ),
    responses={
        200: {"model": Readiness, "content": {"application/json": {"example": _READY_EXAMPLE}}},
        503: {
            "model": Readiness,
            "description": "A part is down; `failing` names it and its `detail` says why.",
        },
    },
)
def readyz(catalog: CatalogDep, settings: SettingsDep) -> JSONResponse:
    readiness = check_readiness(settings, catalog)
    return JSONResponse(readiness.as_dict(), status_code=200 if readiness.ready else 503)
