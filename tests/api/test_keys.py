"""API keys: a revoked key fails on the very next request (REST and an open MCP session), failed
authentication is limited per client address, and no key ever reaches a log or an error."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import httpx
import pytest
from mcp.client.session import ClientSession

from api.app import create_app
from api.auth import AuthFailures
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from testkit.live_server import serve_app
from tests.api.helpers import PROBLEM
from tests.api.test_mcp import with_session
from ves.errors import RateLimited
from ves.settings import Settings

LIST = "/api/product/videos"
ELSEWHERE = {"X-Forwarded-For": "203.0.113.7"}  # uvicorn trusts it from loopback (a proxy's)


def _key(tenants: TenantStore, name: str = "acme") -> tuple[str, str]:
    tenant = tenants.find_tenant(name) or tenants.create_tenant(name)
    key, plaintext = tenants.create_key(tenant.tenant_id)
    return key.key_id, plaintext


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_revoked_key_fails_on_the_very_next_request(
    anon: httpx.Client, tenants: TenantStore
) -> None:
    key_id, key = _key(tenants)
    for path in (LIST, "/api/product/billing/state"):
        assert anon.get(path, headers=_bearer(key)).status_code == 200
    tenants.revoke_key(key_id)
    for path in (LIST, "/api/product/billing/state", f"{LIST}/vid_x"):
        response = anon.get(path, headers=_bearer(key))
        assert response.status_code == 401, response.text
        assert response.json()["code"] == "unauthorized"


def test_a_revoked_key_fails_on_the_next_call_of_an_open_mcp_session(
    anon: httpx.Client, tenants: TenantStore
) -> None:
    key_id, key = _key(tenants)
    client = httpx.Client(base_url=anon.base_url, headers=_bearer(key))

    async def work(session: ClientSession) -> tuple[bool, str]:
        first = await session.call_tool("list_videos", {})
        assert not first.is_error, first.content
        tenants.revoke_key(key_id)
        try:
            second = await session.call_tool("list_videos", {})
        except Exception as error:  # the SDK raises on the 401 answer
            return True, repr(error)
        return bool(second.is_error), repr(second)

    with client:
        refused, seen = with_session(client, work)
    assert refused, seen


@pytest.fixture
def limited_url(settings: Settings, catalog: Catalog) -> Iterator[str]:
    """An API that refuses an address after 3 failed authentications within a minute."""
    app = create_app(settings.model_copy(update={"auth_fail_limit": 3}), catalog)
    with serve_app(app) as url:
        yield url


def test_failed_authentications_are_limited_per_address(
    limited_url: str, tenants: TenantStore
) -> None:
    _, key = _key(tenants)
    with httpx.Client(base_url=limited_url) as http:
        for _ in range(5):  # no key at all is not an attempt at one: not counted
            assert http.get(LIST).status_code == 401
        for _ in range(3):
            assert http.get(LIST, headers=_bearer("ves_nope_nope")).status_code == 401
        for headers in (_bearer("ves_nope_nope"), _bearer(key), {}):
            refused = http.get(LIST, headers=headers)
            assert refused.status_code == 429, refused.text
            assert refused.headers["content-type"].startswith(PROBLEM)
            assert refused.json()["code"] == "rate_limited"
            assert 1 <= int(refused.headers["retry-after"]) <= 60
        mcp = http.post("/mcp", json={}, headers=_bearer(key))
        assert mcp.status_code == 429 and mcp.json()["code"] == "rate_limited"
        # Another address is not held back, and its valid key works.
        assert http.get(LIST, headers={**_bearer(key), **ELSEWHERE}).status_code == 200


def test_the_openapi_documents_the_429_of_every_route_that_needs_a_key(anon: httpx.Client) -> None:
    spec = anon.get("/openapi.json").json()
    for operations in spec["paths"].values():
        for operation in operations.values():
            responses = operation["responses"]
            assert ("401" in responses) <= ("429" in responses), operation["summary"]
    assert "429" in spec["paths"][LIST]["get"]["responses"]


def test_the_window_slides() -> None:
    now = [1000.0]
    failures = AuthFailures(limit=2, window_s=10, clock=lambda: now[0])
    failures.record("a")
    now[0] += 4
    failures.record("a")
    with pytest.raises(RateLimited) as caught:
        failures.refuse_if_limited("a")
    assert caught.value.retry_after_s == 6  # until the first failure leaves the window
    failures.refuse_if_limited("b")
    now[0] += 6.5
    failures.refuse_if_limited("a")  # one failure left the window
    failures.record("a")
    with pytest.raises(RateLimited):
        failures.refuse_if_limited("a")


class _Everything(logging.Handler):
    """Every record of every logger, formatted as a log file would hold it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def all_logs() -> Iterator[_Everything]:
    """Every record, also of loggers that do not pass theirs to the root (uvicorn's, as
    Prefect's logging configuration sets them up)."""
    handler, root = _Everything(), logging.getLogger()
    level = root.level
    closed = [
        logger
        for logger in logging.root.manager.loggerDict.values()
        if isinstance(logger, logging.Logger) and not logger.propagate
    ]
    for logger in [root, *closed]:
        logger.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        for logger in [root, *closed]:
            logger.removeHandler(handler)
        root.setLevel(level)


def _exercise(url: str, keys: list[str]) -> list[httpx.Response]:
    """Every way a key is used: REST reads and errors, MCP sessions, the auth limit."""
    responses = []
    for key in keys:
        with httpx.Client(base_url=url, headers=_bearer(key)) as http:
            responses += [http.get(LIST), http.get(f"{LIST}/vid_nope"), http.get(f"{LIST}?limit=x")]
            responses.append(http.post("/api/videos/add", json={"url": key, "title": key}))
            responses.append(http.post("/mcp", json={"jsonrpc": "2.0"}))
            with contextlib.suppress(Exception):  # refused keys: the SDK raises on the 401
                with_session(http, lambda s: s.call_tool("list_videos", {}))
    return responses


def test_keys_never_reach_the_logs_nor_the_answers(
    settings: Settings, catalog: Catalog, tenants: TenantStore, all_logs: _Everything
) -> None:
    app = create_app(settings.model_copy(update={"auth_fail_limit": 8}), catalog)
    revoked_id, revoked = _key(tenants)
    tenants.revoke_key(revoked_id)
    _, good = _key(tenants)
    wrong = good[:-6] + "abcdef"
    with serve_app(app, log_level="debug", log_config=None, access_log=True) as url:
        responses = _exercise(url, [good, revoked, wrong])
    logged = "\n".join(all_logs.lines)
    assert "uvicorn.access" in logged and "failed authentications from" in logged  # all seen
    assert {r.status_code for r in responses} >= {200, 401, 404, 422, 429}
    for key in (good, wrong, revoked):
        # "ves_<key id>_<secret>": the secret (token_urlsafe) may itself hold "_", so it is all
        # after the second one (after the last, it was once just "og", found in "log").
        secret = key.split("_", 2)[2]
        assert len(secret) >= 40
        assert secret not in logged
        for response in responses:
            assert secret not in response.text
            assert secret not in str(response.headers)
    assert "authorization" not in logged.lower()


def test_the_capture_would_see_a_key(all_logs: _Everything) -> None:
    logging.getLogger("ves.api").debug("key %s", "ves_abc_secret")
    assert "secret" in "\n".join(all_logs.lines)
