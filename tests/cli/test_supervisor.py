"""``ves serve`` as ``make run`` starts it: Prefect server and API up, all gone on stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from testkit.live_server import free_port
from testkit.service import alive, wait_for_banner

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def _children_of(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line
            )
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], dict[str, int], str]]:
    ports = {"api": free_port(), "prefect": free_port()}
    env = {
        **os.environ,
        "VES_DATA_DIR": str(tmp_path / "data"),
        "VES_PORT": str(ports["api"]),
        "VES_PREFECT_PORT": str(ports["prefect"]),
        "VES_LOG_LEVEL": "warning",
    }
    errors = tmp_path / "serve.stderr"
    with errors.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "cli.main", "serve"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        try:
            banner = wait_for_banner(process)
        except AssertionError as exc:  # say why it never came (a port taken, a child that died)
            raise AssertionError(f"{exc}\nstderr:\n{errors.read_text()[-3000:]}") from None
        yield process, ports, banner
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        if process.stdout:
            process.stdout.close()


def test_serve_starts_everything_prints_where_and_stops_cleanly(
    service: tuple[subprocess.Popen[str], dict[str, int], str],
) -> None:
    process, ports, banner = service
    assert f"http://127.0.0.1:{ports['api']}/docs" in banner
    assert f"http://127.0.0.1:{ports['prefect']}" in banner
    assert f"http://127.0.0.1:{ports['api']}/dashboard" in banner
    assert "ves keys create --tenant" in banner
    assert httpx.get(f"http://127.0.0.1:{ports['api']}/readyz").status_code == 200
    assert httpx.get(f"http://127.0.0.1:{ports['prefect']}/api/health").json() is True
    children = _children_of(process.pid)
    assert len(children) == 4  # Prefect server, warm starter, Prefect worker, API
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=40) == 0
    assert not any(alive(pid) for pid in children)


def test_children_die_with_a_killed_supervisor(
    service: tuple[subprocess.Popen[str], dict[str, int], str],
) -> None:
    process, _, _ = service
    children = _children_of(process.pid)
    process.kill()
    process.wait(timeout=10)
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(pid) for pid in children)
