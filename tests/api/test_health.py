from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from testkit.live_server import free_port


def test_health_and_readiness_need_no_key_and_name_what_is_down(
    anon: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no orchestrator reachable, readiness is 503 and names exactly the parts that are
    down; what this process holds itself (catalog, storage) is ok. The 200 of a whole service
    is checked end to end (tests/test_e2e.py)."""
    monkeypatch.setenv("PREFECT_API_URL", f"http://127.0.0.1:{free_port()}/api")
    assert anon.get("/healthz").json() == {"status": "ok"}
    ready = anon.get("/readyz")
    assert ready.status_code == 503
    body = ready.json()
    assert body["status"] == "not_ready"
    assert body["failing"] == ["prefect_api", "worker", "scheduler"]
    checks = body["checks"]
    assert [checks[p]["state"] for p in ("catalog", "artifact_storage")] == ["ok", "ok"]
    assert "ConnectError" in checks["prefect_api"]["detail"]
    assert all(c["latency_ms"] >= 0 for c in checks.values())


def test_openapi_documents_every_route_with_a_description(anon: httpx.Client) -> None:
    spec = anon.get("/openapi.json").json()
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            assert operation.get("description") or operation.get("summary"), (method, path)
    assert anon.get("/docs").status_code == 200


def test_a_corrupt_person_model_is_named_by_readiness(
    anon: httpx.Client, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A person network that is not the committed file (a truncated copy put in its place is
    the same case: the sha256 differs) is ``person_detector`` down, with the reason."""
    from tasks.detect.detectors import person_model

    broken = tmp_path / "pedestrian_ssdlite.onnx"
    broken.write_bytes(person_model.DEFAULT_MODEL.read_bytes()[:1000])
    monkeypatch.setattr(person_model, "DEFAULT_MODEL", broken)
    checks = anon.get("/readyz").json()["checks"]
    assert checks["person_detector"]["state"] == "down"
    assert "corrupt" in checks["person_detector"]["detail"], checks["person_detector"]
