"""Writing events to the webhook outbox, inside the transaction of the change they tell of.

Each function takes the caller's open write transaction (``conn``) and inserts one ``pending``
delivery per live endpoint of the tenant subscribed to the event type, due now. The payload has
the Standard Webhooks shape: ``{"type", "timestamp", "data"}``; its delivery id is the
``webhook-id`` header. Nothing is sent here: whoever committed hands the deliveries to the
orchestrator right after (``flows.webhook_dispatch``), and the reaper sweeps any it missed.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, select, text

from storage.catalog.tables import webhook_deliveries as deliveries_table
from storage.catalog.tables import webhook_endpoints as endpoints_table
from ves.clock import now_rfc3339
from ves.ids import new_id


def emit(
    conn: Connection,
    tenant_id: str,
    event_type: str,
    data: dict[str, Any],
    dedupe: str | None = None,
) -> list[str]:
    """Queue the event for every endpoint of the tenant that wants it; returns delivery ids.

    With ``dedupe``, an endpoint that has a delivery with that key already gets no new one
    (``usage.limit_reached`` is sent once per limit and period).
    """
    now = now_rfc3339()
    rows = conn.execute(
        select(endpoints_table.c.webhook_id, endpoints_table.c.events_json).where(
            endpoints_table.c.tenant_id == tenant_id, endpoints_table.c.disabled_at.is_(None)
        )
    ).all()
    payload = json.dumps({"type": event_type, "timestamp": now, "data": data})
    made = []
    for webhook_id, events_json in rows:
        if event_type not in json.loads(events_json):
            continue
        key = f"{webhook_id}:{dedupe}" if dedupe else None
        if (
            key
            and conn.execute(
                select(deliveries_table.c.delivery_id).where(deliveries_table.c.dedupe_key == key)
            ).first()
        ):
            continue
        delivery_id = new_id("msg")
        conn.execute(
            deliveries_table.insert().values(
                delivery_id=delivery_id,
                webhook_id=webhook_id,
                tenant_id=tenant_id,
                event_type=event_type,
                payload_json=payload,
                state="pending",
                attempts=0,
                next_attempt_at=now,
                created_at=now,
                dedupe_key=key,
            )
        )
        made.append(delivery_id)
    return made


def emit_run_ended(conn: Connection, run_id: str) -> list[str]:
    """``run.succeeded`` or ``run.failed`` for a run that just ended (in ``_finish``'s
    transaction)."""
    row = (
        conn.execute(
            text(
                "SELECT run_id, video_id, tenant_id, state, error_code, error_message,"
                " started_at, finished_at FROM runs WHERE run_id = :run_id"
            ),
            {"run_id": run_id},
        )
        .mappings()
        .one()
    )
    video = f"/api/product/videos/{row['video_id']}"
    data: dict[str, Any] = {
        "video_id": row["video_id"],
        "run_id": run_id,
        "state": row["state"],
        "started_at": row["started_at"],
        "finished_at": row["finished_at"],
        "links": {"video": video},
    }
    if row["state"] == "succeeded":
        data["links"].update(
            {"evidence": f"{video}/evidence-view", "cost": f"{video}/cost", "ask": f"{video}/ask"}
        )
    else:
        data["error"] = {"code": row["error_code"], "message": row["error_message"]}
    return emit(conn, row["tenant_id"], f"run.{row['state']}", data)


def emit_export_ready(conn: Connection, export_id: str) -> list[str]:
    """``export.ready`` for an export that just succeeded (in its transaction)."""
    row = (
        conn.execute(
            text(
                "SELECT export_id, tenant_id, video_id, run_id, bundle_bytes, bundle_sha256,"
                " signing_key_id, finished_at FROM exports WHERE export_id = :export_id"
            ),
            {"export_id": export_id},
        )
        .mappings()
        .one()
    )
    export = f"/api/product/videos/{row['video_id']}/exports/{export_id}"
    data = {
        "video_id": row["video_id"],
        "run_id": row["run_id"],
        "export_id": export_id,
        "state": "succeeded",
        "finished_at": row["finished_at"],
        "bundle": {
            "bytes": row["bundle_bytes"],
            "sha256": row["bundle_sha256"],
            "signing_key_id": row["signing_key_id"],
        },
        "links": {"export": export, "bundle": f"{export}/bundle"},
    }
    return emit(conn, row["tenant_id"], "export.ready", data)


def emit_limit_reached(
    conn: Connection, tenant_id: str, limit: str, value: float, used: float, period: str
) -> list[str]:
    """``usage.limit_reached``: a plan limit refused an action; once per limit and ``period``."""
    data = {
        "limit": limit,
        "value": value,
        "used": used,
        "period": period,
        "links": {"billing": "/api/product/billing/state"},
    }
    return emit(conn, tenant_id, "usage.limit_reached", data, dedupe=f"{limit}:{period}")
