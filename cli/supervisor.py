"""``ves serve``: the whole service on one machine, as child processes of one supervisor.

It starts a local Prefect server (its UI is where data engineers watch runs; its database lives
under the data folder), applies ``prefect.yaml`` (the process work pool, the ``process-video``
deployment and the hourly ``retention-sweep``), starts a worker of that pool, then the API under
uvicorn, prints where everything is, and stops them all together on Ctrl-C or SIGTERM. If one
child dies, the others are stopped too and the exit code is non-zero, so a process manager above
can restart the service as a whole.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from flows.orchestrator import WORK_POOL
from flows.warm_start import READY_LINE, SOCKET_ENV
from ves.settings import Settings

_START_TIMEOUT_S = 120.0
PROJECT_DIR = Path(__file__).resolve().parents[1]  # cli/ sits in the project folder

_WORKER_SETTLE_S = 3.0
_PR_SET_PDEATHSIG = 1


@dataclass
class Child:
    """A supervised process and the URL that tells it is up."""

    name: str
    argv: list[str]
    health_url: str | None
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    settle_s: float = _WORKER_SETTLE_S  # without a health URL: alive after this long is up
    ready_line: str | None = None  # or: up once its log holds this line


def prefect_env(settings: Settings) -> dict[str, str]:
    """Environment pointing Prefect at the service's own local server and folders."""
    home = (settings.data_dir / "prefect").resolve()
    database = settings.prefect_database_url or f"sqlite+aiosqlite:///{home / 'prefect.db'}"
    return {
        "PREFECT_HOME": str(home),
        "PREFECT_API_URL": f"http://127.0.0.1:{settings.prefect_port}/api",
        "PREFECT_SERVER_API_HOST": settings.prefect_host,
        "PREFECT_SERVER_API_PORT": str(settings.prefect_port),
        "PREFECT_API_DATABASE_CONNECTION_URL": database,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_ENABLED": "true",
        "DO_NOT_TRACK": "1",
    }


def worker_child(settings: Settings, env: dict[str, str]) -> Child:
    """A worker of the process pool; ``env`` says which Prefect server it polls.

    It asks for work every half second (Prefect's default is 10 s): a run executed, or waiting
    in line for a slot, is picked up within half a second, at the price of two small queries a
    second per worker (benchmarks/latency.py, execute -> Prefect ``PENDING`` p50: 2.2 s polling
    every 2 s, 1.1 s every second, 0.8 s every half second). ``PREFECT_WORKER_QUERY_SECONDS``
    sets it, e.g. for many workers against one Prefect server.
    """
    poll = os.environ.get("PREFECT_WORKER_QUERY_SECONDS", "0.5")
    return Child(
        "prefect-worker",
        [
            str(Path(sys.executable).parent / "prefect"),
            "worker",
            "start",
            "--pool",
            WORK_POOL,
            "--type",
            "process",
            "--limit",
            str(max(1, settings.worker_limit)),
            "--name",
            f"ves-worker-{socket.gethostname()}-{os.getpid()}",
        ],
        None,
        {**env, "VES_PROJECT_DIR": str(PROJECT_DIR), "PREFECT_WORKER_QUERY_SECONDS": poll},
    )


