"""What must hold after every kill trial, read from the catalog, the store and Prefect.

- The catalog passes SQLite's ``integrity_check`` and ``foreign_key_check`` (PostgreSQL keeps
  its own), and no run is left ``queued`` or ``running``; every failed run says why.
- Every succeeded run's published files are all there with the sha256 its manifest lists; no
  other run has anything under its key (nothing half-published is left to serve), and no
  work folder of an ended run is left on the worker.
- Usage counters equal the actions the catalog holds: executions = runs created, processed
  seconds = those of succeeded runs (and of failed ones on a plan that bills them), bytes kept =
  those of unexpired succeeded runs, videos = videos registered, asks = asks answered, per
  period; nothing counted twice, nothing lost.
- Prefect agrees: each run's flow run is in a final state.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import defaultdict
from typing import Any

import httpx
from sqlalchemy import text

from storage.artifacts.blobs import open_blob_store
from storage.artifacts.layout import ARTIFACTS_TOP, MANIFEST, run_key
from storage.catalog.database import Catalog
from storage.catalog.usage import ALL, day_of, month_of
from ves.errors import BlobNotFound
from ves.settings import Settings

FINAL_PREFECT = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


def check_all(settings: Settings, prefect_url: str) -> list[str]:
    """Every broken invariant, in words (empty: all hold)."""
    catalog = Catalog.from_settings(settings, migrate=False)
    try:
        runs = _rows(catalog, "SELECT * FROM runs")
        problems = _integrity(settings) + _run_states(runs) + _published(settings, runs)
        problems += _usage(catalog, settings, runs)
    finally:
        catalog.dispose()
    return problems + prefect_disagrees(prefect_url, runs)


def _rows(catalog: Catalog, sql: str) -> list[dict[str, Any]]:
    with catalog.read() as conn:
        return [dict(r) for r in conn.execute(text(sql)).mappings().all()]


def _integrity(settings: Settings) -> list[str]:
    if settings.database_url is not None:
        return []  # PostgreSQL: its own checks, nothing to ask here
    with sqlite3.connect(f"file:{settings.catalog_path}?mode=ro", uri=True) as db:
        verdict = db.execute("PRAGMA integrity_check").fetchall()
        orphans = db.execute("PRAGMA foreign_key_check").fetchall()
    problems = [] if verdict == [("ok",)] else [f"integrity_check: {verdict}"]
    return problems + [f"foreign key broken: {row}" for row in orphans]


def _run_states(runs: list[dict[str, Any]]) -> list[str]:
    problems = []
    for run in runs:
        if run["state"] in ("queued", "running"):
            problems.append(f"run {run['run_id']} is still {run['state']} ({run['stage']})")
        if run["state"] == "failed" and not (run["error_code"] and run["error_message"]):
            problems.append(f"run {run['run_id']} failed without a reason")
    return problems


def _published(settings: Settings, runs: list[dict[str, Any]]) -> list[str]:
    store = open_blob_store(settings)
    problems = []
    keys_of = {run_key(r["tenant_id"], r["video_id"], r["run_id"]): r for r in runs}
    held = defaultdict(set)
    for blob in store.list(ARTIFACTS_TOP):  # artifacts/tenant=T/video=V/run=R/<file>
        held["/".join(blob.key.split("/")[:4])].add(blob.key)
    for key, run in keys_of.items():
        if run["state"] == "succeeded" and not run["expired_at"]:
            problems += _whole(store, key, held.get(key, set()))
        elif held.get(key):
            problems.append(f"run {run['run_id']} is {run['state']} but {key} holds files")
    problems += [f"files of no run: {key}" for key in held if key not in keys_of]
    for run in runs:
        work = settings.work_root / run["tenant_id"] / run["video_id"] / run["run_id"]
        if run["state"] not in ("queued", "running") and work.exists():
            problems.append(f"run {run['run_id']} ended but its work folder {work} is left")
    return problems


def _whole(store: Any, key: str, held: set[str]) -> list[str]:
    try:
        manifest = json.loads(store.get_bytes(f"{key}/{MANIFEST}"))
    except BlobNotFound:
        return [f"{key}: succeeded without a manifest"]
    problems = []
    for entry in manifest["files"]:
        try:
            data = store.get_bytes(f"{key}/{entry['name']}")
        except BlobNotFound:
            problems.append(f"{key}/{entry['name']}: listed, missing")
            continue
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            problems.append(f"{key}/{entry['name']}: its sha256 is not the manifest's")
    listed = {f"{key}/{e['name']}" for e in manifest["files"]} | {f"{key}/{MANIFEST}"}
    return problems + [f"{extra}: not in the manifest" for extra in sorted(held - listed)]


def expected_usage(
    catalog: Catalog, settings: Settings, runs: list[dict[str, Any]]
) -> dict[tuple[str, str, str], float]:
    """The usage counters the catalog's records imply, ``(tenant, period, metric) -> value``."""
    want: dict[tuple[str, str, str], float] = defaultdict(float)
    bills = {
        t["tenant_id"]: settings.plan(t["plan"]).bill_failed_runs
        for t in _rows(catalog, "SELECT tenant_id, plan FROM tenants")
    }
    for run in runs:
        tenant = run["tenant_id"]
        if not run.get("follows_run_id"):  # a live session's later windows are not executions
            want[(tenant, month_of(run["created_at"]), "executions")] += 1
        billed = run["state"] == "succeeded" or (run["state"] == "failed" and bills[tenant])
        if billed and run["finished_at"]:
            month = month_of(run["finished_at"])
            want[(tenant, month, "processed_s")] += float(run["processed_s"] or 0.0)
        if run["state"] == "succeeded" and not run["expired_at"]:
            want[(tenant, ALL, "storage_bytes")] += float(run["artifacts_bytes"] or 0)
    kept = "SELECT tenant_id, bundle_bytes FROM exports WHERE state = 'succeeded'"
    for export in _rows(catalog, kept + " AND expired_at IS NULL"):
        want[(export["tenant_id"], ALL, "storage_bytes")] += float(export["bundle_bytes"] or 0)
    for video in _rows(catalog, "SELECT tenant_id FROM videos"):
        want[(video["tenant_id"], ALL, "videos")] += 1
    for ask in _rows(catalog, "SELECT tenant_id, created_at FROM asks"):
        for period in (month_of(ask["created_at"]), day_of(ask["created_at"])):
            want[(ask["tenant_id"], period, "asks")] += 1
    return want


