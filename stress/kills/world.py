"""The service the kill trials shoot at: ``ves serve`` as ``make run`` starts it, one tenant, and
two uploaded clips with a known truth, each with a first succeeded run that readers are served.

``KillWorld`` starts, kills and restarts it; ``TARGETS`` are the processes a trial may kill.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from synthetic import SceneSpec, ground_truth, lobby_scene, scale_scene, write_video
from testkit.live_server import free_port
from testkit.service import (
    alive,
    child_running,
    create_key,
    descendants,
    flow_processes,
    own_env,
    register_upload,
    start_service,
    wait_for_banner,
    wait_gone,
)

HEARTBEAT_TIMEOUT_S = 8.0
TENANT = "kills"

# What a trial may kill, and how the process is found under ``ves serve``. "flow" is the process
# running the flow run (forked by the warm starter); "service" is every process at once.
TARGETS = ("flow", "worker", "api", "prefect", "service")
_COMMANDS = {
    "worker": (b"worker\0start",),
    "api": (b"-m\0api.server",),
    "prefect": (b"server\0start",),
}

# 40 s of the lobby story at 640x360: long enough (several seconds of processing) for a trial to
# catch every stage, and split in two chunks (VES_CHUNK_S) so a kill can land inside one.
CLIP = replace(scale_scene(lobby_scene(), width=640, height=360, duration_s=40), noise=2.0)


def service_env(data: Path) -> dict[str, str]:
    """``make run``'s defaults in ``data``, with a short heartbeat timeout (trials last less),
    and plan limits no trial reaches (the checks count usage, the plan must not refuse it)."""
    plenty = {
        "videos": 1000,
        "executions_per_month": 100_000,
        "processed_s_per_month": 1e9,
        "concurrent_runs": 8,
        "asks_per_day": 100_000,
    }
    return {
        **own_env(),
        "VES_DATA_DIR": str(data),
        "VES_PORT": str(free_port()),
        "VES_PREFECT_PORT": str(free_port()),
        "VES_HEARTBEAT_TIMEOUT_S": f"{HEARTBEAT_TIMEOUT_S:g}",
        "VES_LOG_LEVEL": "warning",
        "VES_PLANS": json.dumps({"sandbox": plenty}),
        "VES_CHUNK_S": "20",
    }


def movers_match_truth(objects: list[dict[str, Any]], scene: SceneSpec = CLIP) -> str | None:
    """Why a scene graph's objects are not ``scene``'s truth (each mover once, within 2 s, and
    every sign read), or None when they are."""
    truth = ground_truth(scene)
    movers = [(o["first_seen_s"], o["last_seen_s"]) for o in objects if o["class"] != "text"]
    if len(movers) != len(truth.objects):
        return f"{len(movers)} moving objects, the truth has {len(truth.objects)}"
    for obj in truth.objects:
        near = [
            m
            for m in movers
            if abs(m[0] - obj.first_seen_s) <= 2 and abs(m[1] - obj.last_seen_s) <= 2
        ]
        if len(near) != 1:
            return f"object {obj.first_seen_s:.1f}-{obj.last_seen_s:.1f} s found {len(near)} times"
    texts = sorted(o["attributes"]["text"] for o in objects if o["class"] == "text")
    if texts != sorted(t.text for t in truth.texts):
        return f"texts {texts}, the truth has {sorted(t.text for t in truth.texts)}"
    return None


@dataclass
class KillWorld:
    """The running service, its tenant's client, and the clips' video ids."""

    data: Path
    env: dict[str, str]
    process: subprocess.Popen[str] | None = None
    key: str = ""
    videos: list[str] = field(default_factory=list)
    restarts: list[float] = field(default_factory=list)  # seconds each restart took

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.env['VES_PORT']}"

    @property
    def prefect_url(self) -> str:
        return f"http://127.0.0.1:{self.env['VES_PREFECT_PORT']}/api"

    def client(self, timeout_s: float = 30) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.key}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout_s)

    def start(self) -> float:
        """Start ``ves serve`` and wait for its banner; the seconds it took."""
        started = time.monotonic()
        self.data.mkdir(parents=True, exist_ok=True)
        self.process = start_service(self.env)
        wait_for_banner(self.process, timeout_s=180)
        return time.monotonic() - started

    def setup(self, clips: int = 2) -> None:
        """Start, create the tenant's key and upload the clips."""
        self.start()
        self.key = create_key(self.env, TENANT)
        clip = self.data.parent / "kills-clip.mp4"
        write_video(CLIP, clip)
        with self.client() as client:
            self.videos = [register_upload(client, clip, f"clip {i}") for i in range(clips)]

    def execute(self, video_id: str) -> str:
        """Execute ``video_id``; the run's id (raises unless 202)."""
        with self.client() as client:
            accepted = client.post(f"/api/product/videos/{video_id}/execute")
        if accepted.status_code != 202:
            raise AssertionError(f"execute answered {accepted.status_code}: {accepted.text}")
        return str(accepted.json()["run_id"])

    def kill(self, target: str) -> list[int]:
        """SIGKILL ``target`` (see ``TARGETS``); the pids killed."""
        assert self.process is not None
        root = self.process.pid
        if target == "service":
            pids = [root, *descendants(root)]
        elif target == "flow":
            pids = flow_processes(root)
        else:
            found = child_running(root, *_COMMANDS[target])
            pids = [found] if found else []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # gone already, with its parent
                os.kill(pid, signal.SIGKILL)
        return pids

    def down(self) -> bool:
        """Whether the supervisor has exited (it stops everything when a child dies)."""
        return self.process is None or self.process.poll() is not None

    def restart_after_kill(self, timeout_s: float = 60) -> float:
        """Wait for the supervisor and every process it had to be gone, then start again (as a
        process manager above ``ves serve`` would); the seconds from now to the new banner."""
        assert self.process is not None
        started = time.monotonic()
        everything = [self.process.pid, *descendants(self.process.pid)]
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        if self.process.stdout:
            self.process.stdout.close()
        if not wait_gone(everything, timeout_s):
            raise AssertionError(
                f"processes outlived the service: {[p for p in everything if alive(p)]}"
            )
        self.start()
        self.restarts.append(time.monotonic() - started)
        return self.restarts[-1]

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            for pid in [self.process.pid, *descendants(self.process.pid)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if self.process.stdout:
            self.process.stdout.close()
