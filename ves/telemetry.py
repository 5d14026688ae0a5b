"""OpenTelemetry traces: off unless an OTLP endpoint is configured by the standard variables.

``configure_tracing()`` is called where a process starts its work (the API app, a flow run). With
``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` set (and
``OTEL_SDK_DISABLED`` not true) it installs an SDK tracer provider exporting by OTLP over HTTP,
named by ``OTEL_SERVICE_NAME`` (default ``video-evidence-service``); otherwise it leaves
OpenTelemetry's no-op provider, so tracing costs nothing. A provider installed before (a test's
in-memory exporter, an operator's own setup) is kept. Prefect 3 emits its own spans for flow and
task runs through the same global provider, so the service's run and stage spans nest under them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span

TRACER_NAME = "video-evidence-service"
_lock = threading.Lock()
_configured = False


def exporting() -> bool:
    """Whether the standard variables ask for spans to be exported."""
    if os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    return any(
        os.environ.get(name)
        for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def configure_tracing() -> None:
    """Install the OTLP exporting provider once per process, when configured."""
    global _configured
    with _lock:
        if _configured or not exporting():
            return
        _configured = True
        if _sdk_installed():
            return  # someone set a provider up already: theirs is kept
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        name = os.environ.get("OTEL_SERVICE_NAME", TRACER_NAME)
        provider = TracerProvider(resource=Resource.create({"service.name": name}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)


def flush(timeout_ms: int = 5000) -> None:
    """Export the spans still queued now. A process that ends by ``os._exit`` (a warm-started
    flow run) skips the SDK's exit hook, and its last batch (the run's own span) would be lost."""
    force_flush = getattr(trace.get_tracer_provider(), "force_flush", None)
    if callable(force_flush):
        force_flush(timeout_ms)


def _sdk_installed() -> bool:
    return type(trace.get_tracer_provider()).__module__.startswith("opentelemetry.sdk")


def tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER_NAME)


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Span]:
    """A span named ``name`` with ``attributes`` (None values left out), current while open."""
    kept = {k: v for k, v in attributes.items() if v is not None}
    with tracer().start_as_current_span(name, attributes=kept) as current:
        yield current
