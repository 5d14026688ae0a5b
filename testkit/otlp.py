"""An OTLP/HTTP trace receiver for tests: what a collector at ``OTEL_EXPORTER_OTLP_ENDPOINT`` gets.

The service's processes export with the SDK's OTLP/HTTP exporter (protobuf over ``POST
/v1/traces``); this server decodes each request with OpenTelemetry's own protobuf messages and
keeps the spans, so an end-to-end test can read what left the API and the flow runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    service: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def decode(body: bytes) -> list[ReceivedSpan]:
    """The spans of one OTLP ``ExportTraceServiceRequest``."""
    request = ExportTraceServiceRequest.FromString(body)
    found = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for item in scope_spans.spans:
                found.append(
                    ReceivedSpan(
                        item.name,
                        str(resource.get("service.name", "")),
                        item.trace_id.hex(),
                        item.span_id.hex(),
                        item.parent_span_id.hex(),
                        {a.key: _value(a.value) for a in item.attributes},
                    )
                )
    return found


class OtlpReceiver:
    """``with OtlpReceiver() as otlp:`` serves on ``otlp.endpoint`` until the block ends."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        lock = threading.Lock()
        spans = self.spans

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path == "/v1/traces":
                    with lock:
                        spans.extend(decode(body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> OtlpReceiver:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait_for(
        self, found: Callable[[list[ReceivedSpan]], bool], timeout_s: float = 30
    ) -> list[ReceivedSpan]:
        """The spans received once ``found`` holds of them (raises after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        while not found(list(self.spans)):
            if time.monotonic() > deadline:
                names = sorted({s.name for s in self.spans})
                raise AssertionError(f"not received in {timeout_s} s; got {names}")
            time.sleep(0.2)
        return list(self.spans)
