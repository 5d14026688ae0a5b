"""Recording the audit trail (``storage.catalog.audit``) of the REST routes and the MCP tools.

One place for the routes: ``AuditedRoute``, the route class of every router whose routes touch
videos (videos, runs, artifacts, ask, audit). Once a route has answered (or raised), it appends
one record to the caller's chain: the tenant and key id that ``current_tenant`` authenticated
(a request that failed authentication has no tenant and is not recorded), the route's method
and template (``GET /api/product/videos/{video_id}/scene-graph``), the video id of the path, the
other path ids and what the route noted with ``note_ids`` (the run it read, the evidence an
answer cites, the video a registration made), the status it answered, the client's address
(``api.auth.client_address``) and the time. The MCP tools record the same way through
``record_tool`` (action ``mcp:<tool>``).

When: a write (POST, PUT) is appended before its answer goes out, in the request's thread.
A read (GET) is handed to ``AuditRecorder``'s writer thread and appended right after, with
whatever other reads wait, in one transaction per tenant: on SQLite each write transaction of
the catalog costs some 4 to 8 ms here (its commit and closing the connection), which a read
answering in 4 ms would otherwise pay every time, and parallel reads would queue for the one
write lock. The price: a read's record is durable a few milliseconds after its answer, and
the records still waiting are lost if the process is killed (at exit they are flushed). The
audit route flushes first, so it lists every call answered before it. ``at`` is when the call
answered; ``seq`` is the order in the chain, which may put a write before a read that
answered a moment earlier.

Fail open, for reads and writes alike: a record that cannot be appended is logged (ERROR) and
counted (``AuditRecorder.failures``, logged with its running total) and the answer goes out.
The record is written once the outcome is known, after the action committed: answering 503
then would tell the client that a committed registration, run or ask failed, and its retry
would do it twice, while the failure itself (the catalog refusing a write) is one the action
itself would have met a moment before. The cost is that a catalog failing exactly between an
action and its record loses that record; the ERROR line and the count say so.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from api.auth import client_address
from storage.catalog.audit import AuditEntry, AuditLog
from storage.catalog.records import Tenant
from ves.clock import now_rfc3339
from ves.errors import VesError

log = logging.getLogger("ves.api")

TENANT_STATE = "ves_tenant"
"""Attribute of ``request.state`` holding the authenticated ``Tenant`` (``current_tenant``)."""
_IDS_STATE = "ves_audit_ids"
READ_METHODS = frozenset({"GET", "HEAD"})


DEMO_KEY = "demo"
"""``key_id`` of what the public onboarding does for a new demo workspace."""


def act_as(request: Request, tenant: Tenant) -> None:
    """Record the request in ``tenant``'s chain (routes without a key: the onboarding)."""
    setattr(request.state, TENANT_STATE, tenant)


def note_ids(request: Request, **ids: Any) -> None:
    """Add ids a route touched beyond its path's (``run_id``, ``evidence_ids``, ``video_id``)."""
    noted: dict[str, Any] = getattr(request.state, _IDS_STATE, {})
    noted.update({k: v for k, v in ids.items() if v is not None})
    setattr(request.state, _IDS_STATE, noted)


def status_of(error: BaseException) -> int:
    """The status the problem handlers answer ``error`` with."""
    if isinstance(error, VesError):
        return error.status
    if isinstance(error, RequestValidationError):
        return 422
    if isinstance(error, HTTPException):
        return error.status_code
    return 500


class AuditRecorder:
    """Appends records to the catalog's audit log, failing open (see the module docstring).

    ``record`` appends at once, in the caller's thread (writes: the answer waits for it).
    ``enqueue`` hands the record to one writer thread and returns (reads): the thread appends
    whatever is waiting in one transaction per tenant, so records of parallel reads share a
    commit. ``flush`` waits until everything handed over is appended (the audit route does,
    so its answer holds every call answered before it).
    """

    def __init__(self, audit: AuditLog, batch: int = 500) -> None:
        self.audit = audit
        self.failures = 0
        self._batch = batch
        self._queue: queue.Queue[AuditEntry] = queue.Queue()
        self._lock = threading.Lock()
        self._writer: threading.Thread | None = None

    def record(self, entry: AuditEntry) -> None:
        """Append ``entry`` now; a failure is logged and counted, never raised."""
        self._append([entry])

    def enqueue(self, entry: AuditEntry) -> None:
        """Hand ``entry`` to the writer thread (started on first use)."""
        with self._lock:
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(target=self._write, name="audit", daemon=True)
                self._writer.start()
                atexit.register(self.flush)
        self._queue.put(stamped(entry))

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every enqueued record is appended (or lost); False on timeout."""
        done = self._queue.all_tasks_done
        with done:
            return done.wait_for(lambda: self._queue.unfinished_tasks == 0, timeout_s)

    def _write(self) -> None:
        while True:
            entries = [self._queue.get()]
            while len(entries) < self._batch and not self._queue.empty():
                entries.append(self._queue.get_nowait())
            self._append(entries)
            for _ in entries:
                self._queue.task_done()

    def _append(self, entries: list[AuditEntry]) -> None:
        try:
            self.audit.append_many(entries)
        except Exception:  # the answers went out regardless (fail open)
            with self._lock:
                self.failures += len(entries)
            first = entries[0]
            log.exception(
                "audit record lost (%d so far): %s %s", self.failures, first.action, first.video_id
            )


def stamped(entry: AuditEntry) -> AuditEntry:
    """``entry`` with the time it answered, if it has none yet."""
    return entry if entry.at else replace(entry, at=now_rfc3339())


def entry_for(
    tenant: Tenant, action: str, outcome: int, ids: dict[str, Any], client: str
) -> AuditEntry:
    """The record of ``tenant``'s call of ``action``: ``video_id`` moves out of ``ids``."""
    rest = dict(ids)
    video_id = rest.pop("video_id", None)
    key_id = tenant.key_id or "unknown"
    return AuditEntry(tenant.tenant_id, key_id, action, outcome, video_id, rest, client)


def _request_entry(request: Request, route: APIRoute, outcome: int) -> AuditEntry | None:
    tenant = getattr(request.state, TENANT_STATE, None)
    if not isinstance(tenant, Tenant):
        return None
    ids = {**request.path_params, **getattr(request.state, _IDS_STATE, {})}
    action = f"{request.method} {route.path}"
    return entry_for(tenant, action, outcome, ids, client_address(request))


async def record_request(request: Request, route: APIRoute, outcome: int) -> None:
    """Append the record of a request that authenticated (others have no tenant to record)."""
    entry = _request_entry(request, route, outcome)
    if entry is None:
        return
    recorder: AuditRecorder = request.app.state.audit
    if request.method in READ_METHODS:
        recorder.enqueue(entry)
    else:
        await run_in_threadpool(recorder.record, entry)


class AuditedRoute(APIRoute):
    """A route whose every authenticated call is recorded in the caller's audit chain."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def handle_audited(request: Request) -> Response:
            try:
                response = await handle(request)
            except Exception as error:
                await record_request(request, self, status_of(error))
                raise
            await record_request(request, self, response.status_code)
            return response

        return handle_audited


def ids_of(document: dict[str, Any]) -> dict[str, Any]:
    """The ids an answer names at its top (video, run, ask) and the evidence it cites."""
    named = ("video_id", "run_id", "ask_id", "evidence_id", "note_id")
    ids = {k: document[k] for k in named if document.get(k)}
    cited = [c["evidence_id"] for c in document.get("citations") or ()]
    return {**ids, "evidence_ids": cited} if cited else ids
