"""Dependencies shared by the routes, as ``Annotated`` aliases.

The app factory stores its collaborators on ``app.state``; these read them back, so tests can build
an app with their own settings and catalog.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, get_args, get_origin

from fastapi import Depends, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.audit import TENANT_STATE
from api.auth import AuthFailures, authenticate, client_address
from api.read_cache import ReadCache
from flows.orchestrator import Submitter
from search.engine import SearchEngine
from storage.artifacts.blobs import BlobStore
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.served import RunViews
from storage.catalog.database import Catalog
from storage.catalog.records import Tenant
from storage.catalog.runs.store import RunStore
from storage.catalog.videos import VideoStore
from ves.errors import ValidationFailed
from ves.settings import Settings

_bearer = HTTPBearer(auto_error=False, description="An API key from `ves keys create`.")


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_catalog(request: Request) -> Catalog:
    catalog: Catalog = request.app.state.catalog
    return catalog


SettingsDep = Annotated[Settings, Depends(get_settings)]
CatalogDep = Annotated[Catalog, Depends(get_catalog)]


def get_videos(catalog: CatalogDep) -> VideoStore:
    return VideoStore(catalog)


def get_auth_failures(request: Request) -> AuthFailures:
    failures: AuthFailures = request.app.state.auth_failures
    return failures


def current_tenant(
    request: Request,
    catalog: CatalogDep,
    failures: Annotated[AuthFailures, Depends(get_auth_failures)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Tenant:
    """The tenant whose key is in ``Authorization: Bearer``; 401 for none, unknown or revoked,
    429 for an address that failed too often (``api.auth``). It stays in the request's state
    for its audit record (``api.audit``)."""
    tenant = authenticate(catalog, failures, client_address(request), credentials)
    setattr(request.state, TENANT_STATE, tenant)
    return tenant


VideosDep = Annotated[VideoStore, Depends(get_videos)]
TenantDep = Annotated[Tenant, Depends(current_tenant)]


def get_runs(catalog: CatalogDep) -> RunStore:
    return RunStore(catalog)


def get_reader(request: Request) -> ArtifactReader:
    reader: ArtifactReader = request.app.state.reader
    return reader


def get_store(request: Request) -> BlobStore:
    store: BlobStore = request.app.state.store
    return store


def get_submitter(request: Request) -> Submitter:
    submitter: Submitter = request.app.state.submitter
    return submitter


RunsDep = Annotated[RunStore, Depends(get_runs)]
ReaderDep = Annotated[ArtifactReader, Depends(get_reader)]
SubmitterDep = Annotated[Submitter, Depends(get_submitter)]
StoreDep = Annotated[BlobStore, Depends(get_store)]


def get_views(videos: VideosDep, runs: RunsDep, reader: ReaderDep) -> RunViews:
    return RunViews(videos, runs, reader)


ViewsDep = Annotated[RunViews, Depends(get_views)]


def get_read_cache(request: Request) -> ReadCache:
    cache: ReadCache = request.app.state.read_cache
    return cache


ReadCacheDep = Annotated[ReadCache, Depends(get_read_cache)]


def get_search(request: Request) -> SearchEngine:
    engine: SearchEngine = request.app.state.search
    return engine


SearchDep = Annotated[SearchEngine, Depends(get_search)]


def _repeatable(annotation: object) -> bool:
    """Whether a query parameter of this type takes several values (``list[str]``, ...)."""
    origin = get_origin(annotation)
    if origin in (list, tuple, set, frozenset):
        return True
    return origin is not None and any(_repeatable(arm) for arm in get_args(annotation))


def _query_fields(dependant: Dependant) -> list[Any]:
    """The query parameters of ``dependant`` and of every dependency under it."""
    fields: list[Any] = list(dependant.query_params)
    for sub in dependant.dependencies:
        fields += _query_fields(sub)
    return fields


def one_value_per_query_parameter(request: Request) -> None:
    """A query parameter that takes one value, given several times (``?limit=1&limit=2``), is a
    422: the schema says one value, and taking the last would answer a question not asked."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    single = {
        field.alias
        for field in _query_fields(route.dependant)
        if not _repeatable(field.field_info.annotation)
    }
    counts = Counter(name for name, _ in request.query_params.multi_items() if name in single)
    repeated = sorted(name for name, n in counts.items() if n > 1)
    if repeated:
        message = f"query parameter {repeated[0]} takes one value, given {counts[repeated[0]]}"
        errors = [{"loc": ["query", name], "msg": "takes one value"} for name in repeated]
        raise ValidationFailed(message, errors=errors)
