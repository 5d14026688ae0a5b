"""Prometheus metrics of the service at ``GET /metrics``: the API's own (``http``, and its read
cache), what the catalog knows at each scrape (``catalog``) and what ``/readyz`` checks
(``readiness``), in one registry per app. Every metric is documented
in docs/reference/metrics.md (a test fails when one is not)."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from api.metrics.catalog import CatalogCollector
from api.metrics.http import HttpMetrics, ReadCacheCollector
from api.metrics.readiness import ReadinessCollector
from api.read_cache import ReadCache
from flows.readiness import check_readiness
from storage.catalog.database import Catalog
from ves.settings import Settings


@dataclass(frozen=True)
class ServiceMetrics:
    """One app's registry and the API's own metrics in it."""

    registry: CollectorRegistry
    http: HttpMetrics

    @classmethod
    def create(cls, catalog: Catalog, settings: Settings, read_cache: ReadCache) -> ServiceMetrics:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(CatalogCollector(catalog, settings))
        registry.register(ReadinessCollector(lambda: check_readiness(settings, catalog)))
        registry.register(ReadCacheCollector(read_cache))
        return cls(registry, HttpMetrics(registry))
