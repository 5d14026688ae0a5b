"""The ``ves`` command line, run as a user runs it (a subprocess with VES_* in its environment)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from tests.fixtures.live_server import serve_app


def _ves(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VES_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, "-m", "ves.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_keys_create_prints_a_working_key_last_and_revoke_stops_it(data_dir: Path) -> None:
    from api.app import create_app
    from ves.settings import Settings

    created = _ves(data_dir, "keys", "create", "--tenant", "acme")
    assert created.returncode == 0, created.stderr
    lines = created.stdout.strip().splitlines()
    key = lines[-1]
    assert key.startswith("ves_") and " " not in key
    key_id = next(w for line in lines for w in line.split() if w.startswith("key_"))
    with serve_app(create_app(Settings(data_dir=data_dir))) as url:
        headers = {"Authorization": f"Bearer {key}"}
        assert httpx.get(f"{url}/api/product/videos", headers=headers).status_code == 200
        revoked = _ves(data_dir, "keys", "revoke", key_id)
        assert revoked.returncode == 0, revoked.stderr
        assert httpx.get(f"{url}/api/product/videos", headers=headers).status_code == 401


def test_a_second_key_joins_the_same_tenant_and_tenants_list_shows_it(data_dir: Path) -> None:
    _ves(data_dir, "keys", "create", "--tenant", "acme")
    _ves(data_dir, "keys", "create", "--tenant", "acme")
    _ves(data_dir, "keys", "create", "--tenant", "globex")
    listed = _ves(data_dir, "tenants", "list").stdout.splitlines()
    assert [line.split("\t")[1] for line in listed] == ["acme", "globex"]
    keys = _ves(data_dir, "keys", "list", "--tenant", "acme").stdout.splitlines()
    assert len(keys) == 2 and all("active" in line for line in keys)


def test_errors_are_one_line_and_exit_nonzero(data_dir: Path) -> None:
    result = _ves(data_dir, "keys", "revoke", "key_doesnotexist")
    assert result.returncode == 1
    assert result.stderr.strip() == "error: no API key key_doesnotexist"
