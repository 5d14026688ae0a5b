"""The retention sweep's core on runs published without processing (folders of known size):
what it deletes, what it refuses to touch, and how it finishes a sweep that stopped half-way."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.artifacts.blobs import open_blob_store
from storage.catalog.audit import AuditEntry, AuditLog
from storage.catalog.database import Catalog
from storage.catalog.exports import Bundle, ExportStore, bundle_key
from storage.catalog.records import Run
from storage.catalog.retention import RetentionStore
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.usage import ALL, UsageStore
from storage.catalog.videos import VideoStore
from tasks.retention import TRASH, sweep_retention
from tests.fixtures.published import new_video, published_run
from ves.clock import from_rfc3339
from ves.settings import Settings


@pytest.fixture
def acme(tenants: TenantStore) -> str:
    return tenants.create_tenant("acme").tenant_id


def storage_bytes(catalog: Catalog, tenant_id: str) -> float:
    return UsageStore(catalog).value(tenant_id, ALL, "storage_bytes")


def point_run_at(catalog: Catalog, run_id: str, path: Path) -> None:
    with catalog.write() as conn:
        conn.execute(
            text("UPDATE runs SET artifacts_path = :path WHERE run_id = :run_id"),
            {"path": str(path), "run_id": run_id},
        )


def test_the_sweep_deletes_due_folders_only_and_says_so(
    settings: Settings, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    video = new_video(catalog, acme)
    old = published_run(catalog, data_dir, acme, video, days_ago=8, size=1500)
    young = published_run(catalog, data_dir, acme, new_video(catalog, acme), days_ago=6)

    report = sweep_retention(settings, catalog)

    assert [s.run.run_id for s in report.swept] == [old.run_id]
    assert report.swept[0].folder_removed and report.freed_bytes == 1500
    assert not Path(old.artifacts_path or "").exists()
    assert Path(young.artifacts_path or "").is_dir()
    assert storage_bytes(catalog, acme) == 1000  # the young run's bytes only
    assert VideoStore(catalog).get(acme, video).state == "expired"
    lines = report.lines()
    assert lines[0].startswith(f"expired {old.run_id} (tenant {acme}, video {video}):")
    assert lines[0].endswith("1500 bytes deleted; the video is now expired")
    assert lines[-1].endswith("1 run(s) expired, 1500 bytes deleted, 1 video(s) now expired")
    assert sweep_retention(settings, catalog).swept == ()  # nothing is expired twice


def test_a_dry_run_reports_what_is_due_and_changes_nothing(
    settings: Settings, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    video = new_video(catalog, acme)
    old = published_run(catalog, data_dir, acme, video, days_ago=8, size=1500)

    report = sweep_retention(settings, catalog, dry_run=True)

    assert [s.run.run_id for s in report.swept] == [old.run_id]
    assert report.lines()[0].endswith("1500 bytes would be deleted")
    assert report.lines()[-1].endswith("1 run(s) due, 1500 bytes; nothing was deleted")
    assert Path(old.artifacts_path or "").is_dir()
    assert RunStore(catalog).get(old.run_id).expired_at is None
    assert storage_bytes(catalog, acme) == 1500
    assert VideoStore(catalog).get(acme, video).state == "succeeded"
    assert _last_sweep(catalog) is None  # a dry run is no sweep


def _last_sweep(catalog: Catalog) -> str | None:
    with catalog.read() as conn:
        row = conn.execute(text("SELECT at FROM service_marks WHERE name = 'retention_sweep'"))
        found = row.first()
    return str(found[0]) if found else None


def test_each_completed_sweep_is_marked_for_the_metrics(
    settings: Settings, catalog: Catalog
) -> None:
    assert _last_sweep(catalog) is None
    sweep_retention(settings, catalog)
    first = _last_sweep(catalog)
    assert first is not None and abs(from_rfc3339(first).timestamp() - time.time()) < 60
    time.sleep(0.01)
    sweep_retention(settings, catalog)
    assert (_last_sweep(catalog) or "") > first  # one mark, moved forward


def test_a_folder_already_gone_is_fine(
    settings: Settings, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    old = published_run(catalog, data_dir, acme, new_video(catalog, acme), days_ago=8)
    shutil.rmtree(old.artifacts_path or "")

    (swept,) = sweep_retention(settings, catalog).swept

    assert swept.run.run_id == old.run_id and not swept.folder_removed
    assert RunStore(catalog).get(old.run_id).expired_at is not None
    assert storage_bytes(catalog, acme) == 0


@pytest.mark.parametrize("where", ["outside", "tenant folder", "symlink out"])
def test_a_run_recorded_anywhere_but_its_own_folder_is_refused_and_left_untouched(
    where: str, settings: Settings, catalog: Catalog, data_dir: Path, tmp_path: Path, acme: str
) -> None:
    old = published_run(catalog, data_dir, acme, new_video(catalog, acme), days_ago=8)
    own = Path(old.artifacts_path or "")
    precious = tmp_path / "elsewhere" / own.name
    precious.mkdir(parents=True)
    (precious / "keep.txt").write_text("mine")
    if where == "outside":
        point_run_at(catalog, old.run_id, precious)
    elif where == "tenant folder":
        point_run_at(catalog, old.run_id, own.parent.parent)
    else:
        shutil.rmtree(own)
        own.symlink_to(precious, target_is_directory=True)

    report = sweep_retention(settings, catalog)

    assert report.swept == () and [r.run_id for r in report.refused] == [old.run_id]
    assert report.lines()[0].startswith(f"refused {old.run_id}: ")
    assert (precious / "keep.txt").read_text() == "mine"
    assert own.parent.parent.is_dir()
    assert RunStore(catalog).get(old.run_id).expired_at is None
    assert storage_bytes(catalog, acme) == 1000


def test_a_sweep_stopped_between_catalog_and_folder_is_finished_by_the_next(
    settings: Settings, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    old = published_run(catalog, data_dir, acme, new_video(catalog, acme), days_ago=8)
    # The catalog step of a sweep that then died: the run is expired, its folder is still there.
    assert RetentionStore(catalog).expire(old.run_id, "2030-01-01T00:00:00.000Z") is not None
    half_deleted = settings.artifacts_dir / TRASH / "run=run_crashed"
    (half_deleted / "thumbs").mkdir(parents=True)
    assert RunStore(catalog).latest_succeeded(acme, old.video_id) is None  # never served again

    report = sweep_retention(settings, catalog)

    assert report.swept == () and report.leftovers == (old.run_id,)
    assert not Path(old.artifacts_path or "").exists()
    assert not half_deleted.exists()
    assert storage_bytes(catalog, acme) == 0  # given back once, by the catalog step


def test_audit_records_have_their_own_retention_and_the_chain_still_verifies(
    settings: Settings, catalog: Catalog, data_dir: Path, acme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records older than VES_AUDIT_RETENTION_DAYS go from the start of the chain, however long
    the plan keeps artifacts; expiring a run is recorded as the service's own act."""
    audit = AuditLog(catalog)
    video = new_video(catalog, acme)
    monkeypatch.setattr("storage.catalog.audit.now_rfc3339", lambda: "2020-01-01T00:00:00.000Z")
    old = [audit.append(AuditEntry(acme, "key_1", "GET /x", 200, video)) for _ in range(3)]
    monkeypatch.undo()
    kept = audit.append(AuditEntry(acme, "key_1", "GET /x", 200, video))
    run = published_run(catalog, data_dir, acme, video, days_ago=8)

    report = sweep_retention(settings.model_copy(update={"audit_retention_days": 30}), catalog)

    assert report.audit_pruned == 3 and report.as_dict()["audit_pruned"] == 3
    assert "3 audit record(s) past retention deleted" in report.summary()
    (chain,) = audit.verify(acme)
    assert (chain.ok, chain.start_seq, chain.checked) == (True, old[-1].seq, 2)
    records = audit.video_records(acme, video)
    assert [r["seq"] for r in records] == [kept.seq, kept.seq + 1]
    assert (records[-1]["key_id"], records[-1]["action"]) == ("system", "retention:expire_run")
    assert records[-1]["ids"] == {"run_id": run.run_id}


