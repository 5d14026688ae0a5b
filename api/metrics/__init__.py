"""Prometheus metrics of the service at ``GET /metrics``: the API's own (``http``) and what the
catalog knows at each scrape (``catalog``), in one registry per app. Every metric is documented
in docs/reference/metrics.md (a test fails when one is not)."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from api.metrics.catalog import CatalogCollector
from api.metrics.http import HttpMetrics
from storage.catalog.database import Catalog
from ves.settings import Settings


@dataclass(frozen=True)
class ServiceMetrics:
    """One app's registry and the API's own metrics in it."""

    registry: CollectorRegistry
    http: HttpMetrics

    @classmethod
    def create(cls, catalog: Catalog, settings: Settings) -> ServiceMetrics:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(CatalogCollector(catalog, settings))
        return cls(registry, HttpMetrics(registry))
