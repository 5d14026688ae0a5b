"""The ``ves`` command line, run as a user runs it (a subprocess with VES_* in its environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from testkit.live_server import serve_app


def _ves(data_dir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VES_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, "-m", "cli.main", *args],
        env=env,
        input=stdin,
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
    from storage.catalog.database import Catalog
    from storage.catalog.tenants import TenantStore
    from storage.catalog.videos import VideoStore
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


GROUP_BY = "SELECT type, count(*) AS n FROM events GROUP BY 1 ORDER BY n DESC, type"


def test_sql_prints_a_group_by_over_every_published_run_as_an_aligned_table(
    data_dir: Path,
) -> None:
    from tests.fixtures.analyst_runs import build_tree

    build_tree(data_dir)  # two published runs and a half-written one, which must not count
    result = _ves(data_dir, "sql", GROUP_BY)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "type        n",
        "----------  -",
        "appear      3",
        "enter_zone  1",
        "text_seen   1",
        "(3 rows)",
    ]


def test_sql_prints_csv_and_json(data_dir: Path) -> None:
    from tests.fixtures.analyst_runs import build_tree

    build_tree(data_dir)
    query = "SELECT run_id, object_id, zones FROM objects ORDER BY object_id"
    csv = _ves(data_dir, "sql", query, "--format", "csv").stdout.splitlines()
    assert csv == ["run_id,object_id,zones", "run_a,obj_1,[]", "run_a,obj_2,[]", "run_b,obj_3,[]"]
    rows = json.loads(_ves(data_dir, "sql", GROUP_BY, "--format", "json").stdout)
    assert rows == [
        {"type": "appear", "n": 3},
        {"type": "enter_zone", "n": 1},
        {"type": "text_seen", "n": 1},
    ]


def test_sql_without_a_query_reads_statements_up_to_their_semicolon(data_dir: Path) -> None:
    from tests.fixtures.analyst_runs import build_tree

    build_tree(data_dir)
    script = ".tables\nSELECT count(*) AS events\n  FROM events;\nSELEC 1;\nSELECT 42 AS answer\n"
    result = _ves(data_dir, "sql", stdin=script)
    assert result.returncode == 0, result.stderr
    views = ["detections", "events", "evidence", "frames", "hits", "objects", "relations", "runs"]
    views += ["timeline", "tracks", "zones"]
    results = ["events", "------", "     5", "(1 row)", "answer", "------", "    42", "(1 row)"]
    assert result.stdout.splitlines() == views + results  # the last statement needs no ';'
    assert result.stderr.strip().startswith("error: Parser Error: syntax error")


def test_sql_bad_sql_is_one_line_and_exit_code_2(data_dir: Path) -> None:
    result = _ves(data_dir, "sql", "SELECT * FROM nowhere")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: Catalog Error: Table with name nowhere does not exist!"
    ]
    assert result.stdout == ""


def test_audit_verify_passes_an_untouched_chain_and_names_a_tampered_record(
    data_dir: Path,
) -> None:
    from storage.catalog.audit import AuditEntry, AuditLog
    from storage.catalog.database import Catalog
    from storage.catalog.tenants import TenantStore

    catalog = Catalog.open(data_dir / "catalog.sqlite3")
    tenant = TenantStore(catalog).create_tenant("acme")
    for n in range(4):
        AuditLog(catalog).append(AuditEntry(tenant.tenant_id, "key_1", "GET /x", 200, f"vid_{n}"))
    intact = _ves(data_dir, "audit", "verify", "--tenant", "acme")
    assert intact.returncode == 0, intact.stderr
    assert f"tenant {tenant.tenant_id}: 4 record(s) checked from genesis, chain intact" in (
        intact.stdout
    )
    with catalog.write() as conn:
        conn.exec_driver_sql("UPDATE audit SET video_id = 'vid_9' WHERE seq = 2")
    broken = _ves(data_dir, "audit", "verify")
    assert broken.returncode == 1
    assert "1 record(s) checked from genesis, BROKEN at seq 2: its fields do not match" in (
        broken.stdout
    )
    assert broken.stdout.splitlines()[-1] == "1 chain(s) checked, 1 broken"