def _kept_export(settings: Settings, catalog: Catalog, run: Run, size: int) -> tuple[str, Path]:
    """A succeeded export of ``run`` whose bundle (``size`` bytes) is in the store."""
    exports = ExportStore(catalog)
    export = exports.create(run.tenant_id, run.video_id, run.run_id, None, {})
    assert exports.start(export.export_id)
    key = bundle_key(run.tenant_id, run.video_id, export.export_id)
    store = open_blob_store(settings)
    store.put_bytes(b"z" * size, key)
    assert exports.succeed(export.export_id, Bundle(key, size, "0" * 64, "k1"))
    path = store.local_path(key)
    assert path is not None and path.is_file()
    return export.export_id, path


def test_exports_count_in_storage_and_expire_with_their_run(
    settings: Settings, catalog: Catalog, data_dir: Path, acme: str
) -> None:
    """A bundle's bytes are held until its run's artifacts go; then both go in one sweep, and
    one sweep stopped between catalog and store is finished by the next."""
    old = published_run(catalog, data_dir, acme, new_video(catalog, acme), days_ago=8, size=1500)
    young = published_run(catalog, data_dir, acme, new_video(catalog, acme), days_ago=6)
    old_export, old_zip = _kept_export(settings, catalog, old, 700)
    young_export, young_zip = _kept_export(settings, catalog, young, 300)
    assert storage_bytes(catalog, acme) == 1500 + 1000 + 700 + 300

    report = sweep_retention(settings, catalog)

    assert report.freed_bytes == 1500 + 700
    assert storage_bytes(catalog, acme) == 1000 + 300
    assert not old_zip.exists() and not old_zip.parent.exists() and young_zip.is_file()
    exports = ExportStore(catalog)
    assert exports.get(old_export).expired_at is not None
    assert exports.get(young_export).expired_at is None
    # A sweep that died after the catalog step leaves a bundle: the next one removes it.
    assert RetentionStore(catalog).expire(young.run_id, "2030-01-01T00:00:00.000Z") is not None
    assert storage_bytes(catalog, acme) == 0
    sweep_retention(settings, catalog)
    assert not young_zip.exists()
