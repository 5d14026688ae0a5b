"""API latency over real HTTP, as ratios against /healthz measured in the same run, then reads
of a published 10-minute run under load, with the API's read cache off and on.

    .venv/bin/python benchmarks/api.py [--videos 1000] [--requests 300]
        [--clients 100] [--load-s 20] [--pause-ms 0] [--skip-load] [--reprocess]

The machines are shared and noisy, so the figure that matters is the ratio: how much a listing or
a registration costs on top of the bare HTTP round trip of the health check.

The load phase: a 10-minute 320x240 10 fps clip made as ``benchmarks/ask.py`` makes its hour (the
20 s lobby story repeated, here 30 times), processed once by the real ``process-video`` flow in
the service's default mode and kept in ``benchmarks/.cache/api-10min-data/`` (later runs only
measure). An API process of its own (uvicorn, one worker, as ``ves serve`` runs it) serves that
data folder; ``--clients`` asyncio clients of this process read its scene graph, evidence view and
thumbnails in turn, each pausing ``--pause-ms`` after an answer (0: none, the API saturated),
for ``--load-s`` seconds, first with ``VES_READ_CACHE_BYTES=0`` (before), then with the default
cache (after). Printed: p50/p99 per route, requests per second and errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from api.app import create_app
from benchmarks.ask import CACHE, hour_scene, sha256_of, ticking
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from synthetic import SceneSpec, write_video
from testkit.live_server import free_port, serve_app
from ves.plans import PlanLimits
from ves.settings import Settings

LONG_S = 600.0
LONG_VIDEO = CACHE / "api-10min.mp4"
LONG_DATA = CACHE / "api-10min-data"
LONG_RECORD = LONG_DATA / "run.json"
THUMBNAILS = 20  # distinct thumbnails the clients take turns on


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


def ten_minute_scene() -> SceneSpec:
    """The first 10 minutes of ``benchmarks/ask.py``'s hour: the lobby story 30 times."""
    hour = hour_scene()
    return replace(
        hour,
        duration_s=LONG_S,
        objects=tuple(o for o in hour.objects if o.keyframes[0][0] < LONG_S),
        signs=tuple(
            replace(s, end_s=min(s.end_s, LONG_S)) for s in hour.signs if s.start_s < LONG_S
        ),
        scene_cuts=tuple(c for c in hour.scene_cuts if c < LONG_S),
    )


def long_run(reprocess: bool) -> dict[str, Any]:
    """The kept 10-minute run, or one processed now by the real flow (a few minutes, once)."""
    if LONG_RECORD.exists() and not reprocess:
        record: dict[str, Any] = json.loads(LONG_RECORD.read_text())
        if (LONG_DATA / record["key"] / "manifest.json").exists():
            return record
    if not LONG_VIDEO.exists():
        CACHE.mkdir(exist_ok=True)
        print(f"rendering the 10-minute clip to {LONG_VIDEO}", flush=True)
        write_video(ten_minute_scene(), LONG_VIDEO)
    shutil.rmtree(LONG_DATA, ignore_errors=True)
    LONG_DATA.mkdir(parents=True)
    env = {
        **os.environ,
        "VES_DATA_DIR": str(LONG_DATA),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }
    print("processing it with the flow (once; kept for later runs)", flush=True)
    with (LONG_DATA / "flow.log").open("w") as log:
        done = subprocess.run(
            [sys.executable, __file__, "--process-child"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            check=False,
        )
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"processing failed; see {LONG_DATA / 'flow.log'}")
    LONG_RECORD.write_text(lines[-1].removeprefix("RESULT ") + "\n")
    return dict(json.loads(LONG_RECORD.read_text()))


def process_child() -> None:
    """In a fresh process (``VES_DATA_DIR`` set): register and process the clip once."""
    from prefect.testing.utilities import prefect_test_harness

    from flows.process_video import ProcessVideoParams, process_video
    from storage.catalog.runs.store import RunStore

    catalog = Catalog.from_settings(Settings())
    tenants = TenantStore(catalog)
    tenant = tenants.create_tenant("bench")
    videos = VideoStore(catalog)
    video = videos.create(NewVideo(tenant.tenant_id, "10 min", "upload", None, {"filename": "x"}))
    size = LONG_VIDEO.stat().st_size
    digest = sha256_of(LONG_VIDEO)
    path = str(LONG_VIDEO)
    videos.complete_upload(tenant.tenant_id, video.video_id, path=path, sha256=digest, size=size)
    run = RunStore(catalog).create(tenant.tenant_id, video.video_id, {})
    with prefect_test_harness(server_startup_timeout=180), ticking(lambda s: f"{s:.0f} s"):
        started = time.perf_counter()
        key = process_video(ProcessVideoParams(run_id=run.run_id))
        flow_s = time.perf_counter() - started
    finished = RunStore(catalog).get(run.run_id)
    if finished.state != "succeeded":
        raise SystemExit(f"run {run.run_id} ended {finished.state}: {finished.error_message}")
    record = {"video_id": video.video_id, "run_id": run.run_id, "key": key, "flow_s": flow_s}
    print("RESULT " + json.dumps(record), flush=True)


