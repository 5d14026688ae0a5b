"""The warm start: flow runs forked from a starter carry the launcher's streams, environment,
exit code and signals, and die with their launcher. (Whole runs through it: tests/test_e2e.py.)"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.warm_start import SOCKET_ENV

LAUNCH = [sys.executable, "-m", "flows.warm_start"]


@pytest.fixture
def starter() -> Iterator[tuple[subprocess.Popen[str], dict[str, str]]]:
    env = {**os.environ, SOCKET_ENV: f"@ves-test-{secrets.token_hex(4)}"}
    process = subprocess.Popen(
        [*LAUNCH, "--serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    assert "warm start on" in process.stdout.readline()
    yield process, env
    process.kill()
    process.wait(timeout=10)
    process.stdout.close()


@pytest.fixture
def silent_api() -> Iterator[str]:
    """A Prefect API that accepts connections and never answers: a run that waits for it."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/api"
    server.close()
    for conn in held:
        conn.close()


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def wait_for(check: object, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if callable(check) and check():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.mark.parametrize("warm", [True, False])
def test_a_run_gets_the_launchers_environment_streams_and_exit_code(
    starter: tuple[subprocess.Popen[str], dict[str, str]], warm: bool
) -> None:
    """``prefect.engine`` as ``__main__`` refuses a malformed flow run id from the launcher's
    environment, on the launcher's stderr, with exit code 1: forked (warm) or exec'd (cold)."""
    env = {**starter[1], "PREFECT__FLOW_RUN_ID": "not-a-uuid"}
    if not warm:
        env[SOCKET_ENV] = "@nobody-listens-here"
    done = subprocess.run(LAUNCH, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "Invalid flow run id" in done.stderr
    assert bool(children_of(starter[0].pid)) is False  # reaped, no zombie left


SYSTEM_PYTHON = Path("/usr/bin/python3")
INTRUDER = """
import json, socket, struct, sys
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect("\\0" + sys.argv[1][1:])
body = json.dumps({"argv": [], "cwd": "/tmp", "env": {}}).encode()
try:
    socket.send_fds(conn, [struct.pack("!I", len(body)) + body], [0, 1, 2])
    print("served" if conn.recv(64) else "refused")
except OSError:
    print("refused")
"""


@pytest.mark.skipif(
    os.getuid() != 0 or not SYSTEM_PYTHON.exists(), reason="needs root and Debian's python3"
)
def test_a_launcher_of_another_user_is_turned_away(
    starter: tuple[subprocess.Popen[str], dict[str, str]],
) -> None:
    """The abstract socket has no file permissions: the starter checks the peer's uid itself.
    (Debian's python3 plays the other user: the project's interpreter is root's alone.)"""
    done = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", INTRUDER, starter[1][SOCKET_ENV]],
        capture_output=True,
        text=True,
        timeout=30,
        user=65534,
        cwd="/tmp",
    )
    assert done.stdout.strip() == "refused", done.stderr  # hung up on, no run pid
    assert starter[0].stdout is not None
    assert "turned away" in starter[0].stdout.readline()
    assert children_of(starter[0].pid) == []


def test_signals_reach_the_run_and_a_killed_launcher_takes_its_run_along(
    starter: tuple[subprocess.Popen[str], dict[str, str]], silent_api: str
) -> None:
    env = {
        **starter[1],
        "PREFECT__FLOW_RUN_ID": "6f1e8a34-5c1b-4a53-9f1e-2b3c4d5e6f70",
        "PREFECT_API_URL": silent_api,
    }
    for stop in (signal.SIGTERM, signal.SIGKILL):
        launcher = subprocess.Popen(LAUNCH, env=env, stderr=subprocess.DEVNULL)
        wait_for(lambda: children_of(starter[0].pid))
        (run,) = children_of(starter[0].pid)
        launcher.send_signal(stop)
        launcher.wait(timeout=30)
        wait_for(
            lambda run=run: (
                not Path(f"/proc/{run}").exists() or run not in children_of(starter[0].pid)
            )
        )
        if stop == signal.SIGTERM:
            assert launcher.returncode != 0


def test_a_run_killed_outright_kills_its_launcher_alike_without_an_error_of_its_own(
    starter: tuple[subprocess.Popen[str], dict[str, str]], silent_api: str
) -> None:
    """SIGKILL of the run (the kill -9 trials' "flow" target): the launcher dies of SIGKILL
    too, so the worker reports the same as for a cold run. Setting SIGKILL's handler, as for the
    other signals, raised OSError and the launcher exited 1 with a traceback."""
    env = {
        **starter[1],
        "PREFECT__FLOW_RUN_ID": "6f1e8a34-5c1b-4a53-9f1e-2b3c4d5e6f71",
        "PREFECT_API_URL": silent_api,
    }
    launcher = subprocess.Popen(LAUNCH, env=env, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: children_of(starter[0].pid))
    (run,) = children_of(starter[0].pid)
    os.kill(run, signal.SIGKILL)
    _, errors = launcher.communicate(timeout=30)
    assert launcher.returncode == -signal.SIGKILL
    assert "Traceback" not in errors
