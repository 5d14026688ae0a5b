"""What scraping `GET /metrics` every 5 s costs the API's throughput under `stress.load`.

    .venv/bin/python benchmarks/metrics_scrape.py [--clients 50] [--block-s 20] [--pairs 4]
                                                  [--interval-s 5]

The service is started as a new user gets it (``ves serve`` on a throwaway folder, as
``stress.load`` does), three copies of the lobby clip are processed, and ``--clients`` readers
of ``stress.load`` (list, video, scene graph, timeline, evidence view, thumbnails, ask) run in
blocks of ``--block-s`` seconds, alternately without and with a scraper that GETs ``/metrics``
every ``--interval-s``, with the catalog holding ``--runs`` more runs over ``--tenants`` tenants
(as ``benchmarks/metrics.py`` fills it; issue 34 sizes the scrape at 1,000 and 100). The order of
the blocks flips each pair (ABBA, so a drift of the shared machine falls
on both sides). Printed per block: requests per second; then the mean with and without, their
ratio, and the scrapes' p50/p95 under load.

A 2% difference is within this machine's noise between blocks, so the cost is also measured
directly: the API process's CPU seconds per scrape (``--probe`` back-to-back scrapes, beside an
idle service), divided by the interval. Under load the API's one event loop is the bottleneck,
so that share of its time is the throughput a scraper takes. Issue 34's target: < 2%.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.metrics import fill
from storage.catalog.database import Catalog
from stress.load.run import readers
from stress.load.world import Service, World, lobby_clip, make_world, throwaway_service
from ves.settings import Settings


def api_process(service: Service) -> psutil.Process:
    """The uvicorn child of ``ves serve`` that answers the API."""
    for child in psutil.Process(service.process.pid).children(recursive=True):
        if "api.server" in " ".join(child.cmdline()):
            return child
    raise RuntimeError("no API process under the service")


def cpu_per_scrape(service: Service, api: psutil.Process, scrapes: int) -> tuple[float, float]:
    """(API CPU seconds per scrape, wall p50 seconds), ``scrapes`` back to back."""
    walls = []
    with httpx.Client(base_url=service.url, timeout=30) as client:
        client.get("/metrics").raise_for_status()  # warm
        before = sum(api.cpu_times()[:2])
        for _ in range(scrapes):
            started = time.perf_counter()
            client.get("/metrics").raise_for_status()
            walls.append(time.perf_counter() - started)
        after = sum(api.cpu_times()[:2])
    return (after - before) / scrapes, statistics.median(walls)


async def scraper(url: str, interval_s: float, stop_at: float, walls: list[float]) -> None:
    """GET /metrics every ``interval_s`` until ``stop_at``, as Prometheus would."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            (await client.get("/metrics")).raise_for_status()
            walls.append(time.perf_counter() - started)
            await asyncio.sleep(max(0.0, interval_s - (time.perf_counter() - started)))


async def block(
    service: Service, world: World, args: argparse.Namespace, walls: list[float] | None
) -> tuple[float, int]:
    """(requests per second, errors) of the readers over one block; scraped when ``walls`` is
    given (each scrape's time is added to it)."""
    jobs = [readers(service.url, world, args.clients, args.block_s)]
    if walls is not None:
        stop_at = time.monotonic() + args.block_s
        jobs.append(scraper(service.url, args.interval_s, stop_at, walls))
    tally = (await asyncio.gather(*jobs))[0]
    return tally.total() / args.block_s, tally.error_count()


def measure(
    args: argparse.Namespace, service: Service, world: World, walls: list[float]
) -> dict[str, list[float]]:
    """Requests per second of each block, keyed by "with" and "without" a scraper."""
    rates: dict[str, list[float]] = {"without": [], "with": []}
    for pair in range(args.pairs):
        order = ("without", "with") if pair % 2 == 0 else ("with", "without")
        for kind in order:
            scraped = walls if kind == "with" else None
            rate, errors = asyncio.run(block(service, world, args, scraped))
            rates[kind].append(rate)
            print(f"pair {pair + 1} {kind:>7} scraper: {rate:7.1f} req/s, {errors} errors")
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--block-s", type=float, default=20.0)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--interval-s", type=float, default=5.0)
    parser.add_argument("--probe", type=int, default=200, help="scrapes for the CPU probe")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--tenants", type=int, default=100)
    args = parser.parse_args()
    with throwaway_service() as (service, root):
        world = make_world(service, lobby_clip(root), 3, runs=0)
        settings = Settings(data_dir=Path(service.env["VES_DATA_DIR"]))
        fill(Catalog.from_settings(settings), args.tenants, args.runs, random.Random(7))
        api = api_process(service)
        cpu_s, wall_s = cpu_per_scrape(service, api, args.probe)
        walls: list[float] = []
        rates = measure(args, service, world, walls)
    without, with_ = statistics.mean(rates["without"]), statistics.mean(rates["with"])
    spread = statistics.pstdev(rates["without"]) / without
    walls.sort()
    p95 = walls[int(0.95 * (len(walls) - 1))] if walls else float("nan")
    print(
        f"throughput with a {args.interval_s:g} s scraper: {with_:.1f} req/s against "
        f"{without:.1f} without (x{with_ / without:.3f}; blocks without it spread "
        f"{spread:.1%}); scrapes under load p50 {statistics.median(walls) * 1e3:.0f} ms, "
        f"p95 {p95 * 1e3:.0f} ms"
    )
    print(
        f"API CPU per scrape {cpu_s * 1e3:.1f} ms (wall p50 {wall_s * 1e3:.1f} ms idle): "
        f"{cpu_s / args.interval_s:.2%} of the API's time at one scrape per "
        f"{args.interval_s:g} s (target < 2%)"
    )


if __name__ == "__main__":
    main()
