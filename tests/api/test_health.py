from __future__ import annotations

import httpx


def test_health_and_readiness_need_no_key(anon: httpx.Client) -> None:
    assert anon.get("/healthz").json() == {"status": "ok"}
    ready = anon.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"catalog": "ok", "data_dir": "ok"}


def test_openapi_documents_every_route_with_a_description(anon: httpx.Client) -> None:
    spec = anon.get("/openapi.json").json()
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            assert operation.get("description") or operation.get("summary"), (method, path)
    assert anon.get("/docs").status_code == 200