@contextmanager
def api_process(data_dir: Path, cache_bytes: int) -> Iterator[str]:
    """``uvicorn api.main:app`` (one worker, as ``ves serve`` runs it) on ``data_dir``."""
    port = free_port()
    env = {**os.environ, "VES_DATA_DIR": str(data_dir), "VES_READ_CACHE_BYTES": str(cache_bytes)}
    command = [sys.executable, "-m", "uvicorn", "api.main:app", "--factory", "--port", str(port)]
    server = subprocess.Popen([*command, "--log-level", "warning"], env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


async def _read_in_turn(
    client: httpx.AsyncClient,
    urls: list[tuple[str, str]],
    first: int,
    stop_at: float,
    samples: dict[str, list[float]],
    errors: dict[str, Counter[str]],
    pause_s: float,
) -> None:
    turn = first
    await asyncio.sleep(random.uniform(0, pause_s))  # spread the clients' turns
    while time.perf_counter() < stop_at:
        route, url = urls[turn % len(urls)]
        turn += 1
        started = time.perf_counter()
        try:
            status = (await client.get(url)).status_code
            failure = None if status == 200 else str(status)
        except httpx.HTTPError as exc:
            failure = type(exc).__name__
        if failure is None:
            samples[route].append(time.perf_counter() - started)
        else:
            errors[route][failure] += 1
        await asyncio.sleep(pause_s)


async def _load(
    url: str, key: str, urls: list[tuple[str, str]], clients: int, seconds: float, pause_s: float
) -> tuple[dict[str, list[float]], dict[str, Counter[str]]]:
    samples: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, Counter[str]] = defaultdict(Counter)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(
        base_url=url, headers=headers, limits=limits, timeout=30
    ) as client:
        for _, path in urls:  # warm up: DuckDB, the page cache, and (when on) the read cache
            (await client.get(path)).raise_for_status()
        stop_at = time.perf_counter() + seconds
        await asyncio.gather(
            *(
                _read_in_turn(client, urls, n, stop_at, samples, errors, pause_s)
                for n in range(clients)
            )
        )
    return samples, errors


def _alone(url: str, headers: dict[str, str], urls: list[tuple[str, str]]) -> dict[str, float]:
    """p50 of 20 reads of each route by one client, the API otherwise idle."""
    medians = {}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        for route, path in urls:
            medians[route] = statistics.median(_timed(lambda p=path: client.get(p), 20))
    return medians


def load_phase(clients: int, seconds: float, pause_s: float, reprocess: bool) -> None:
    record = long_run(reprocess)
    catalog = Catalog.from_settings(Settings(data_dir=LONG_DATA))
    tenants = TenantStore(catalog)
    tenant = tenants.find_tenant("bench")
    assert tenant is not None
    key = tenants.create_key(tenant.tenant_id)[1]
    video = f"/api/product/videos/{record['video_id']}"
    results = {}
    alone: dict[str, dict[str, float]] = {}
    for label, cache_bytes in (("before: cache off", 0), ("after: cache on", 256 * 2**20)):
        with api_process(LONG_DATA, cache_bytes) as url:
            headers = {"Authorization": f"Bearer {key}"}
            graph = httpx.get(f"{url}{video}/scene-graph", headers=headers, timeout=60)
            spans = httpx.get(f"{url}{video}/evidence-view", headers=headers, timeout=60).json()
            thumbs = [f["thumbnail_url"] for s in spans["spans"] for f in s["frames"]]
            urls = [("scene graph (10 min)", f"{video}/scene-graph")]
            urls.append(("evidence view (10 min)", f"{video}/evidence-view"))
            urls += [("thumbnail", t) for t in thumbs[:: max(1, len(thumbs) // THUMBNAILS)]]
            alone[label] = _alone(url, headers, urls[:3])
            results[label] = asyncio.run(_load(url, key, urls, clients, seconds, pause_s))
    objects = len(graph.json()["objects"])
    print(
        f"\nReads under load: {clients} clients, {pause_s * 1e3:.0f} ms pause after each answer, "
        f"{seconds:.0f} s per setting, on a "
        f"10-minute run ({objects} objects, scene graph {len(graph.content) / 1024:.0f} KiB, "
        f"{len(spans['spans'])} evidence spans), API in one uvicorn process, {os.cpu_count()} cores"
    )
    for label, (samples, errors) in results.items():
        done = sum(len(v) for v in samples.values())
        failed: Counter[str] = Counter()
        for counts in errors.values():
            failed.update(counts)
        print(f"  {label}: {done / seconds:6.0f} req/s, errors {dict(failed) or 0}")
        one = ", ".join(f"{r} {t * 1e3:.1f} ms" for r, t in alone[label].items())
        print(f"    one client alone, p50: {one}")
        for route in sorted(set(samples) | set(errors)):
            got = sorted(samples[route]) or [float("nan")]
            p99 = got[min(len(got) - 1, int(len(got) * 0.99))]
            print(
                f"    {route:24s} p50 {statistics.median(got) * 1e3:8.1f} ms  "
                f"p99 {p99 * 1e3:8.1f} ms  ({len(samples[route])} ok, "
                f"{sum(errors[route].values())} errors)"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--videos", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--clients", type=int, default=100, help="concurrent readers (load)")
    parser.add_argument("--load-s", type=float, default=20.0, help="seconds of load per setting")
    parser.add_argument(
        "--pause-ms", type=float, default=0.0, help="each client's pause between reads (load)"
    )
    parser.add_argument("--skip-load", action="store_true", help="only the latency ratios")
    parser.add_argument("--reprocess", action="store_true", help="process the 10 min clip again")
    parser.add_argument("--process-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.process_child:
        process_child()
        return
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp),
            probe_sources=False,
            allow_private_sources=True,
            plans={"sandbox": PlanLimits(videos=10**9)},  # registering is measured, not refused
        )
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
    if not args.skip_load:
        load_phase(args.clients, args.load_s, args.pause_ms / 1e3, args.reprocess)


if __name__ == "__main__":
    main()
