"""What ``GET /readyz`` checks, as gauges: the catalog, the artifact store, the Prefect server, its
worker pool and its scheduler, each up or down, and how long its check took.

The checks ask Prefect three times over HTTP (3 s timeouts each), so a scrape never waits on them:
they run on a thread at most every ``ttl_s``, and a scrape reports the latest finished result (it
waits up to ``wait_s`` for a refresh it started, so the first scrape has figures too).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from flows.readiness import Readiness


class ReadinessCollector(Collector):
    """``ves_ready`` and ``ves_ready_check_seconds`` per check, from ``check()``."""

    def __init__(
        self, check: Callable[[], Readiness], ttl_s: float = 10.0, wait_s: float = 0.5
    ) -> None:
        self._check, self.ttl_s, self.wait_s = check, ttl_s, wait_s
        self._lock = threading.Lock()
        self._latest: Readiness | None = None
        self._checked_at = float("-inf")
        self._refreshing: threading.Thread | None = None

    def collect(self) -> Iterator[Metric]:
        readiness = self._current()
        up = GaugeMetricFamily(
            "ves_ready", "1 when the part answered its readiness check.", labels=["check"]
        )
        seconds = GaugeMetricFamily(
            "ves_ready_check_seconds", "How long the part's last check took.", labels=["check"]
        )
        for name, check in readiness.checks.items() if readiness else ():
            up.add_metric([name], 1.0 if check.ok else 0.0)
            seconds.add_metric([name], check.latency_ms / 1000)
        yield up
        yield seconds

    def _current(self) -> Readiness | None:
        with self._lock:
            stale = time.monotonic() - self._checked_at > self.ttl_s
            if stale and self._refreshing is None:
                self._refreshing = threading.Thread(target=self._refresh, daemon=True)
                self._refreshing.start()
            refreshing = self._refreshing
        if refreshing is not None:
            refreshing.join(self.wait_s)
        return self._latest

    def _refresh(self) -> None:
        readiness = None
        try:
            readiness = self._check()
        finally:
            with self._lock:
                self._refreshing, self._checked_at = None, time.monotonic()
                if readiness is not None:
                    self._latest = readiness
