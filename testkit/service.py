"""The whole service as ``make run`` starts it (``ves serve``), seen from outside: its processes,
its banner, and the HTTP steps a client takes (an upload, waiting for a video's state).

Shared by the end-to-end tests and the stress parts that run the real topology (kill trials,
load), so all of them start, find and kill the service's processes the same way.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from testkit.live_server import free_port

BANNER_END = "Stop with Ctrl-C"


def start_service(env: dict[str, str]) -> subprocess.Popen[str]:
    """``ves serve`` with ``env``; its stderr (the API's log) goes to ``api.log`` in the data
    folder, beside the Prefect server's and worker's logs. Read the banner with
    ``wait_for_banner`` before using it."""
    with (Path(env["VES_DATA_DIR"]) / "api.log").open("a") as api_log:
        return subprocess.Popen(
            [sys.executable, "-m", "cli.main", "serve"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=api_log,
            text=True,
        )


def stop_service(process: subprocess.Popen[str], timeout_s: float = 60) -> None:
    """Stop ``ves serve`` as Ctrl-C would (SIGTERM), and close its pipe."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=timeout_s)
    if process.stdout:
        process.stdout.close()


@dataclass
class Service:
    """A running ``ves serve``: its process (replaced when a test restarts it), its API's URL,
    the environment it was started with, and the clients handed out (closed at its end)."""

    process: subprocess.Popen[str]
    url: str
    env: dict[str, str]
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, tenant: str = "e2e") -> httpx.Client:
        """A client with a new key of ``tenant``."""
        key = create_key(self.env, tenant)
        client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
        )
        self.clients.append(client)
        return client


@contextmanager
def serving(data: Path, **env: str) -> Iterator[Service]:
    """``ves serve`` over the data folder ``data`` on free ports, with private sources allowed
    (the tests' media server is on this machine), a heartbeat timeout of 8 s and ``env`` on top
    of this process's environment; stopped as Ctrl-C would at the end."""
    port = free_port()
    full = {
        **os.environ,
        "VES_DATA_DIR": str(data),
        "VES_PORT": str(port),
        "VES_PREFECT_PORT": str(free_port()),
        "VES_ALLOW_PRIVATE_SOURCES": "true",
        "VES_HEARTBEAT_TIMEOUT_S": "8",
        "VES_LOG_LEVEL": "warning",
        **env,
    }
    service = Service(start_service(full), f"http://127.0.0.1:{port}", full)
    try:
        wait_for_banner(service.process)
        yield service
    finally:
        for client in service.clients:
            client.close()
        stop_service(service.process)


def own_env() -> dict[str, str]:
    """This process's environment without the service's, Prefect's or S3's settings: a service
    started with it gets ``make run``'s defaults, whatever the caller runs against."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("VES_", "AWS_", "PREFECT_"))}


def wait_for_banner(process: subprocess.Popen[str], timeout_s: float = 150) -> str:
    """What ``ves serve`` printed up to its banner's last line (raises if it never came)."""
    assert process.stdout is not None
    seen = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            break
        seen.append(line)
        if line.startswith(BANNER_END):
            return "".join(seen)
    raise AssertionError("no banner:\n" + "".join(seen))


def create_key(env: dict[str, str], tenant: str, plan: str = "sandbox") -> str:
    """A new API key of ``tenant`` from ``ves keys create`` (the tenant made if new)."""
    cli = [sys.executable, "-m", "cli.main", "keys", "create", "--tenant", tenant, "--plan", plan]
    done = subprocess.run(cli, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, exited but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (ProcessLookupError, FileNotFoundError):
        return False
    return state != "Z"


def wait_gone(pids: list[int], timeout_s: float = 30) -> bool:
    """Wait until none of ``pids`` runs; whether they all went in time."""
    deadline = time.monotonic() + timeout_s
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children...), from ``/proc``."""
    children: dict[int, list[int]] = {}
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(status.parent.name))
    found, pending = [], [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def _cmdlines(root: int) -> dict[int, bytes]:
    found = {}
    for pid in descendants(root):
        try:
            found[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
    return found


def flow_processes(root: int) -> list[int]:
    """The processes running flow runs under ``root``: ``python -m prefect.engine`` started
    cold, or forked by the warm starter (``python -m flows.warm_start --serve``)."""
    everything = _cmdlines(root)
    starters = {pid for pid, cmd in everything.items() if b"warm_start\0--serve" in cmd}
    forked = {child for starter in starters for child in descendants(starter)}
    cold = {pid for pid, cmd in everything.items() if b"prefect.engine" in cmd}
    return sorted(forked | cold)


def child_running(root: int, *words: bytes) -> int | None:
    """The first process below ``root`` whose command line holds every one of ``words``."""
    for pid, cmd in sorted(_cmdlines(root).items()):
        if all(word in cmd for word in words):
            return pid
    return None


def register_upload(client: httpx.Client, path: Path, title: str = "upload") -> str:
    """Register ``path`` as an upload (``POST /api/videos/add``) and PUT its bytes; its id."""
    data = path.read_bytes()
    spec = {
        "filename": path.name,
        "size_bytes": len(data),
        "content_type": "video/mp4",
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    added = client.post(
        "/api/videos/add", json={"title": title, "source_type": "upload", "upload": spec}
    )
    added.raise_for_status()
    video = added.json()
    client.put(video["upload_url"], content=data).raise_for_status()
    return str(video["video_id"])


def wait_video(
    client: httpx.Client, video_id: str, states: set[str], timeout_s: float = 240
) -> dict[str, Any]:
    """The video once its state is one of ``states`` (raises after ``timeout_s``)."""
    return wait_state(client, f"/api/product/videos/{video_id}", states, timeout_s)


def wait_state(
    client: httpx.Client, url: str, states: set[str], timeout_s: float = 240
) -> dict[str, Any]:
    """The resource at ``url`` (a video, an export, ...) once its ``state`` is one of
    ``states``; raises after ``timeout_s`` naming the last state seen."""
    deadline = time.monotonic() + timeout_s
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = client.get(url).json()
        if body.get("state") in states:
            return body
        time.sleep(0.25)
    raise AssertionError(f"{url} never reached {states}: {body}")
