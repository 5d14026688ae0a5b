"""Load: concurrent clients reading published runs while two other runs execute.

    .venv/bin/python -m stress.load [--clients 100] [--seconds 60] [--videos 3] [--keep DIR]

The service is started as a new user gets it: ``python -m cli.main serve`` (``ves serve``: a
local Prefect server, a process worker, the API under uvicorn) on a throwaway data folder with a
SQLite catalog, and a tenant key is made with ``ves keys create``. The sandbox plan's limits are
raised (``VES_PLANS``) so that no plan limit answers 402 or 429 during the load: the figure is
about the service, not the plan. ``--videos`` copies of the 20 s synthetic lobby story
(``synthetic.lobby_scene``: people walking, signs with text) are uploaded and executed by the
real ``process-video`` flow in the default mode, the first alone (its wall time, execute to
``succeeded``, is the run's time alone), the rest together: published runs with objects, events,
evidence spans and thumbnails.

Then two more copies are executed at the moment the load starts, and for ``--seconds``,
``--clients`` asyncio clients (each an ``httpx.AsyncClient`` with its own connection) take turns
on: list videos, get a video (its ``latest_run``: the run), scene graph, timeline, evidence view,
a thumbnail linked from the evidence view (a quarter of the artifact reads send the ETag they got
before, so 304s are served too) and ask (POST, questions varied), on the published runs. Every
answer that is not 2xx or 304, and every transport error, is an error. The two runs must end
``succeeded`` within ``--run-bound-s`` (their wall time under load is printed beside the time
alone). Printed: p50/p99 and requests per route, total requests, errors by route and status, the
runs' outcomes; the last line is the summary::

    load: 12,345 requests, 0 errors, p99 max 850 ms (evidence view), 2/2 runs succeeded

Exit code 1 on any error or a run that did not succeed in time. The clients run in this process,
on the same cores as the service (2 here): the latencies include that contention.
``tests/stress/test_load.py`` runs a short version inside ``make test``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from stress.load.world import (
    Service,
    World,
    conclude,
    lobby_clip,
    make_world,
    run_to_end,
    throwaway_service,
)

QUESTIONS = (
    "What text is visible?",
    "When did the first object appear?",
    "How many people walked through the lobby?",
    "What happened at 00:12?",
    "Did anyone enter after 10 seconds?",
    "What is written on the sign?",
    "Was there a helicopter?",
    "What moved between 5 and 9 seconds?",
)
ROUTES = (
    "list videos",
    "get video",
    "scene graph",
    "timeline",
    "evidence view",
    "thumbnail",
    "ask",
)
_OK = {200, 201, 202, 304}


@dataclass
class Tally:
    """Latencies of answered requests and errors, per route."""

    seconds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))

    def requests(self, route: str) -> int:
        return len(self.seconds[route]) + sum(self.errors[route].values())

    def total(self) -> int:
        return sum(self.requests(route) for route in self.routes())

    def error_count(self) -> int:
        return sum(sum(c.values()) for c in self.errors.values())

    def routes(self) -> list[str]:
        return [r for r in ROUTES if r in self.seconds or r in self.errors]

    def quantile(self, route: str, q: float) -> float:
        got = sorted(self.seconds[route]) or [float("nan")]
        return got[min(len(got) - 1, int(len(got) * q))]

    def table(self) -> list[str]:
        lines = ["| route | requests | p50 ms | p99 ms | errors |", "|---|---|---|---|---|"]
        for route in self.routes():
            errors = ", ".join(f"{k}: {v}" for k, v in self.errors[route].items()) or "0"
            lines.append(
                f"| {route} | {self.requests(route):,} | {self.quantile(route, 0.5) * 1e3:.0f} "
                f"| {self.quantile(route, 0.99) * 1e3:.0f} | {errors} |"
            )
        return lines

    def worst_p99(self) -> tuple[float, str]:
        return max((self.quantile(r, 0.99), r) for r in self.routes())


def _request(
    client: httpx.AsyncClient, world: World, rng: random.Random, etags: dict[str, str]
) -> tuple[str, Any]:
    """A route and the coroutine of one request on it."""
    route = rng.choice(ROUTES)
    video = rng.choice(world.videos)
    base = f"/api/product/videos/{video.video_id}"
    path = {
        "list videos": "/api/product/videos?limit=20",
        "get video": base,
        "scene graph": f"{base}/scene-graph",
        "timeline": f"{base}/timeline",
        "evidence view": f"{base}/evidence-view",
        "thumbnail": rng.choice(video.thumbnails),
    }.get(route)
    if path is None:
        return route, client.post(f"{base}/ask", json={"question": rng.choice(QUESTIONS)})
    headers = {}
    if path in etags and rng.random() < 0.25:
        headers["If-None-Match"] = etags[path]
    return route, client.get(path, headers=headers)


async def reader(
    url: str, world: World, stop_at: float, tally: Tally, seed: int, pause_s: float = 0.0
) -> None:
    """One client: requests in turn on its own connection until ``stop_at``."""
    rng = random.Random(seed)
    etags: dict[str, str] = {}
    headers = {"Authorization": f"Bearer {world.key}"}
    limits = httpx.Limits(max_connections=1)
    async with httpx.AsyncClient(
        base_url=url, headers=headers, limits=limits, timeout=60
    ) as client:
        await asyncio.sleep(rng.uniform(0, 0.5))  # the clients do not all start at once
        while time.monotonic() < stop_at:
            route, call = _request(client, world, rng, etags)
            started = time.perf_counter()
            try:
                answer = await call
            except httpx.HTTPError as exc:
                tally.errors[route][type(exc).__name__] += 1
                continue
            if answer.status_code not in _OK:
                tally.errors[route][str(answer.status_code)] += 1
                continue
            tally.seconds[route].append(time.perf_counter() - started)
            if "etag" in answer.headers:
                etags[str(answer.request.url.raw_path.decode())] = answer.headers["etag"]
            if pause_s:
                await asyncio.sleep(pause_s)


async def readers(
    url: str, world: World, clients: int, seconds: float, pause_s: float = 0.0
) -> Tally:
    tally = Tally()
    stop_at = time.monotonic() + seconds
    await asyncio.gather(
        *(reader(url, world, stop_at, tally, seed, pause_s) for seed in range(clients))
    )
    return tally


@dataclass(frozen=True)
class LoadResult:
    tally: Tally
    runs: list[tuple[str, float]]  # each run's end state and wall time
    alone_s: float
    clients: int
    seconds: float
    counted: dict[str, int]  # the billing state's usage after the load
    happened: dict[str, int]  # what the clients did: asks answered, executions accepted

    def ok(self) -> bool:
        return (
            self.tally.error_count() == 0
            and all(s == "succeeded" for s, _ in self.runs)
            and self.counted == self.happened
        )

    def summary(self) -> str:
        p99, route = self.tally.worst_p99()
        good = sum(state == "succeeded" for state, _ in self.runs)
        return (
            f"load: {self.tally.total():,} requests, {self.tally.error_count()} errors, "
            f"p99 max {p99 * 1e3:.0f} ms ({route}), {good}/{len(self.runs)} runs succeeded"
        )

    def report(self) -> list[str]:
        rate = self.tally.total() / self.seconds
        lines = [
            f"{self.clients} clients for {self.seconds:.0f} s: {self.tally.total():,} requests "
            f"({rate:.0f}/s), {self.tally.error_count()} errors",
            *self.tally.table(),
        ]
        lines.append(f"usage counted {self.counted}, actions that happened {self.happened}")
        for n, (state, wall_s) in enumerate(self.runs, 1):
            lines.append(
                f"run {n} beside the load: {state} in {wall_s:.1f} s "
                f"(the same run alone: {self.alone_s:.1f} s, x{wall_s / self.alone_s:.1f})"
            )
        return lines


async def load(
    service: Service, world: World, clients: int, seconds: float, run_bound_s: float
) -> LoadResult:
    """``clients`` readers for ``seconds`` while the world's pending videos are executed."""

    def run_one(video_id: str) -> tuple[str, float]:
        with service.client(world.key) as client:
            return run_to_end(client, video_id, run_bound_s)

    runs = [asyncio.create_task(asyncio.to_thread(run_one, v)) for v in world.pending]
    tally = await readers(service.url, world, clients, seconds)
    ended = list(await asyncio.gather(*runs))
    with service.client(world.key) as client:
        usage = client.get("/api/product/billing/state").json()["usage"]
    counted = {"asks": usage["asks"], "executions": usage["executions"]}
    happened = {"asks": len(tally.seconds["ask"]), "executions": world.executed + len(ended)}
    return LoadResult(tally, ended, world.alone_s, clients, seconds, counted, happened)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--videos", type=int, default=3, help="published runs read by the load")
    parser.add_argument("--run-bound-s", type=float, default=300.0, help="for each run beside it")
    parser.add_argument("--keep", type=Path, help="the data folder, kept (else a temporary one)")
    args = parser.parse_args()
    with throwaway_service(args.keep) as (service, root):
        world = make_world(service, lobby_clip(root), args.videos, runs=2)
        print(
            f"{len(world.videos)} published runs (one alone: {world.alone_s:.1f} s); "
            f"load starts with {len(world.pending)} runs executing",
            flush=True,
        )
        result = asyncio.run(load(service, world, args.clients, args.seconds, args.run_bound_s))
    conclude(result)


if __name__ == "__main__":
    main()
