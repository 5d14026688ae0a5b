"""The service the fuzzer talks to: the real app over real HTTP, on a throwaway data folder.

The app is built by ``api.app.create_app`` exactly as ``ves serve`` builds it (real SQLite catalog,
real blob store, real auth), and served by uvicorn on a free port; only the orchestrator is
replaced, by one that accepts runs and leaves them ``queued``: fuzzing is about the API, and a
Prefect server that is down would make every execute a 503 the fuzzer must count as a failure.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import uvicorn

from api.app import create_app
from storage.catalog.database import Catalog
from storage.catalog.records import Run
from storage.catalog.tenants import TenantStore
from stress.fuzz.seed import SeededRun, seed_succeeded_run, seed_webhook, with_delivery
from testkit.submitters import QuietSubmitter
from ves.plans import PlanLimits
from ves.settings import Settings

FUZZ_PLAN = "fuzz"
# Room for thousands of generated adds, executes and asks: a plan limit reached early would turn
# every later add into the same 402 and leave the states behind it unexplored. The sandbox's
# limits are still fuzzed through the tenants' 402 paths elsewhere (tests/api/test_billing.py).
_FUZZ_LIMITS = PlanLimits(
    videos=1_000_000,
    executions_per_month=1_000_000,
    processed_s_per_month=1e9,
    concurrent_runs=100,
    asks_per_day=1_000_000,
)


class QueueOnlySubmitter(QuietSubmitter):
    """Accepts every run and processes none: runs stay ``queued``."""

    async def submit(self, run: Run, *, concurrency: int) -> str:
        return str(uuid.uuid4())


@dataclass(frozen=True)
class FuzzTarget:
    """Where the served API is, the key of the tenant the fuzzer acts as, and that tenant's
    processed video when one was made."""

    base_url: str
    api_key: str
    tenant_id: str
    seeded: SeededRun | None = None


def fuzz_settings(data_dir: Path) -> Settings:
    """Settings of the fuzzed service: no network is contacted for a generated URL (no probe,
    no private addresses), the fuzz tenant's plan leaves room for every generated request, and
    no ``VES_*``/``AWS_*`` variable of the shell reaches it (the operator's catalog database or
    bucket must never receive fuzzed writes); the failed-key limiter is out of the way."""
    own_env = {k: v for k, v in os.environ.items() if not k.startswith(("VES_", "AWS_"))}
    with mock.patch.dict(os.environ, own_env, clear=True):  # never the operator's DB or bucket
        return Settings(
            data_dir=data_dir,
            probe_sources=False,
            allow_private_sources=False,
            max_queued_runs=10_000,
            # The coverage phase and the auth checks send hundreds of requests without a key or
            # with a wrong one; past the real limit every later request would answer 429, the
            # checks expecting 401 would see that instead, and the rest would go unexplored. The
            # limiter itself is tested in tests/api/test_keys.py.
            auth_fail_limit=1_000_000,
            plans={"sandbox": PlanLimits(), FUZZ_PLAN: _FUZZ_LIMITS},
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _serve(settings: Settings, catalog: Catalog) -> Iterator[str]:
    """uvicorn in a thread until the block ends; yields the base URL."""
    port = _free_port()
    app = create_app(settings, catalog, QueueOnlySubmitter())
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="fuzz-api", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


@contextmanager
def fuzz_target(with_run: bool = True) -> Iterator[FuzzTarget]:
    """A served API on a temporary data folder, and a real tenant's key (made as
    ``ves keys create`` makes one), all removed when the block ends; ``with_run``: the tenant
    also has a video processed by the real flow (``stress.fuzz.seed``)."""
    with tempfile.TemporaryDirectory(prefix="ves-fuzz-") as tmp:
        settings = fuzz_settings(Path(tmp) / "data")
        catalog = Catalog.from_settings(settings)
        try:
            tenants = TenantStore(catalog)
            tenant = tenants.create_tenant("fuzz", plan=FUZZ_PLAN)
            key = tenants.create_key(tenant.tenant_id)[1]
            seeded = None
            if with_run:
                webhook_id = seed_webhook(catalog, tenant.tenant_id)
                seeded = seed_succeeded_run(settings, catalog, tenant.tenant_id, FUZZ_PLAN)
                seeded = with_delivery(catalog, tenant.tenant_id, seeded, webhook_id)
            with _serve(settings, catalog) as url:
                yield FuzzTarget(url, key, tenant.tenant_id, seeded)
        finally:
            catalog.dispose()
