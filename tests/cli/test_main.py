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
        [sys.executable, "-m", "cli.main", *args],
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


def test_retention_sweep_prints_each_run_it_deleted_and_dry_run_deletes_nothing(
    data_dir: Path,
) -> None:
    from storage.catalog import Catalog
    from storage.tenants import TenantStore
    from storage.videos import VideoStore
    from tests.fixtures.published import new_video, published_run

    catalog = Catalog.open(data_dir / "catalog.sqlite3")
    acme = TenantStore(catalog).create_tenant("acme").tenant_id
    video = new_video(catalog, acme)
    old = published_run(catalog, data_dir, acme, video, days_ago=8, size=2048)
    young = published_run(catalog, data_dir, acme, new_video(catalog, acme), days_ago=6)
    folder = Path(old.artifacts_path or "")

    preview = _ves(data_dir, "retention", "sweep", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    lines = preview.stdout.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"due {old.run_id} ")
    assert "2048 bytes would be deleted" in lines[0]
    assert lines[1].endswith("1 run(s) due, 2048 bytes; nothing was deleted")
    assert folder.is_dir() and VideoStore(catalog).get(acme, video).state == "succeeded"

    swept = _ves(data_dir, "retention", "sweep")
    assert swept.returncode == 0, swept.stderr
    lines = swept.stdout.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"expired {old.run_id} ")
    assert lines[0].endswith("2048 bytes deleted; the video is now expired")
    assert lines[1].endswith("1 run(s) expired, 2048 bytes deleted, 1 video(s) now expired")
    assert not folder.exists() and Path(young.artifacts_path or "").is_dir()
    assert VideoStore(catalog).get(acme, video).state == "expired"

    again = _ves(data_dir, "retention", "sweep").stdout.strip().splitlines()
    assert len(again) == 1 and again[0].endswith(
        "0 run(s) expired, 0 bytes deleted, 0 video(s) now expired"
    )
