"""What the catalog knows, read at each scrape: runs by state and detector mode, each tenant's
queue, the stages' seconds (from the runs' own cost records, so worker processes need no scrape
port of their own), frames, processed video, failures by code, storage against the plan, webhook
deliveries, exports and live sessions.

Tenant ids are the only tenant data in labels: no key, title, URL or text ever is.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from sqlalchemy import text

from storage.catalog.database import Catalog
from ves.clock import from_rfc3339
from ves.settings import Settings

Rows = Sequence[Any]
STAGE_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)


class CatalogCollector(Collector):
    """Metrics read from the catalog when Prometheus scrapes."""

    def __init__(self, catalog: Catalog, settings: Settings) -> None:
        self.catalog = catalog
        self.settings = settings

    def collect(self) -> Iterator[Metric]:
        with self.catalog.read() as conn:
            rows = {name: conn.execute(text(sql)).all() for name, sql in _QUERIES.items()}
        now = time.time()
        yield _runs(rows["runs"])
        yield from _queues(rows["queued"], now)
        yield _failures(rows["failures"])
        yield from _costs(rows["costs"])
        yield from _storage(rows["storage"], self.settings)
        yield from _webhooks(rows["attempts"], rows["pending"], now)
        yield _by_state("ves_exports", "Evidence exports by state.", rows["exports"])
        live = GaugeMetricFamily("ves_live_sessions", "Live HLS sessions following a stream now.")
        live.add_metric([], sum(1 for (params,) in rows["live"] if _params(params).get("follow")))
        yield live
        swept = GaugeMetricFamily(
            "ves_retention_last_sweep_timestamp_seconds",
            "When the retention sweep last completed (seconds since the epoch; 0: never).",
        )
        swept.add_metric([], from_rfc3339(rows["swept"][0][0]).timestamp() if rows["swept"] else 0)
        yield swept
        up = GaugeMetricFamily("ves_catalog_up", "1 when the catalog answered this scrape.")
        up.add_metric([], 1.0)
        yield up


_QUERIES = {
    "runs": "SELECT state, params_json, count(*) FROM runs GROUP BY state, params_json",
    "queued": "SELECT tenant_id, count(*), min(created_at) FROM runs WHERE state = 'queued'"
    " GROUP BY tenant_id",
    "failures": "SELECT error_code, count(*) FROM runs WHERE state = 'failed' GROUP BY error_code",
    "costs": (
        "SELECT stages_json, frames_decoded, frames_analysed, frames_skipped, processed_s "
        "FROM run_costs"
    ),
    "storage": "SELECT t.tenant_id, t.plan, coalesce(u.value, 0) FROM tenants t LEFT JOIN usage u"
    " ON u.tenant_id = t.tenant_id AND u.period = 'all' AND u.metric = 'storage_bytes'",
    "attempts": "SELECT outcome, count(*) FROM webhook_attempts GROUP BY outcome",
    "pending": "SELECT min(created_at) FROM webhook_deliveries WHERE state = 'pending'",
    "exports": "SELECT state, count(*) FROM exports GROUP BY state",
    "live": "SELECT params_json FROM runs WHERE state = 'running'",
    "swept": "SELECT at FROM service_marks WHERE name = 'retention_sweep'",
}


def _params(raw: str | None) -> dict[str, Any]:
    try:
        parsed = json.loads(raw or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _runs(rows: Rows) -> Metric:
    counts: Counter[tuple[str, str]] = Counter()
    for state, params, count in rows:
        counts[(state, str(_params(params).get("detector") or "default"))] += int(count)
    family = GaugeMetricFamily(
        "ves_runs", "Runs by state and detector mode.", labels=["state", "detector_mode"]
    )
    for (state, mode), count in sorted(counts.items()):
        family.add_metric([state, mode], count)
    return family


def _queues(rows: Rows, now: float) -> Iterator[Metric]:
    depth = GaugeMetricFamily("ves_queue_depth", "Runs waiting, per tenant.", labels=["tenant_id"])
    wait = GaugeMetricFamily(
        "ves_queue_oldest_wait_seconds",
        "How long the tenant's oldest queued run has waited.",
        labels=["tenant_id"],
    )
    for tenant_id, count, oldest in rows:
        depth.add_metric([tenant_id], int(count))
        wait.add_metric([tenant_id], max(0.0, now - from_rfc3339(oldest).timestamp()))
    yield depth
    yield wait


def _failures(rows: Rows) -> Metric:
    family = CounterMetricFamily("ves_run_failures", "Failed runs by error code.", labels=["code"])
    for code, count in rows:
        family.add_metric([code or "unknown"], int(count))
    return family


def _costs(rows: Rows) -> Iterator[Metric]:
    seconds: dict[str, list[float]] = {}
    decoded = analysed = skipped = processed = 0.0
    for stages_json, frames_decoded, frames_analysed, frames_skipped, processed_s in rows:
        for stage, spent in _params(stages_json).items():
            if isinstance(spent, int | float):
                seconds.setdefault(stage, []).append(float(spent))
        decoded += frames_decoded or 0
        analysed += frames_analysed or 0
        skipped += frames_skipped or 0
        processed += processed_s or 0.0
    stages = HistogramMetricFamily(
        "ves_stage_seconds",
        "Compute seconds of each stage of succeeded runs (from their cost records).",
        labels=["stage"],
    )
    for stage, values in sorted(seconds.items()):
        buckets = [(str(b), float(sum(v <= b for v in values))) for b in STAGE_BUCKETS]
        stages.add_metric([stage], [*buckets, ("+Inf", float(len(values)))], sum(values))
    yield stages
    frames = CounterMetricFamily(
        "ves_frames",
        "Frames of succeeded runs: decoded, sampled for analysis, skipped undecoded by the gate.",
        labels=["kind"],
    )
    frames.add_metric(["decoded"], decoded)
    frames.add_metric(["sampled"], analysed)
    frames.add_metric(["skipped"], skipped)
    yield frames
    video = CounterMetricFamily("ves_processed_video_seconds", "Video processed by succeeded runs.")
    video.add_metric([], processed)
    yield video


def _storage(rows: Rows, settings: Settings) -> Iterator[Metric]:
    held = GaugeMetricFamily(
        "ves_storage_bytes", "Bytes the tenant keeps (artifacts, bundles).", labels=["tenant_id"]
    )
    limit = GaugeMetricFamily(
        "ves_storage_limit_bytes", "The tenant's plan's storage_bytes.", labels=["tenant_id"]
    )
    for tenant_id, plan, value in rows:
        held.add_metric([tenant_id], float(value))
        limit.add_metric([tenant_id], float(settings.plan(plan).storage_bytes))
    yield held
    yield limit


def _webhooks(attempts: Rows, pending: Rows, now: float) -> Iterator[Metric]:
    family = CounterMetricFamily(
        "ves_webhook_attempts", "Webhook delivery attempts by outcome.", labels=["outcome"]
    )
    for outcome, count in attempts:
        family.add_metric([outcome], int(count))
    yield family
    lag = GaugeMetricFamily(
        "ves_webhook_oldest_pending_seconds",
        "Age of the oldest webhook delivery not delivered yet (0 when none waits).",
    )
    oldest = pending[0][0] if pending else None
    lag.add_metric([], max(0.0, now - from_rfc3339(oldest).timestamp()) if oldest else 0.0)
    yield lag


def _by_state(name: str, doc: str, rows: Rows) -> Metric:
    family = GaugeMetricFamily(name, doc, labels=["state"])
    for state, count in rows:
        family.add_metric([state], int(count))
    return family
