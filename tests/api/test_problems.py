"""Requests the API cannot take: each gets its problem+json, with a request id and no trace."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from api.app import create_app
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from testkit.live_server import serve_app
from tests.api.helpers import expect_problem
from ves.settings import Settings


def test_malformed_json_is_a_400(client: httpx.Client) -> None:
    response = client.post(
        "/api/videos/add",
        content=b'{"url": "http://x", "title": ',
        headers={"content-type": "application/json"},
    )
    expect_problem(response, 400, "invalid_request")


def test_a_body_that_is_not_json_is_a_415(client: httpx.Client) -> None:
    response = client.post(
        "/api/videos/add", content=b"url=x", headers={"content-type": "text/plain"}
    )
    expect_problem(response, 415, "unsupported_media_type")


def test_a_huge_body_is_a_413_before_it_is_read(client: httpx.Client) -> None:
    body = b'{"title": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    response = client.post(
        "/api/videos/add", content=body, headers={"content-type": "application/json"}
    )
    expect_problem(response, 413, "payload_too_large")


def test_a_huge_chunked_body_is_a_413(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"title": "'
        for _ in range(40):
            yield b"x" * 65536
        yield b'"}'

    response = client.post(
        "/api/videos/add", content=chunks(), headers={"content-type": "application/json"}
    )
    expect_problem(response, 413, "payload_too_large")


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer nope"},
        {"Authorization": "Basic dTpw"},
        {"Authorization": "Bearer"},
    ],
)
def test_missing_or_wrong_keys_are_401(anon: httpx.Client, headers: dict[str, str]) -> None:
    response = anon.get("/api/product/videos", headers=headers)
    expect_problem(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"


def test_a_revoked_key_is_401(anon: httpx.Client, tenants: TenantStore) -> None:
    tenant = tenants.create_tenant("acme")
    key, plaintext = tenants.create_key(tenant.tenant_id)
    headers = {"Authorization": f"Bearer {plaintext}"}
    assert anon.get("/api/product/videos", headers=headers).status_code == 200
    tenants.revoke_key(key.key_id)
    expect_problem(anon.get("/api/product/videos", headers=headers), 401, "unauthorized")


def test_unknown_routes_and_methods_are_problems(anon: httpx.Client) -> None:
    expect_problem(anon.get("/api/nothing-here"), 404, "not_found")
    assert anon.delete("/healthz").json()["status"] == 405


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        # Paths served by two routes: Starlette named only the first route's methods.
        ("PUT", "/api/product/webhooks", "GET, POST"),
        ("PATCH", "/api/product/webhooks/wh_1", "DELETE, GET"),
        ("DELETE", "/api/product/videos/vid_1/evidence/ev_1/notes", "GET, POST"),
        ("POST", "/healthz", "GET"),
    ],
)
def test_a_405_names_every_method_its_path_answers(
    anon: httpx.Client, method: str, path: str, allowed: str
) -> None:
    response = anon.request(method, path)
    expect_problem(response, 405, "method_not_allowed")
    assert response.headers["allow"] == allowed


def test_every_response_has_a_request_id_and_a_sane_one_is_echoed(anon: httpx.Client) -> None:
    assert anon.get("/healthz").headers["x-request-id"].startswith("req_")
    assert (
        anon.get("/healthz", headers={"X-Request-ID": "abc-123"}).headers["x-request-id"]
        == "abc-123"
    )
    assert (
        anon.get("/healthz", headers={"X-Request-ID": "a b\tc"}).headers["x-request-id"] != "a b\tc"
    )


def test_an_unexpected_error_is_a_500_without_a_stack_trace(
    settings: Settings, catalog: Catalog
) -> None:
    app = create_app(settings, catalog)

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("secret internals at /srv/app.py line 42")

    with serve_app(app) as url, httpx.Client(base_url=url) as anonymous:
        response = anonymous.get("/boom")
    body = expect_problem(response, 500, "internal")
    assert "secret" not in response.text and "Traceback" not in response.text
    assert "request id" in str(body["detail"])
