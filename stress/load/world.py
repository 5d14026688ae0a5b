"""The world the load parts stand on: ``ves serve`` on a throwaway data folder with a plan that
never refuses, and published runs of the lobby clip to read (``stress.load.run``,
``stress.slow_clients.run`` and ``tests/stress/test_load.py`` share it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, Protocol

import httpx

from synthetic import lobby_scene, write_video
from testkit.live_server import free_port
from testkit.service import (
    create_key,
    own_env,
    register_upload,
    start_service,
    stop_service,
    wait_for_banner,
    wait_video,
)

# Room for everything the load does: no 402 (videos, executions, processed seconds, asks) and no
# 429 (runs queued at once) may come from the plan while it is measured.
LOAD_PLANS = json.dumps(
    {
        "sandbox": {
            "videos": 1_000_000,
            "executions_per_month": 1_000_000,
            "processed_s_per_month": 1e9,
            "concurrent_runs": 100,
            "asks_per_day": 100_000_000,
        }
    }
)


@dataclass
class Service:
    """``ves serve`` running on a data folder of its own."""

    url: str
    env: dict[str, str]
    process: subprocess.Popen[str]

    def key(self, tenant: str) -> str:
        """A new key of ``tenant`` (created if new), as ``ves keys create`` prints it."""
        return create_key(self.env, tenant)

    def client(self, key: str, timeout_s: float = 60) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout_s)


@contextmanager
def served(data: Path, **settings: str) -> Iterator[Service]:
    """``python -m cli.main serve`` over ``data`` (SQLite catalog, local Prefect server and
    worker), with the load's plan and ``settings`` (``VES_*`` names); stopped at exit."""
    data.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = own_env() | {
        "VES_DATA_DIR": str(data),
        "VES_PORT": str(port),
        "VES_PREFECT_PORT": str(free_port()),
        "VES_LOG_LEVEL": "warning",
        "VES_PLANS": LOAD_PLANS,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }
    process = start_service(env | settings)
    try:
        wait_for_banner(process, timeout_s=180)
        yield Service(f"http://127.0.0.1:{port}", env | settings, process)
    finally:
        stop_service(process)


@contextmanager
def throwaway_service(data: Path | None = None, **settings: str) -> Iterator[tuple[Service, Path]]:
    """``served`` in a temporary folder (``data`` kept if given), and that folder, for the
    clips."""
    root = Path(tempfile.mkdtemp(prefix="ves-stress-"))
    try:
        with served(data or root / "data", **settings) as service:
            print(f"service up at {service.url}, data in {data or root / 'data'}", flush=True)
            yield service, root
    finally:
        shutil.rmtree(root, ignore_errors=True)


class Outcome(Protocol):
    def ok(self) -> bool: ...
    def summary(self) -> str: ...
    def report(self) -> list[str]: ...


def conclude(outcome: Outcome) -> NoReturn:
    """Print the report, then the summary line last; exit 1 unless all went well."""
    print("\n".join(outcome.report()))
    print(outcome.summary(), flush=True)
    sys.exit(0 if outcome.ok() else 1)


@dataclass(frozen=True)
class Published:
    """A video whose run succeeded, and the thumbnails its evidence view links."""

    video_id: str
    run_id: str
    thumbnails: tuple[str, ...]


def execute(client: httpx.Client, video_id: str) -> None:
    accepted = client.post(f"/api/product/videos/{video_id}/execute")
    if accepted.status_code != 202:
        raise RuntimeError(f"execute {video_id}: {accepted.status_code} {accepted.text}")


def run_to_end(client: httpx.Client, video_id: str, bound_s: float) -> tuple[str, float]:
    """Execute ``video_id`` and wait for its run to end: its state and wall time (``timeout``
    when it did not end within ``bound_s``)."""
    started = time.perf_counter()
    execute(client, video_id)
    try:
        video = wait_video(client, video_id, {"succeeded", "failed"}, timeout_s=bound_s)
    except AssertionError:
        return "timeout", time.perf_counter() - started
    return str(video["state"]), time.perf_counter() - started


def published(client: httpx.Client, video_id: str) -> Published:
    video = client.get(f"/api/product/videos/{video_id}").json()
    view = client.get(f"/api/product/videos/{video_id}/evidence-view").json()
    thumbs = tuple(f["thumbnail_url"] for span in view["spans"] for f in span["frames"])
    if video["state"] != "succeeded" or not thumbs:
        raise RuntimeError(f"{video_id} is not a published run with thumbnails: {video}")
    return Published(video_id, video["latest_run"]["run_id"], thumbs)


@dataclass
class World:
    """What the load reads and what runs beside it."""

    key: str
    videos: list[Published]
    pending: list[str]  # registered, executed when the load starts
    alone_s: float  # one run, execute to succeeded, nothing else running

    @property
    def executed(self) -> int:
        return len(self.videos)


def make_world(service: Service, clip: Path, videos: int, runs: int) -> World:
    """Upload ``videos + runs`` copies of ``clip``; process the first alone (timed), then the
    other ``videos - 1`` together."""
    key = service.key("load")
    with service.client(key) as client:
        ids = [register_upload(client, clip) for _ in range(videos + runs)]
        state, alone_s = run_to_end(client, ids[0], bound_s=300)
        if state != "succeeded":
            raise RuntimeError(f"the first run ended {state}")
        for video_id in ids[1:videos]:
            execute(client, video_id)
        for video_id in ids[1:videos]:
            wait_video(client, video_id, {"succeeded", "failed"}, timeout_s=300)
        ready = [published(client, video_id) for video_id in ids[:videos]]
    return World(key, ready, ids[videos:], alone_s)


def lobby_clip(folder: Path) -> Path:
    clip = folder / "lobby.mp4"
    write_video(lobby_scene(), clip)
    return clip
