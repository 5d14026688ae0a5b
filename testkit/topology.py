"""The scaled-out topology on one machine: what separate machines would run, as processes.

- one PostgreSQL server (two databases: the catalog, and Prefect's own),
- one S3-compatible server (moto's, over HTTP) holding uploads and artifacts,
- ``ves serve`` with ``VES_LOCAL_WORKER=false``: the API and the Prefect server (on PostgreSQL),
- N ``ves worker`` processes, each with its own data folder (its scratch) and Prefect home, and
  nothing shared with the API but the three URLs (Prefect API, catalog, store).

Used by the scaled-out end-to-end tests and by ``benchmarks/scale.py``. A worker may be pinned
to one core (``taskset``) to stand in for a machine of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from testkit.live_server import free_port
from testkit.service import wait_for_banner


@dataclass(frozen=True)
class Engines:
    """The shared servers every part of the topology points at."""

    catalog_url: str  # VES_DATABASE_URL (psycopg)
    prefect_database_url: str  # Prefect's server database (asyncpg)
    store_env: dict[str, str]  # VES_STORAGE_URL and the S3 endpoint and keys


@dataclass
class Topology:
    """The running processes and how to reach them."""

    root: Path
    api_url: str
    prefect_api_url: str
    env: dict[str, str]  # what every part shares
    service: subprocess.Popen[str]
    workers: list[subprocess.Popen[str]] = field(default_factory=list)
    clients: list[httpx.Client] = field(default_factory=list)

    def key(self, tenant: str, plan: str = "sandbox") -> str:
        """A new API key of ``tenant`` (created with ``plan`` if new), from the catalog."""
        cli = [sys.executable, "-m", "cli.main", "keys", "create", "--tenant", tenant]
        env = {**self.env, "VES_DATA_DIR": str(self.root / "api")}
        done = subprocess.run(
            [*cli, "--plan", plan], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip().splitlines()[-1]

    def client(self, tenant: str, plan: str = "sandbox") -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.key(tenant, plan)}"}
        self.clients.append(httpx.Client(base_url=self.api_url, headers=headers, timeout=60))
        return self.clients[-1]

    def add_worker(self, cpu: int | None = None) -> subprocess.Popen[str]:
        """One more ``ves worker`` with its own folders (pinned to core ``cpu`` if given)."""
        index = len(self.workers)
        data = self.root / f"worker-{index}"
        data.mkdir(parents=True, exist_ok=True)
        env = {
            **self.env,
            "VES_DATA_DIR": str(data),
            "PREFECT_API_URL": self.prefect_api_url,
            "PREFECT_HOME": str(data / "prefect"),
        }
        argv = [sys.executable, "-m", "cli.main", "worker"]
        if cpu is not None and shutil.which("taskset"):
            argv = ["taskset", "-c", str(cpu), *argv]
        with (data / "worker.out").open("a") as out:
            worker = subprocess.Popen(
                argv,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        self.workers.append(worker)
        return worker

    def kill_worker(self, worker: subprocess.Popen[str]) -> None:
        """SIGKILL the worker and every process it started (its flow runs): a machine lost."""
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        for process in [*self.workers, self.service]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.workers, self.service]:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        if self.service.stdout:
            self.service.stdout.close()


def shared_env(engines: Engines, **extra: str) -> dict[str, str]:
    """The settings every part of the topology shares (processing settings included)."""
    return {
        **os.environ,
        "VES_DATABASE_URL": engines.catalog_url,
        **engines.store_env,
        "VES_ALLOW_PRIVATE_SOURCES": "true",
        "VES_LOG_LEVEL": "warning",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        **extra,
    }


@contextmanager
def run_topology(
    root: Path, engines: Engines, workers: int = 2, pin: bool = False, **extra: str
) -> Iterator[Topology]:
    """Start the API + Prefect server, then ``workers`` workers; stop them all at exit.

    ``extra`` are more ``VES_*`` settings shared by every part (plans, heartbeat timeout...).
    """
    env = shared_env(engines, **extra)
    port, prefect_port = free_port(), free_port()
    api_env = {
        **env,
        "VES_DATA_DIR": str(root / "api"),
        "VES_PORT": str(port),
        "VES_PREFECT_PORT": str(prefect_port),
        "VES_PREFECT_DATABASE_URL": engines.prefect_database_url,
        "VES_LOCAL_WORKER": "false",
    }
    (root / "api").mkdir(parents=True, exist_ok=True)
    with (root / "api" / "api.log").open("a") as api_log:
        service = subprocess.Popen(
            [sys.executable, "-m", "cli.main", "serve"],
            env=api_env,
            stdout=subprocess.PIPE,
            stderr=api_log,
            text=True,
            start_new_session=True,
        )
    topology = Topology(
        root, f"http://127.0.0.1:{port}", f"http://127.0.0.1:{prefect_port}/api", env, service
    )
    try:
        wait_for_banner(service, timeout_s=180)
        for index in range(workers):
            topology.add_worker(cpu=index % (os.cpu_count() or 1) if pin else None)
        yield topology
    finally:
        topology.stop()


def plans_env(**sandbox: Any) -> str:
    """``VES_PLANS`` with the sandbox plan's limits changed."""
    return json.dumps({"sandbox": sandbox})