def worker_children(settings: Settings, env: dict[str, str]) -> list[Child]:
    """The worker, and before it the warm starter its flow runs fork from (``warm_start``).

    Both get the same environment (the forked runs see the settings the starter imported with)
    and this virtualenv's ``bin`` first on ``PATH``: the deployment's command is
    ``python -m flows.warm_start``. The supervisor waits for the starter's ready line (its
    imports take seconds), so that the first runs are warm and those imports do not compete with
    the first requests; a run launched before it listens would simply start cold.
    """
    bin_dir = str(Path(sys.executable).parent)
    shared = {**env, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    if not settings.warm_start:
        return [worker_child(settings, shared)]
    shared[SOCKET_ENV] = f"@ves-warm-{os.getpid()}-{secrets.token_hex(4)}"
    starter = Child(
        "warm-start",
        [sys.executable, "-m", "flows.warm_start", "--serve"],
        None,
        {**shared, "VES_PROJECT_DIR": str(PROJECT_DIR)},
        ready_line=READY_LINE,
    )
    return [starter, worker_child(settings, shared)]


def _children(settings: Settings) -> list[Child]:
    prefect = Child(
        "prefect-server",
        [
            sys.executable,
            "-m",
            "cli.prefect_server",  # `prefect server start`, SQLite writes taking their lock first
            "start",
            "--host",
            settings.prefect_host,
            "--port",
            str(settings.prefect_port),
        ],
        f"http://127.0.0.1:{settings.prefect_port}/api/health",
        prefect_env(settings),
    )
    workers = worker_children(settings, prefect_env(settings))
    api = Child(
        "api",
        [
            sys.executable,
            "-m",
            "api.server",  # uvicorn with a deadline for request headers (VES_HEADER_TIMEOUT_S)
            "--host",
            settings.host,
            "--port",
            str(settings.port),
            "--log-level",
            settings.log_level,
        ],
        f"{settings.base_url}/healthz",
        prefect_env(settings),
    )
    return [prefect, *workers, api] if settings.local_worker else [prefect, api]


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex((host, port)) != 0


def _wait_healthy(child: Child) -> None:
    if child.health_url is None:  # no probe: alive after a moment is as good as it gets
        time.sleep(child.settle_s)
        assert child.process is not None
        if child.process.poll() is not None:
            raise RuntimeError(f"{child.name} exited with code {child.process.returncode}")
        return
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert child.process is not None
        if child.process.poll() is not None:
            raise RuntimeError(f"{child.name} exited with code {child.process.returncode}")
        try:
            with urllib.request.urlopen(child.health_url, timeout=2) as response:  # noqa: S310
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{child.name} did not become healthy in {_START_TIMEOUT_S:.0f} s")


def _die_with_parent() -> None:
    """Runs in the child before exec: ask Linux to SIGKILL it when the supervisor dies.

    Without this, a supervisor killed with SIGKILL would leave the Prefect server and the API
    running, holding their ports, and the next ``make run`` would fail. SIGKILL, not SIGTERM:
    with the supervisor gone nothing orders the stop, and a worker told to stop gracefully while
    its server stops too retried that server for over 30 s in a loaded CI run. A supervisor
    stopped normally still stops its children gracefully (``_stop``).
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # not Linux: Ctrl-C and SIGTERM still stop the children


def apply_prefect_project(settings: Settings) -> None:
    """Create the work pool and the deployments of ``prefect.yaml`` on the local server."""
    prefect = str(Path(sys.executable).parent / "prefect")
    env = {**os.environ, **prefect_env(settings), "VES_PROJECT_DIR": str(PROJECT_DIR)}
    steps = (
        [prefect, "work-pool", "create", WORK_POOL, "--type", "process", "--overwrite"],
        [prefect, "--no-prompt", "deploy", "--all", "--prefect-file", "prefect.yaml"],
    )
    for argv in steps:
        done = subprocess.run(  # noqa: S603
            argv, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=180
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[1:3])} failed:\n{done.stdout}{done.stderr}")


def _start(child: Child, logs: Path) -> None:
    """Start a child; Prefect's own processes log to files, the API to this terminal."""
    env = {**os.environ, **child.env}
    output = None
    if child.name != "api":
        logs.mkdir(parents=True, exist_ok=True)
        output = (logs / f"{child.name}.log").open("ab")
    try:
        child.process = subprocess.Popen(  # noqa: S603
            child.argv,
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            stdout=output,
            stderr=subprocess.STDOUT if output else None,
        )
    finally:
        if output:
            output.close()  # the child holds its own descriptor
    if child.ready_line is not None:
        _wait_for_line(child, logs / f"{child.name}.log", child.ready_line)
    else:
        _wait_healthy(child)


def _wait_for_line(child: Child, log: Path, line: str) -> None:
    """Wait until ``child`` has written ``line`` to its log (it exiting first is an error)."""
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert child.process is not None
        if child.process.poll() is not None:
            raise RuntimeError(f"{child.name} exited with code {child.process.returncode}")
        if log.exists() and line in log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{child.name} was not ready in {_START_TIMEOUT_S:.0f} s")


def _stop(children: list[Child]) -> None:
    for child in reversed(children):
        if child.process and child.process.poll() is None:
            os.killpg(child.process.pid, signal.SIGTERM)
    for child in reversed(children):
        if child.process:
            try:
                child.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(child.process.pid, signal.SIGKILL)
                child.process.wait(timeout=10)  # gone before the supervisor says it stopped


def _banner(settings: Settings) -> str:
    base = settings.base_url
    return "\n".join(
        [
            "",
            "Video Evidence Service is running.",
            f"  API          {base}",
            f"  API docs     {base}/docs",
            f"  Dashboard    {base}/dashboard",
            f"  MCP          {base}/mcp (streamable HTTP, same Bearer key)",
            f"  Prefect UI   http://127.0.0.1:{settings.prefect_port}",
            f"  Data         {settings.data_dir.resolve()}",
            f"  Logs         {(settings.data_dir / 'logs').resolve()} (Prefect server and worker)",
            "Get an API key:  .venv/bin/ves keys create --tenant my-team",
            f"Or a demo workspace:  curl -X POST {base}/api/public/onboarding/demo-video",
            *_detector_warning(settings),
            "Stop with Ctrl-C.",
            "",
        ]
    )


def _detector_warning(settings: Settings) -> list[str]:
    """A line saying the person network is unusable (runs then fall back to motion only)."""
    from flows.readiness import probe_person_model
    from ves.errors import DetectorUnavailable

    try:
        probe_person_model(settings)
    except DetectorUnavailable as exc:
        return [f"WARNING: {exc.detail}; runs fall back to motion only (GET /readyz says so)."]
    return []


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM stops the service the same way Ctrl-C does."""
    raise KeyboardInterrupt


def serve(settings: Settings) -> int:
    """Start every child, wait until one exits or a signal arrives, then stop them all."""
    for host, port in ((settings.host, settings.port), ("127.0.0.1", settings.prefect_port)):
        if not _port_free(host if host not in {"0.0.0.0", "::"} else "127.0.0.1", port):  # noqa: S104
            print(f"error: port {port} is in use; set VES_PORT / VES_PREFECT_PORT", file=sys.stderr)
            return 1
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return _supervise(settings, _children(settings), _banner(settings))


def _supervise(settings: Settings, children: list[Child], banner: str) -> int:
    """Start ``children`` in order, print ``banner``, and watch them until one exits or a signal
    arrives; then stop them all."""
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        for child in children:
            _start(child, settings.data_dir / "logs")
            if child.name == "prefect-server":
                apply_prefect_project(settings)
        print(banner, flush=True)
        return _watch(children)
    except KeyboardInterrupt:
        return 0
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        _stop(children)


def _watch(children: list[Child]) -> int:
    while True:
        for child in children:
            assert child.process is not None
            if child.process.poll() is not None:
                print(f"error: {child.name} exited ({child.process.returncode})", file=sys.stderr)
                return 1
        time.sleep(1.0)


def work(settings: Settings) -> int:
    """``ves worker``: one worker of the pool against the Prefect server in ``PREFECT_API_URL``.

    A worker on another machine needs only ``PREFECT_API_URL``, ``VES_DATABASE_URL`` and
    ``VES_STORAGE_URL`` (plus the S3 keys): runs read the catalog and the object store, and
    keep nothing but scratch on this machine.
    """
    if not os.environ.get("PREFECT_API_URL"):
        print("error: set PREFECT_API_URL to the Prefect server's API", file=sys.stderr)
        return 2
    home = str((settings.data_dir / "prefect").resolve())  # this worker's own, never shared
    env = {"PREFECT_API_URL": os.environ["PREFECT_API_URL"], "PREFECT_HOME": home}
    banner = f"worker of {WORK_POOL} polling {os.environ['PREFECT_API_URL']}"
    return _supervise(settings, worker_children(settings, env), banner)
