"""What the API itself measures, per process: requests by route template, method and status
class, their latency, the requests in flight, refusals (429, 401), read-cache hits.

A pure ASGI middleware outermost of the app, so every answer is counted, problems included. The
route label is the matched route's template (``/api/product/videos/{video_id}``), never the
path: ids and other tenant content never become labels.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.read_cache import ReadCache

disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series: noise here
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class HttpMetrics:
    """The API's own metrics, in ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ("route", "method", "status_class")
        self.requests = Counter(
            "ves_http_requests", "HTTP requests answered.", labels, registry=registry
        )
        self.latency = Histogram(
            "ves_http_request_duration_seconds",
            "Time from a request's arrival to its answer's start.",
            ("route", "method"),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.in_flight = Gauge(
            "ves_http_requests_in_flight", "Requests being answered now.", registry=registry
        )
        self.rate_limited = Counter(
            "ves_http_rate_limited", "Requests refused with 429.", ("route",), registry=registry
        )
        self.auth_failed = Counter(
            "ves_http_auth_failed", "Requests refused with 401.", ("route",), registry=registry
        )


class ReadCacheCollector(Collector):
    """The read cache's hits and misses (rendered artifact reads), and the bytes it holds."""

    def __init__(self, cache: ReadCache) -> None:
        self.cache = cache

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily(
            "ves_read_cache_requests",
            "Rendered artifact reads, by whether the cache had them.",
            labels=["outcome"],
        )
        requests.add_metric(["hit"], self.cache.hits)
        requests.add_metric(["miss"], self.cache.misses)
        yield requests
        held = "Bytes of rendered reads the cache holds."
        yield GaugeMetricFamily("ves_read_cache_bytes", held, self.cache.size_bytes)


def route_of(scope: Scope) -> str:
    """The matched route's template; ``unmatched`` for a path no route serves."""
    route: Any = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "unmatched"


class MetricsMiddleware:
    """Counts and times every HTTP request of ``app``."""

    def __init__(self, app: ASGIApp, metrics: HttpMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500
        answered: list[float] = []

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                answered.append(time.perf_counter() - started)
            await send(message)

        self.metrics.in_flight.inc()
        try:
            await self.app(scope, receive, counting_send)
        finally:
            self.metrics.in_flight.dec()
            self._record(scope, status, answered[0] if answered else time.perf_counter() - started)

    def _record(self, scope: Scope, status: int, seconds: float) -> None:
        route, method = route_of(scope), str(scope.get("method", "GET"))
        self.metrics.requests.labels(route, method, f"{status // 100}xx").inc()
        self.metrics.latency.labels(route, method).observe(seconds)
        if status == 429:
            self.metrics.rate_limited.labels(route).inc()
        elif status == 401:
            self.metrics.auth_failed.labels(route).inc()
