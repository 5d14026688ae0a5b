"""Scaling out: 8 videos on 1 worker versus 2 workers, on PostgreSQL + S3, in one run.

    .venv/bin/python benchmarks/scale.py [--videos 8] [--seconds 60] [--configs all]

Starts, from packages and on this machine only, a PostgreSQL server (Debian's postgresql-15), an
S3-compatible server (moto), and for each configuration a fresh topology (testkit/
topology.py): the API with the Prefect server on PostgreSQL, and N ``ves worker`` processes that
share no folder. Two tenants register half of the videos each (a cached synthetic 60 s 720p clip
served over HTTP) and execute them all at once. Each worker runs one flow at a time
(``VES_WORKER_LIMIT=1``, ONNX on one thread): a worker stands for a one-core machine.

Printed per configuration: wall time from the first execute to the last run's end, runs per
minute, CPU seconds per run (the workers' and their flow runs', from /proc), and p95 wait in
line (execute to start) per tenant. Then the ratios of 1 to 2 workers. This machine has 2 cores
that the workers share with the API, Prefect, PostgreSQL and S3, so the pinned pair (each worker
and its flows held to one core with ``taskset``) is what separate machines would give: its ratio
(target >= 1.8x) shows the work does not serialise on the catalog, the store or Prefect.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synthetic import demo_scene, scale_scene, write_video
from testkit.media_server import MediaServer
from testkit.postgres import PostgresServer, start_postgres
from testkit.s3 import start_s3_server
from testkit.topology import Engines, Topology, plans_env, run_topology

CACHE = Path(__file__).resolve().parent / ".cache"
CONFIGS = {"1": (1, False), "2": (2, False), "1-pinned": (1, True), "2-pinned": (2, True)}
TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Result:
    name: str
    wall_s: float
    runs: int
    cpu_s: float
    waits: dict[str, list[float]]

    def line(self) -> str:
        p95 = "  ".join(f"{t} p95 wait {_p95(w):5.1f} s" for t, w in sorted(self.waits.items()))
        per_min = 60 * self.runs / self.wall_s
        return (
            f"{self.name:<10} wall {self.wall_s:6.1f} s  {per_min:5.2f} runs/min"
            f"  cpu/run {self.cpu_s / self.runs:5.1f} s  {p95}"
        )


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def clip(seconds: int) -> Path:
    """A cached 1280x720 30 fps synthetic clip of ``seconds`` (people walking, signs, noise)."""
    path = CACHE / f"scale-720p-{seconds}s.mp4"
    if not path.exists():
        CACHE.mkdir(exist_ok=True)
        spec = scale_scene(demo_scene(), width=1280, height=720, duration_s=seconds, fps=30)
        write_video(replace(spec, noise=3.0, bitrate=2_000_000), path)
    return path


def _tree(pid: int) -> list[int]:
    """``pid`` and every live process below it."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    found, pending = [pid], [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def _cpu_s(roots: list[int]) -> float:
    """CPU (user + system) used by the process trees under ``roots``: each live process's own
    time plus that of its children that ended (the flow runs), so each is counted once."""
    total = 0
    for pid in (p for root in roots for p in _tree(root)):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    return total / TICK


def _stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def measure(topology: Topology, url: str, videos: int) -> tuple[float, dict[str, list[float]]]:
    """Execute ``videos`` videos for two tenants at once; wall time and waits in line."""
    tenants = {name: topology.client(name) for name in ("tenant-a", "tenant-b")}
    names = [("tenant-a", "tenant-b")[i % 2] for i in range(videos)]
    body = {"url": url, "title": "scale"}
    ids = [tenants[n].post("/api/videos/add", json=body).json()["video_id"] for n in names]
    started, executed = time.monotonic(), []
    for name, video_id in zip(names, ids, strict=True):
        executed.append(datetime.now(UTC))
        accepted = tenants[name].post(f"/api/product/videos/{video_id}/execute")
        assert accepted.status_code == 202, accepted.text
    runs = [_wait(tenants[n], v) for n, v in zip(names, ids, strict=True)]
    wall = time.monotonic() - started
    waits: dict[str, list[float]] = {name: [] for name in tenants}
    for name, at, run in zip(names, executed, runs, strict=True):
        waits[name].append((_stamp(run["started_at"]) - at).total_seconds())
    for client in tenants.values():
        client.close()
    return wall, waits


def _wait(client: httpx.Client, video_id: str, timeout_s: float = 1800) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        video = client.get(f"/api/product/videos/{video_id}").json()
        if video["state"] in {"succeeded", "failed"}:
            if video["state"] != "succeeded":
                raise SystemExit(f"run of {video_id} failed: {video['latest_run']['error']}")
            run: dict[str, Any] = video["latest_run"]
            return run
        time.sleep(0.5)
    raise SystemExit(f"{video_id} did not finish in {timeout_s:.0f} s")


def run_config(
    name: str, pg: PostgresServer, bucket_env: dict[str, str], url: str, videos: int
) -> Result:
    workers, pin = CONFIGS[name]
    engines = Engines(
        pg.create_database(), pg.create_database().replace("+psycopg", "+asyncpg"), bucket_env
    )
    root = Path(tempfile.mkdtemp(prefix=f"ves-scale-{name}-"))
    extra = {
        "VES_WORKER_LIMIT": "1",
        "VES_ONNX_THREADS": "1",
        "VES_PLANS": plans_env(concurrent_runs=videos, executions_per_month=1000, videos=1000),
    }
    try:
        with run_topology(root, engines, workers=workers, pin=pin, **extra) as topology:
            pids = [w.pid for w in topology.workers]
            cpu_before = _cpu_s(pids)
            wall, waits = measure(topology, url, videos)
            time.sleep(1.0)  # let the workers reap their last flow processes
            cpu = _cpu_s(pids) - cpu_before
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return Result(name, wall, videos, cpu, waits)


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(143)  # unwinds the ExitStack: every server and worker is stopped


def main() -> None:
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--videos", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--configs", default="1,2,1-pinned,2-pinned")
    args = parser.parse_args()
    path = clip(args.seconds)
    results: dict[str, Result] = {}
    with ExitStack() as stack:
        pg = stack.enter_context(start_postgres())
        s3 = stack.enter_context(contextmanager(start_s3_server)())
        store = s3.store_env(s3.create_bucket())
        media = stack.enter_context(MediaServer(path.parent))
        print(f"{args.videos} videos of {args.seconds} s 720p, 2 tenants, PostgreSQL + S3 (moto)")
        for name in args.configs.split(","):
            results[name] = run_config(name, pg, store, media.url(path.name), args.videos)
            print(results[name].line(), flush=True)
    for one, two in (("1", "2"), ("1-pinned", "2-pinned")):
        if one in results and two in results:
            ratio = results[one].wall_s / results[two].wall_s
            print(f"speed-up {two} / {one}: {ratio:.2f}x")


if __name__ == "__main__":
    main()
