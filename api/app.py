"""The app factory: every collaborator comes in as an argument, so tests build their own."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.routing import Route

from api.audit import AuditRecorder
from api.auth import AuthFailures
from api.lifespan import reaper_lifespan
from api.mcp import mcp_endpoint
from api.metrics import ServiceMetrics
from api.metrics.http import MetricsMiddleware
from api.middleware import RequestGuardMiddleware
from api.openapi_doc import install_exact_openapi
from api.problems import install_problem_handlers
from api.read_cache import ReadCache
from api.routes import (
    artifacts,
    ask,
    audit,
    billing,
    dashboard,
    exports,
    health,
    media,
    metrics,
    notes,
    onboarding,
    runs,
    search,
    signing_keys,
    videos,
    webhooks,
)
from api.tracing import TracingMiddleware
from ask.phrasing import LlmPhraser
from ask.world import WorldCache
from flows.orchestrator import PrefectSubmitter, Submitter
from search.engine import SearchEngine
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.catalog.audit import AuditLog
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from tasks.options import service_detector_mode
from ves import __version__
from ves.settings import Settings
from ves.telemetry import configure_tracing

DESCRIPTION = """
Turns video into durable, traceable evidence and answers questions about a video only when the
evidence backs the answer.

Every route but the health checks and the public ones (`/api/public/...`) needs
`Authorization: Bearer <key>` (`ves keys create --tenant NAME` prints one). Errors are RFC 9457
`application/problem+json` with a `code` and the `request_id` that is also in the `X-Request-ID`
header.

A preview MCP endpoint (streamable HTTP, same key) serves the same operations as tools at `/mcp`.
"""


def create_app(
    settings: Settings, catalog: Catalog | None = None, submitter: Submitter | None = None
) -> FastAPI:
    """Build the API for ``settings``.

    Args:
        settings: the service's settings.
        catalog: the catalog to use; by default the settings' one is opened (and upgraded).
        submitter: where runs go; by default the Prefect deployment, watched by the reaper.
    """
    service_detector_mode(settings)  # refuse a service that could run nothing by default
    configure_tracing()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    catalog = catalog or Catalog.from_settings(settings)
    submitter = submitter or PrefectSubmitter()
    mcp = mcp_endpoint()
    app = FastAPI(
        lifespan=reaper_lifespan(settings, RunStore(catalog), submitter, mcp.sessions.run),
        title="Video Evidence Service",
        version=__version__,
        description=DESCRIPTION,
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.catalog = catalog
    app.state.submitter = submitter
    app.state.store = open_blob_store(settings)
    app.state.reader = ArtifactReader(app.state.store)
    app.state.worlds = WorldCache(app.state.reader)
    app.state.search = SearchEngine(catalog, app.state.store)
    app.state.read_cache = ReadCache(settings.read_cache_bytes)
    app.state.auth_failures = AuthFailures(settings.auth_fail_limit, settings.auth_fail_window_s)
    app.state.phraser = LlmPhraser.from_settings(settings)
    app.state.audit = AuditRecorder(AuditLog(catalog))
    app.state.metrics = ServiceMetrics.create(catalog, settings, app.state.read_cache)
    install_problem_handlers(app)
    app.add_middleware(RequestGuardMiddleware, settings=settings)
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics.http)  # all counted
    app.add_middleware(TracingMiddleware)  # outermost: a span around everything else
    app.include_router(health.router)
    app.include_router(videos.router)
    app.include_router(runs.router)
    app.include_router(artifacts.router)
    app.include_router(notes.router)
    app.include_router(exports.router)
    app.include_router(media.router)
    app.include_router(media.source_router)
    app.include_router(ask.router)
    app.include_router(search.router)
    app.include_router(audit.router)
    app.include_router(billing.router)
    app.include_router(onboarding.router)
    app.include_router(signing_keys.router)
    app.include_router(webhooks.router)
    app.include_router(dashboard.router)
    app.include_router(metrics.router)
    app.router.routes.append(Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]))
    app.mount("/dashboard/static", dashboard.static_files(), name="dashboard-static")
    install_exact_openapi(app)
    return app
