"""``GET /metrics``: the service's Prometheus metrics, for operators.

Open while the API listens on loopback only and no operator token is set (as ``make run`` starts
it); otherwise the request needs ``Authorization: Bearer $VES_METRICS_TOKEN``. An API key is no
operator token: tenants never read metrics.
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from api.auth import AuthFailures, client_address
from api.deps import SettingsDep, get_auth_failures
from api.metrics import ServiceMetrics
from api.problems import problem_responses
from ves.errors import Unauthorized
from ves.settings import Settings

router = APIRouter(tags=["operations"])


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_operator(request: Request, settings: Settings, failures: AuthFailures) -> None:
    """``Unauthorized`` unless metrics are open here or the operator token came; a wrong token
    counts against the address as a wrong API key does (``RateLimited`` once it failed too often),
    so the token cannot be guessed faster than a key."""
    token = settings.metrics_token
    if token is None:
        if _loopback(settings.host):
            return
        raise Unauthorized(
            "the API listens beyond loopback: set VES_METRICS_TOKEN and send it as a bearer token"
        )
    address = client_address(request)
    failures.refuse_if_limited(address)
    sent = request.headers.get("authorization", "")
    expected = f"Bearer {token.get_secret_value()}"
    if not hmac.compare_digest(sent.encode(), expected.encode()):
        failures.record(address)
        raise Unauthorized("send the operator token as 'Authorization: Bearer <token>'")


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    description=(
        "The service's metrics in the Prometheus text format: API requests by route template, "
        "method and status class, their latency, requests in flight, 429 and 401 refusals, the "
        "read cache's hits; runs by state and detector mode, each tenant's queue depth and "
        "oldest wait, stage seconds from the runs' cost records, frames decoded, sampled and "
        "skipped, processed video, failures by code; storage per tenant against the plan, "
        "webhook attempts and the oldest pending delivery, exports, live sessions, the "
        "catalog's health and each part `/readyz` checks. Tenant ids are the only tenant data in "
        "labels. Open while the API listens on loopback and `VES_METRICS_TOKEN` is unset; "
        "otherwise send `Authorization: Bearer $VES_METRICS_TOKEN`. Every metric: "
        "docs/reference/metrics.md."
    ),
    responses={
        200: {"content": {CONTENT_TYPE_LATEST.split(";")[0]: {}}, "description": "The metrics."},
        **problem_responses(401, 429),
    },
    response_class=Response,
)
def metrics(
    request: Request,
    settings: SettingsDep,
    failures: Annotated[AuthFailures, Depends(get_auth_failures)],
) -> Response:
    check_operator(request, settings, failures)
    service: ServiceMetrics = request.app.state.metrics
    return Response(generate_latest(service.registry), media_type=CONTENT_TYPE_LATEST)
