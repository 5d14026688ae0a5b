"""Retention: delete the published artifacts of runs past their plan's retention.

Not a pipeline stage but the one task of the ``retention-sweep`` flow, with the same shape: a
pure core, ``sweep_retention``, that tests and ``ves retention sweep`` call directly, and a thin
``@task`` that logs. Which runs are due, and what expiring one changes in the catalog, is
``storage/catalog/retention.py``; this module does the filesystem side.

Order, per run: the catalog first (run ``expired_at``, the tenant's ``storage_bytes``, the
video's state, in one transaction), then the folder. A crash between the two leaves files that
nothing serves any more (``RunStore.latest_succeeded`` skips expired runs, an expired video
answers 409), and the next sweep removes them: it checks the folder of every expired run. The
other order would, for a while or for ever after a crash, leave the catalog offering a live run
whose files are gone or half gone, and the tenant billed for bytes no longer kept.

Deletion goes through the blob store (``storage/artifacts/blobs.py``): on the local store a
run's folder
is first renamed into ``<artifacts>/.expired/`` (one rename) and deleted there, so like publishing
the run leaves the Hive tree at once; on an object store its prefix is deleted (the catalog
stopped offering it before). Only a run's own key (``artifacts/tenant=<t>/video=<v>/run=<r>``,
or for runs published before the store, that folder under the data folder, symlinks resolved) is
ever deleted; a run recorded anywhere else is refused and left as it is, not even marked.

Each sweep also deletes *orphans*: run prefixes without a manifest older than
``settings.orphan_after_s``, left by runs that died while uploading and whose clean-up failed.
Readers never serve them (no manifest); the sweep only gives the space back.

Audit records have their own retention (``settings.audit_retention_days``, whatever the plan
keeps artifacts): each sweep deletes older ones from the start of each tenant's chain and keeps
a checkpoint (``AuditLog.prune``). Expiring a run is itself recorded in its tenant's chain, as
the service's own act (key ``system``, action ``retention:expire_run``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts.blobs import TRASH, BlobStore, open_blob_store
from storage.artifacts.layout import ARTIFACTS_TOP, MANIFEST, run_key
from storage.catalog.audit import SYSTEM_KEY, AuditEntry, AuditLog
from storage.catalog.database import Catalog
from storage.catalog.exports import bundle_folder
from storage.catalog.retention import DueRun, RetentionStore, expired_bundles, mark_swept
from ves.clock import now_rfc3339, to_rfc3339, utc_now
from ves.settings import Settings

__all__ = ["TRASH", "SweepReport", "retention_task", "sweep_retention"]


@dataclass(frozen=True)
class SweptRun:
    """A due run: expired and its folder deleted (or, in a dry run, what would be)."""

    run: DueRun
    freed_bytes: int
    video_expired: bool = False
    folder_removed: bool = False  # False: it was already gone, or a dry run


@dataclass(frozen=True)
class RefusedRun:
    """A due run left untouched: its recorded folder is not its own under the artifacts root."""

    run_id: str
    artifacts_path: str


@dataclass(frozen=True)
class SweepReport:
    """What one sweep did (or, with ``dry_run``, would do)."""

    now: str
    dry_run: bool
    swept: tuple[SweptRun, ...] = ()
    refused: tuple[RefusedRun, ...] = ()
    leftovers: tuple[str, ...] = ()  # runs expired earlier whose folder remained
    orphans: tuple[str, ...] = ()  # prefixes of runs that never finished publishing
    audit_pruned: int = 0  # audit records past their retention, deleted

    @property
    def freed_bytes(self) -> int:
        return sum(s.freed_bytes for s in self.swept)

    def lines(self) -> list[str]:
        """One line per run, then a summary (what ``ves retention sweep`` prints)."""
        return [
            *(_line(s, self.dry_run) for s in self.swept),
            *(f"removed the leftover folder of {run} (expired before)" for run in self.leftovers),
            *(f"removed {key}: never published (no manifest)" for key in self.orphans),
            *(
                f"refused {r.run_id}: {r.artifacts_path} is not its folder under the artifacts"
                " root; left untouched"
                for r in self.refused
            ),
            self.summary(),
        ]

    def summary(self) -> str:
        runs, freed = len(self.swept), self.freed_bytes
        if self.dry_run:
            text = f"dry run at {self.now}: {runs} run(s) due, {freed} bytes; nothing was deleted"
        else:
            videos = sum(s.video_expired for s in self.swept)
            text = (
                f"swept at {self.now}: {runs} run(s) expired, {freed} bytes deleted,"
                f" {videos} video(s) now expired"
            )
        if self.audit_pruned:
            text += f", {self.audit_pruned} audit record(s) past retention deleted"
        return text + (f"; {len(self.refused)} refused" if self.refused else "")

    def as_dict(self) -> dict[str, Any]:
        """A small JSON-able summary (the flow's result)."""
        return {
            "now": self.now,
            "dry_run": self.dry_run,
            "expired_runs": [s.run.run_id for s in self.swept],
            "freed_bytes": self.freed_bytes,
            "expired_videos": [s.run.video_id for s in self.swept if s.video_expired],
            "leftovers": list(self.leftovers),
            "orphans": list(self.orphans),
            "refused_runs": [r.run_id for r in self.refused],
            "audit_pruned": self.audit_pruned,
        }


def _line(swept: SweptRun, dry_run: bool) -> str:
    run = swept.run
    verb, tail = ("due", "would be deleted") if dry_run else ("expired", "deleted")
    if swept.video_expired:
        tail += "; the video is now expired"
    return (
        f"{verb} {run.run_id} (tenant {run.tenant_id}, video {run.video_id}):"
        f" finished {run.finished_at}, kept until {run.due_at}, {swept.freed_bytes} bytes {tail}"
    )


def sweep_retention(
    settings: Settings, catalog: Catalog, now: datetime | None = None, *, dry_run: bool = False
) -> SweepReport:
    """Expire every run with ``now >= finished_at + retention_days`` of its tenant's plan.

    Args:
        settings: plans (their ``retention_days``) and where the artifacts live.
        catalog: the catalog the runs are recorded in.
        now: the moment to judge at (default: the current time).
        dry_run: only report what is due; change nothing in the store or the catalog.
    """
    moment = now or utc_now()
    store, blobs = RetentionStore(catalog), open_blob_store(settings)
    due = store.due(moment, lambda plan: settings.plan(plan).retention_days)
    leftovers: tuple[str, ...] = ()
    orphans: tuple[str, ...] = ()
    pruned = 0
    if not dry_run:
        audit_cutoff = to_rfc3339(moment - timedelta(days=settings.audit_retention_days))
        pruned = AuditLog(catalog).prune(audit_cutoff)
        blobs.empty_trash(ARTIFACTS_TOP)
        leftovers = _remove_leftovers(blobs, store)
        orphans = remove_orphans(blobs, moment - timedelta(seconds=settings.orphan_after_s))
    swept: list[SweptRun] = []
    refused: list[RefusedRun] = []
    for run in due:
        key = own_key(blobs, run.tenant_id, run.video_id, run.run_id, run.artifacts_path)
        if run.artifacts_path is not None and key is None:
            refused.append(RefusedRun(run.run_id, run.artifacts_path))
        elif dry_run:
            swept.append(SweptRun(run, run.artifacts_bytes))
        elif outcome := _expire(blobs, store, run, key):
            swept.append(outcome)
    if not dry_run:
        mark_swept(catalog, now_rfc3339())
    return SweepReport(
        to_rfc3339(moment), dry_run, tuple(swept), tuple(refused), leftovers, orphans, pruned
    )


def _expire(
    blobs: BlobStore, store: RetentionStore, run: DueRun, key: str | None
) -> SweptRun | None:
    """Catalog first, then the files (see the module docstring for why)."""
    expiry = store.expire(run.run_id, now_rfc3339())
    if expiry is None:  # another sweep expired it meanwhile; that sweep removes the folder
        return None
    removed = key is not None and blobs.delete_prefix(key)
    for bundle in expiry.bundle_keys:
        blobs.delete_prefix(bundle_folder(bundle))
    ids = {"run_id": run.run_id}
    expired = AuditEntry(run.tenant_id, SYSTEM_KEY, "retention:expire_run", 200, run.video_id, ids)
    AuditLog(store.catalog).append(expired)
    return SweptRun(run, expiry.freed_bytes, expiry.video_expired, removed)


def own_key(
    blobs: BlobStore, tenant_id: str, video_id: str, run_id: str, artifacts_path: str | None
) -> str | None:
    """The run's key if ``artifacts_path`` is exactly its own place in the artifacts tree.

    None for anything else (another key or folder, a symlink leading elsewhere, a path outside
    the store), which is never deleted.
    """
    if artifacts_path is None:
        return None
    own = run_key(tenant_id, video_id, run_id)
    return own if blobs.key_of(artifacts_path) == own else None


def _remove_leftovers(blobs: BlobStore, store: RetentionStore) -> tuple[str, ...]:
    """Remove folders of runs, and bundles of exports, already marked expired (a sweep stopped
    between the two steps)."""
    for bundle in expired_bundles(store.catalog):
        blobs.delete_prefix(bundle_folder(bundle))
    removed = []
    for gone in store.expired_folders():
        key = own_key(blobs, gone.tenant_id, gone.video_id, gone.run_id, gone.artifacts_path)
        if key is not None and blobs.delete_prefix(key):
            removed.append(gone.run_id)
    return tuple(removed)


def remove_orphans(blobs: BlobStore, before: datetime) -> tuple[str, ...]:
    """Delete run prefixes without a manifest whose newest object is older than ``before``.

    The age keeps a run that is uploading right now safe: its newest object is seconds old.
    """
    newest: dict[str, datetime | None] = {}
    published: set[str] = set()
    for blob in blobs.list(ARTIFACTS_TOP):
        parts = blob.key.split("/")
        if len(parts) < 5 or not parts[3].startswith("run="):
            continue
        prefix = "/".join(parts[:4])
        if parts[4] == MANIFEST:
            published.add(prefix)
        seen = newest.get(prefix)
        newest[prefix] = max(filter(None, (seen, blob.modified)), default=None)
    stale = [
        prefix
        for prefix, modified in sorted(newest.items())
        if prefix not in published and modified is not None and modified < before
    ]
    return tuple(prefix for prefix in stale if blobs.delete_prefix(prefix))


@task(name="retention", cache_policy=NONE)
def retention_task(settings: Settings, dry_run: bool = False) -> SweepReport:
    """Sweep now, logging one line per run and the summary."""
    logger = get_run_logger()
    report = sweep_retention(settings, Catalog.from_settings(settings), dry_run=dry_run)
    for line in report.lines():
        logger.info("%s", line)
    return report
