"""Traces: a processed video's run, each of its stages and the API requests that made it, as
OpenTelemetry spans carrying run and tenant ids, collected with the SDK's in-memory exporter."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from testkit.media_server import MediaServer
from tests.api.helpers import add_video, wait_done
from ves import telemetry


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """An in-memory exporter behind the process's tracer provider (installed once: OpenTelemetry
    allows one global provider per process), shut after the test so nothing more is kept."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()


def _attr(item: ReadableSpan, name: str) -> Any:
    return (item.attributes or {}).get(name)


def _finished(
    spans: InMemorySpanExporter, wanted: Callable[[ReadableSpan], bool], timeout_s: float = 60
) -> tuple[ReadableSpan, ...]:
    """The spans finished once one that is ``wanted`` is among them (waited for)."""
    deadline = time.monotonic() + timeout_s
    collected = spans.get_finished_spans()
    while not any(wanted(s) for s in collected) and time.monotonic() < deadline:
        time.sleep(0.1)  # past the deadline, the assertions say what is missing
        collected = spans.get_finished_spans()
    return collected


def test_a_run_and_its_stages_and_requests_are_traced(
    spans: InMemorySpanExporter, processing: Any, lobby_media: MediaServer, catalog: Catalog
) -> None:
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    accepted = client.post(f"/api/product/videos/{video_id}/execute")
    run_id = accepted.json()["run_id"]
    assert wait_done(client, video_id)["state"] == "succeeded"
    tenant = TenantStore(catalog).find_tenant("acme")
    assert tenant is not None
    tenant_id = tenant.tenant_id
    # The run's span ends when its flow returns: after it is marked succeeded, its cost is
    # recorded, it is indexed for search and its Prefect artifacts are attached (CI once
    # read the spans before that).
    collected = _finished(spans, lambda s: s.name == "run" and _attr(s, "ves.run_id") == run_id)

    (run,) = [s for s in collected if s.name == "run" and _attr(s, "ves.run_id") == run_id]
    assert _attr(run, "ves.tenant_id") == tenant_id and _attr(run, "ves.video_id") == video_id
    assert _attr(run, "prefect.flow_run.id")  # linked to the Prefect flow run
    stages = {_attr(s, "ves.stage"): s for s in collected if _attr(s, "ves.run_id") == run_id}
    assert {"decode", "sample", "detect", "track", "world_state", "evidence"} <= set(stages)
    for stage in stages.values():
        assert stage.context.trace_id == run.context.trace_id  # one trace per run
        assert run.start_time <= stage.start_time and stage.end_time <= run.end_time

    route = "POST /api/product/videos/{video_id}/execute"
    (execute,) = [s for s in collected if s.name == route]  # one span a request
    assert _attr(execute, "http.response.status_code") == 202
    assert _attr(execute, "ves.tenant_id") == tenant_id
    assert _attr(execute, "http.route") == "/api/product/videos/{video_id}/execute"


def test_tracing_is_off_unless_an_endpoint_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    assert not telemetry.exporting()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert telemetry.exporting()
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert not telemetry.exporting()
