"""API latency over real HTTP, as ratios against /healthz measured in the same run.

    .venv/bin/python benchmarks/api.py [--videos 1000] [--requests 300]

The machines are shared and noisy, so the figure that matters is the ratio: how much a listing or
a registration costs on top of the bare HTTP round trip of the health check.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from api.app import create_app
from storage.catalog import Catalog
from storage.tenants import TenantStore
from storage.videos import NewVideo, VideoStore
from tests.fixtures.live_server import serve_app
from ves.settings import Settings


def _timed(call: Callable[[], httpx.Response], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        response = call()
        samples.append(time.perf_counter() - start)
        response.raise_for_status()
    return samples


def _seed(catalog: Catalog, videos: int) -> str:
    tenants = TenantStore(catalog)
    tenant = tenants.create_tenant("bench")
    store = VideoStore(catalog)
    for n in range(videos):
        store.create(NewVideo(tenant.tenant_id, f"clip {n}", "url", f"https://x.example/{n}.mp4"))
    return tenants.create_key(tenant.tenant_id)[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--videos", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), probe_sources=False, allow_private_sources=True)
        catalog = Catalog.from_settings(settings)
        key = _seed(catalog, args.videos)
        with (
            serve_app(create_app(settings, catalog)) as url,
            httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as client,
        ):
            first_id = client.get("/api/product/videos?limit=1").json()["data"][0]["video_id"]
            body = {"url": "http://127.0.0.1:9/a.mp4", "title": "bench"}
            cases = {
                "healthz (baseline)": lambda: client.get("/healthz"),
                "list 50 videos": lambda: client.get("/api/product/videos?limit=50"),
                "get one video": lambda: client.get(f"/api/product/videos/{first_id}"),
                "register (no probe)": lambda: client.post("/api/videos/add", json=body),
            }
            _timed(cases["healthz (baseline)"], 50)  # warm up
            results = {name: _timed(call, args.requests) for name, call in cases.items()}
    base = statistics.median(results["healthz (baseline)"])
    print(f"API latency over HTTP, {args.videos} videos in the catalog, {args.requests} requests")
    for name, samples in results.items():
        p50, p95 = statistics.median(samples), statistics.quantiles(samples, n=20)[18]
        print(f"  {name:22s} p50 {p50 * 1e3:7.2f} ms  p95 {p95 * 1e3:7.2f} ms  x{p50 / base:5.2f}")


if __name__ == "__main__":
    main()
