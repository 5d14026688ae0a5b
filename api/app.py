"""The app factory: every collaborator comes in as an argument, so tests build their own."""

from __future__ import annotations

from fastapi import Depends, FastAPI
from starlette.routing import Route

from api.audit import AuditRecorder
from api.auth import AuthFailures
from api.deps import one_value_per_query_parameter
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


# Every router, in the order their routes are matched and listed in the OpenAPI document.
ROUTERS = (
    health.router,
    videos.router,
    runs.router,
    artifacts.router,
    notes.router,
    exports.router,
    media.router,
    media.source_router,
    ask.router,
    search.router,
    audit.router,
    billing.router,
    onboarding.router,
    signing_keys.router,
    webhooks.router,
    dashboard.router,
    metrics.router,
)


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
        dependencies=[Depends(one_value_per_query_parameter)],
    )
    _attach_state(app, settings, catalog, submitter)
    install_problem_handlers(app)
    app.add_middleware(RequestGuardMiddleware, settings=settings)
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics.http)  # all counted
    app.add_middleware(TracingMiddleware)  # outermost: a span around everything else
    for router in ROUTERS:
        app.include_router(router)
    app.router.routes.append(Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]))
    app.mount("/dashboard/static", dashboard.static_files(), name="dashboard-static")
    install_exact_openapi(app, settings)
    return app


def _attach_state(app: FastAPI, settings: Settings, catalog: Catalog, submitter: Submitter) -> None:
    """What the routes reach through ``request.app.state`` (``api.deps``): one of each per app."""
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