def _usage(catalog: Catalog, settings: Settings, runs: list[dict[str, Any]]) -> list[str]:
    want = expected_usage(catalog, settings, runs)
    have = {
        (r["tenant_id"], r["period"], r["metric"]): float(r["value"])
        for r in _rows(catalog, "SELECT * FROM usage")
    }
    problems = []
    for cell in sorted(set(want) | set(have)):
        expected, counted = want.get(cell, 0.0), have.get(cell, 0.0)
        if abs(expected - counted) > 1e-6 * max(1.0, abs(expected)):
            problems.append(f"usage {cell}: counted {counted:g}, the records say {expected:g}")
    return problems


def prefect_disagrees(prefect_url: str, runs: list[dict[str, Any]]) -> list[str]:
    """Runs whose Prefect flow run is not in a final state (the UI would show it running)."""
    problems = []
    with httpx.Client(base_url=prefect_url, timeout=30) as prefect:
        for run in runs:
            if not run["flow_run_id"] or run["state"] in ("queued", "running"):
                continue
            state = prefect.get(f"/flow_runs/{run['flow_run_id']}").json().get("state") or {}
            if state.get("type") not in FINAL_PREFECT:
                problems.append(
                    f"run {run['run_id']} is {run['state']}, its flow run {state.get('type')}"
                )
    return problems
