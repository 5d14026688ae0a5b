"""Liveness and readiness probes (no key needed)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from api.deps import CatalogDep, SettingsDep

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness", description="200 while the API process runs.")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="Readiness",
    description="200 when the catalog answers and the data folder is writable, else 503.",
    responses={503: {"description": "A dependency is not ready; `checks` says which."}},
)
def readyz(catalog: CatalogDep, settings: SettingsDep) -> JSONResponse:
    checks = {"catalog": _check_catalog(catalog.ping), "data_dir": _check_writable(settings)}
    ready = all(v == "ok" for v in checks.values())
    body = {"status": "ready" if ready else "not_ready", "checks": checks}
    return JSONResponse(body, status_code=200 if ready else 503)


def _check_catalog(ping: Callable[[], None]) -> str:
    try:
        ping()
    except sqlite3.Error as exc:
        return f"error: {exc}"
    return "ok"


def _check_writable(settings: SettingsDep) -> str:
    return "ok" if os.access(settings.data_dir, os.W_OK) else "error: not writable"
