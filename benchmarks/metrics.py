"""How long `GET /metrics` takes with a busy catalog, against `GET /healthz` in the same run.

    .venv/bin/python benchmarks/metrics.py [--tenants 100] [--runs 1000] [--repeat 50]

A temporary SQLite catalog gets `--tenants` tenants and `--runs` runs spread over them (most
succeeded with a cost record, some failed with a code, a few queued and running), then the app
(in process, over its ASGI interface through httpx) is scraped `--repeat` times. Prints p50/p95
of the scrape and of `/healthz` and their ratio. Issue 34's target: the scrape < 50 ms p95 at
1,000 runs and 100 tenants.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from api.app import create_app
from storage.catalog.database import Catalog
from storage.catalog.runs.costs import CostSample, RunCostStore
from storage.catalog.runs.store import RunFailure, RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from testkit.submitters import QuietSubmitter
from ves.settings import Settings

STAGES = ("decode", "sample", "detect", "track", "world_state", "timeline", "evidence", "cost")


def fill(catalog: Catalog, tenants: int, runs: int, rng: random.Random) -> None:
    """``tenants`` tenants and ``runs`` runs over them, in the states a busy service holds."""
    ids = [TenantStore(catalog).create_tenant(f"t{i}").tenant_id for i in range(tenants)]
    videos, store, costs = VideoStore(catalog), RunStore(catalog), RunCostStore(catalog)
    for n in range(runs):
        tenant = ids[n % tenants]
        video = videos.create(NewVideo(tenant, f"v{n}", "url", "https://x.example/a.mp4"))
        run = store.create(tenant, video.video_id, {"detector": rng.choice(["motion", None])})
        roll = rng.random()
        if roll < 0.03:
            continue  # queued
        assert store.start(run.run_id)
        if roll < 0.06:
            continue  # running
        if roll < 0.12:
            store.fail(
                run.run_id, RunFailure(rng.choice(["source_invalid", "limit_exceeded"]), "x")
            )
            continue
        store.succeed(run.run_id, f"artifacts/{run.run_id}", 60.0, 10_000)
        stages = {s: rng.uniform(0.1, 30.0) for s in STAGES}
        costs.record(
            CostSample(
                "motion",
                2.0,
                25.0,
                1280,
                720,
                60.0,
                60.0,
                1500,
                120,
                stages,
                40.0,
                run_id=run.run_id,
                tenant_id=tenant,
                video_id=video.video_id,
            )
        )


def timed(client: TestClient, path: str, repeat: int) -> list[float]:
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(path)
        seconds.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder))
        catalog = Catalog.from_settings(settings)
        fill(catalog, args.tenants, args.runs, random.Random(7))
        with TestClient(create_app(settings, catalog, QuietSubmitter())) as client:
            timed(client, "/metrics", 3)  # warm
            scrape = timed(client, "/metrics", args.repeat)
            health = timed(client, "/healthz", args.repeat)
            size = len(client.get("/metrics").content)
    rows = {"GET /metrics": scrape, "GET /healthz (baseline)": health}
    base = statistics.median(health)
    print(f"{args.runs} runs, {args.tenants} tenants, {args.repeat} scrapes, {size} bytes\n")
    print("| request | p50 ms | p95 ms | p95 / healthz p50 |\n|---|---:|---:|---:|")
    for name, values in rows.items():
        p95 = sorted(values)[int(0.95 * (len(values) - 1))]
        print(
            f"| {name} | {statistics.median(values) * 1000:.1f} | {p95 * 1000:.1f} | "
            f"{p95 / base:.1f}x |"
        )
    print(json.dumps({"p95_ms": round(sorted(scrape)[int(0.95 * (len(scrape) - 1))] * 1000, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
