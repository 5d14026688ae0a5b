"""Time to first result on the embedded `make run` topology, against the stage compute.

    .venv/bin/python benchmarks/latency.py [--runs 10] [--seconds 60]

Starts `ves serve` as a new user's `make run` does (its own Prefect server and worker, SQLite,
local artifacts; a temporary data folder and free ports), uploads the 60 s 720p clip of
`benchmarks/pipeline.py` once, then executes it `--runs` times one after the other. For each run
it polls the video (every 50 ms) and records execute -> `running` (the flow started and took the
run) and execute -> `succeeded`, and reads the stage compute from `cost.json`. It prints p50/p95 of
both, and the ratio end-to-end / stage compute (the time a 60 s video spends in orchestration:
queueing, worker polling, process and flow start). Issue 14's targets: execute -> running p50 under
2 s; end-to-end within 1.3x the stage compute.

Where the time to `running` goes, from the Prefect flow run's own state history: execute ->
`PENDING` (the API created the flow run, a worker polled and took it), `PENDING` -> `RUNNING` (the
worker started a process, which imported the flow and set it running), `RUNNING` -> the catalog's
`running` (the flow loaded the run and took a slot).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.pipeline import clip
from testkit.live_server import free_port
from testkit.service import wait_for_banner
from testkit.topology import plans_env


def start_service(root: Path) -> tuple[subprocess.Popen[str], str, dict[str, str]]:
    port = free_port()
    env = {
        **os.environ,
        "VES_DATA_DIR": str(root),
        "VES_PORT": str(port),
        "VES_PREFECT_PORT": str(free_port()),
        "VES_PLANS": plans_env(executions_per_month=1000, processed_s_per_month=1e6),
        "PREFECT_HOME": str(root / "prefect-home"),
    }
    service = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    wait_for_banner(service, timeout_s=180)
    # Keep reading the service's output (into its log): a full pipe would block its API.
    log = (root / "serve.log").open("w")
    threading.Thread(target=shutil.copyfileobj, args=(service.stdout, log), daemon=True).start()
    return service, f"http://127.0.0.1:{port}", env


def api_key(env: dict[str, str]) -> str:
    cli = [sys.executable, "-m", "cli.main", "keys", "create", "--tenant", "latency"]
    done = subprocess.run(cli, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def upload(client: httpx.Client, path: Path) -> str:
    body = {
        "title": "latency",
        "source_type": "upload",
        "upload": {
            "filename": path.name,
            "size_bytes": path.stat().st_size,
            "content_type": "video/mp4",
        },
    }
    answer = client.post("/api/videos/add", json=body)
    answer.raise_for_status()
    video = answer.json()
    content = {"Content-Type": "application/octet-stream"}
    client.put(video["upload_url"], content=path.read_bytes(), headers=content).raise_for_status()
    return str(video["video_id"])


def phases(prefect: httpx.Client, executed: datetime, running: str) -> dict[str, float]:
    """The newest flow run's state times, as seconds after ``executed`` (see the module)."""
    body = {
        "flows": {"name": {"any_": ["process-video"]}},
        "sort": "EXPECTED_START_TIME_DESC",
        "limit": 1,
    }
    flow_run = prefect.post("/flow_runs/filter", json=body).json()[0]
    states = prefect.get("/flow_run_states/", params={"flow_run_id": flow_run["id"]}).json()
    at = {s["type"]: datetime.fromisoformat(s["timestamp"]) for s in states}
    started = datetime.fromisoformat(running)
    return {
        "to_pending_s": (at["PENDING"] - executed).total_seconds(),
        "pending_to_running_s": (at["RUNNING"] - at["PENDING"]).total_seconds(),
        "flow_to_catalog_s": (started - at["RUNNING"]).total_seconds(),
    }


def one_run(client: httpx.Client, prefect: httpx.Client, video_id: str) -> dict[str, float]:
    executed = datetime.now().astimezone()
    started = time.perf_counter()
    client.post(f"/api/product/videos/{video_id}/execute", json={}).raise_for_status()
    answered_s = time.perf_counter() - started
    running_s = None
    while True:
        run = client.get(f"/api/product/videos/{video_id}").json()["latest_run"]
        elapsed = time.perf_counter() - started
        if running_s is None and run["state"] in ("running", "succeeded"):
            running_s = elapsed
        if run["state"] in ("succeeded", "failed"):
            break
        time.sleep(0.05)
    assert run["state"] == "succeeded", run
    cost: dict[str, Any] = client.get(f"/api/product/videos/{video_id}/cost").json()
    return {
        "answered_s": answered_s,
        "running_s": float(running_s or elapsed),
        "succeeded_s": elapsed,
        "compute_s": float(sum(cost["stages"].values())),
        **phases(prefect, executed, run["started_at"]),
    }


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=60)
    args = parser.parse_args()
    path = clip(args.seconds, False)
    with tempfile.TemporaryDirectory() as tmp:
        service, url, env = start_service(Path(tmp))
        try:
            headers = {"Authorization": f"Bearer {api_key(env)}"}
            prefect_url = f"http://127.0.0.1:{env['VES_PREFECT_PORT']}/api"
            with (
                httpx.Client(base_url=url, headers=headers, timeout=120) as client,
                httpx.Client(base_url=prefect_url, timeout=30) as prefect,
            ):
                video_id = upload(client, path)
                runs = []
                for n in range(1, args.runs + 1):
                    runs.append(one_run(client, prefect, video_id))
                    print(f"  run {n}: " + ", ".join(f"{k} {v:.2f}" for k, v in runs[-1].items()))
        finally:
            os.killpg(service.pid, signal.SIGTERM)
            service.wait(timeout=120)
    report(args.seconds, runs)


def report(seconds: int, runs: list[dict[str, float]]) -> None:
    print(f"\n{len(runs)} runs of a {seconds} s 720p clip on the embedded topology (make run)")
    print("| figure | p50 | p95 | target |")
    print("|---|---|---|---|")
    for name, key, target in (
        ("execute -> running (s)", "running_s", "p50 < 2"),
        ("  execute answered 202 (s)", "answered_s", ""),
        ("  execute -> Prefect PENDING (s)", "to_pending_s", ""),
        ("  PENDING -> RUNNING (s)", "pending_to_running_s", ""),
        ("  Prefect RUNNING -> catalog running (s)", "flow_to_catalog_s", ""),
        ("execute -> succeeded (s)", "succeeded_s", ""),
        ("stage compute (s)", "compute_s", ""),
    ):
        values = [r[key] for r in runs]
        print(f"| {name} | {_p(values, 50):.2f} | {_p(values, 95):.2f} | {target} |")
    ratios = [r["succeeded_s"] / r["compute_s"] for r in runs]
    print(f"| end-to-end / stage compute | {_p(ratios, 50):.2f} | {_p(ratios, 95):.2f} | <= 1.3 |")


if __name__ == "__main__":
    main()
