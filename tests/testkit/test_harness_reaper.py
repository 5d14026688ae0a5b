"""The session-start reaper stops an orphaned Prefect harness server of this venv, and only that."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

from tests.conftest import pytest_sessionstart

_SLEEPER = "import time; time.sleep(120)"


def _orphan(*marks: str) -> psutil.Process:
    """A sleeping process of this venv's Python whose parent has already exited."""
    spawn = (
        "import subprocess, sys; "
        f"p = subprocess.Popen([sys.executable, '-c', {_SLEEPER!r}, *{list(marks)!r}], "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
        "print(p.pid)"
    )
    pid = int(subprocess.run([sys.executable, "-c", spawn], capture_output=True, text=True).stdout)
    return psutil.Process(pid)


def _gone(process: psutil.Process) -> bool:
    try:
        process.wait(timeout=10)
    except psutil.TimeoutExpired:
        return False
    return True


def test_an_orphaned_harness_server_is_stopped_and_other_orphans_are_not() -> None:
    harness = _orphan("--factory", "prefect.server.api.server:create_app")
    other = _orphan("--factory", "somebody.else:create_app")
    try:
        pytest_sessionstart(pytest.Session.__new__(pytest.Session))
        assert _gone(harness)
        time.sleep(0.2)
        assert other.is_running() and other.status() != psutil.STATUS_ZOMBIE
    finally:
        for process in (harness, other):
            if process.is_running():
                process.kill()
