"""Exports: one signed evidence bundle of a video's run, from ``queued`` to ``succeeded`` (its
zip in the blob store) or ``failed`` (with a reason).

An export names the run it exports when it is asked for (the video's newest succeeded run then),
so a run that succeeds meanwhile does not change what is being bundled. Transitions are guarded
by the current state, as runs' are: a late flow cannot revive an export already failed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import RowMapping, select, update

from storage.catalog.database import Catalog
from storage.catalog.tables import exports as exports_table
from storage.catalog.usage import ALL, add, refuse, used
from storage.catalog.webhooks.events import emit_export_ready
from ves.clock import now_rfc3339, to_rfc3339, utc_now
from ves.errors import NotFound
from ves.ids import new_id

BUNDLES_TOP = "exports"  # the first part of every bundle's key in the blob store


def bundle_key(tenant_id: str, video_id: str, export_id: str) -> str:
    """Where an export's zip is kept in the blob store."""
    return f"{BUNDLES_TOP}/tenant={tenant_id}/video={video_id}/export={export_id}/bundle.zip"


def bundle_folder(key: str) -> str:
    """The export's own folder in the store (what is deleted: the bundle and nothing beside)."""
    return key.rsplit("/", 1)[0]


@dataclass(frozen=True)
class Export:
    export_id: str
    tenant_id: str
    video_id: str
    run_id: str
    key_id: str | None
    state: str
    params: dict[str, Any]
    flow_run_id: str | None
    bundle_key: str | None
    bundle_bytes: int | None
    bundle_sha256: str | None
    signing_key_id: str | None
    error_code: str | None
    error_message: str | None
    created_at: str
    finished_at: str | None
    heartbeat_at: str | None = None
    expired_at: str | None = None

    @classmethod
    def from_row(cls, row: RowMapping) -> Export:
        values = dict(row)
        values["params"] = json.loads(values.pop("params_json"))
        return cls(**values)


@dataclass(frozen=True)
class Bundle:
    """A finished export's zip: where it is, its size and hash, the key that signed it."""

    key: str
    size: int
    sha256: str
    signing_key_id: str


class ExportStore:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def create(
        self,
        tenant_id: str,
        video_id: str,
        run_id: str,
        key_id: str | None,
        params: dict[str, Any],
        storage_limit: float | None = None,
    ) -> Export:
        """A queued export of ``run_id`` (a succeeded run of the tenant's video).

        Raises:
            PlanLimitExceeded: the tenant already keeps ``storage_limit`` bytes.
        """
        export_id = new_id("exp")
        with self.catalog.write() as conn:
            kept = used(conn, tenant_id, ALL, "storage_bytes")
            if storage_limit is not None and kept >= storage_limit:
                raise refuse("storage_bytes", storage_limit, kept)
            conn.execute(
                exports_table.insert().values(
                    export_id=export_id,
                    tenant_id=tenant_id,
                    video_id=video_id,
                    run_id=run_id,
                    key_id=key_id,
                    state="queued",
                    params_json=json.dumps(params),
                    created_at=now_rfc3339(),
                )
            )
        return self.get(export_id)

    def get(self, export_id: str, tenant_id: str | None = None) -> Export:
        """The export (of ``tenant_id`` when given: another tenant's is not found)."""
        query = select(exports_table).where(exports_table.c.export_id == export_id)
        if tenant_id is not None:
            query = query.where(exports_table.c.tenant_id == tenant_id)
        with self.catalog.read() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFound(f"no export {export_id}")
        return Export.from_row(row)

    def of_video(self, tenant_id: str, video_id: str, export_id: str) -> Export:
        """The tenant's export of that video; any other answers as an unknown id."""
        export = self.get(export_id, tenant_id)
        if export.video_id != video_id:
            raise NotFound(f"no export {export_id}")
        return export

    def active(self) -> list[Export]:
        """Every queued or running export, oldest first."""
        query = select(exports_table).where(exports_table.c.state.in_(("queued", "running")))
        with self.catalog.read() as conn:
            rows = conn.execute(query.order_by(exports_table.c.export_id)).mappings().all()
        return [Export.from_row(r) for r in rows]

    def set_flow_run(self, export_id: str, flow_run_id: str) -> None:
        self._set(export_id, ("queued", "running"), flow_run_id=flow_run_id)

    def start(self, export_id: str) -> bool:
        """``queued`` -> ``running``; False if it is not queued (failed meanwhile)."""
        return self._set(export_id, ("queued",), state="running", heartbeat_at=now_rfc3339())

    def beat(self, export_id: str) -> None:
        """Say the export is alive (its flow beats while it fetches, cuts and writes)."""
        self._set(export_id, ("running",), heartbeat_at=now_rfc3339())

    def fail_silent(self, timeout_s: float) -> list[str]:
        """Fail running exports whose flow has not beaten for ``timeout_s``; return their ids."""
        cutoff = to_rfc3339(utc_now() - timedelta(seconds=timeout_s))
        query = select(exports_table.c.export_id).where(
            (exports_table.c.state == "running") & (exports_table.c.heartbeat_at < cutoff)
        )
        with self.catalog.read() as conn:
            silent = conn.execute(query).scalars().all()
        message = (
            f"the export stopped without finishing (no sign of life for {timeout_s:.0f} s: the"
            " worker or the service was stopped or killed); export again"
        )
        return [e for e in silent if self.fail(e, "processing_stopped", message)]

    def succeed(self, export_id: str, bundle: Bundle) -> bool:
        """``running`` -> ``succeeded`` with its bundle, whose bytes count in the tenant's
        ``storage_bytes`` until retention deletes it with its run; ``export.ready`` goes to the
        webhook outbox. One transaction."""
        guarded = (exports_table.c.export_id == export_id) & (exports_table.c.state == "running")
        values = {
            "state": "succeeded",
            "bundle_key": bundle.key,
            "bundle_bytes": bundle.size,
            "bundle_sha256": bundle.sha256,
            "signing_key_id": bundle.signing_key_id,
            "finished_at": now_rfc3339(),
        }
        with self.catalog.write() as conn:
            done = update(exports_table).where(guarded).values(values)
            tenant_id = conn.execute(done.returning(exports_table.c.tenant_id)).scalar()
            if tenant_id is None:
                return False
            add(conn, tenant_id, ALL, "storage_bytes", float(bundle.size))
            emit_export_ready(conn, export_id)
        return True

    def fail(self, export_id: str, code: str, message: str) -> bool:
        return self._set(
            export_id,
            ("queued", "running"),
            state="failed",
            error_code=code,
            error_message=message,
            finished_at=now_rfc3339(),
        )

    def _set(self, export_id: str, allowed: tuple[str, ...], **values: Any) -> bool:
        guarded = (exports_table.c.export_id == export_id) & exports_table.c.state.in_(allowed)
        with self.catalog.write() as conn:
            return bool(conn.execute(update(exports_table).where(guarded).values(values)).rowcount)
