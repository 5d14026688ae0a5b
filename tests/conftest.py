"""Shared fixtures: an isolated environment, settings on a temporary data folder, a live API.

The catalog is SQLite in the data folder unless ``VES_TEST_DATABASE=postgres`` is set: then every
test gets a fresh database on the session's PostgreSQL server (``testkit/postgres.py``).
The blob store is the data folder unless ``VES_TEST_STORAGE=s3`` is set: then every test gets a
fresh bucket on the session's S3 server (``testkit/s3.py``).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import psutil
import pytest

from api.app import create_app
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from testkit.live_server import serve_app
from ves.settings import Settings

pytest_plugins = [
    "tests.fixtures.bundles",
    "testkit.postgres",
    "testkit.s3",
    "testkit.vtest",
]

# Read once at import: the autouse ``_isolated_env`` removes every VES_* variable before tests run.
TEST_DATABASE = os.environ.get("VES_TEST_DATABASE", "sqlite")
TEST_STORAGE = os.environ.get("VES_TEST_STORAGE", "local")


_HARNESS_APP = "prefect.server.api.server:create_app"


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop Prefect test-harness servers an earlier pytest of this venv left behind.

    ``prefect_harness`` stops its server at the session's end; a pytest killed before that
    (SIGKILL, a timeout, SIGPIPE from ``pytest | head``) leaves it running with no parent, one
    more idle server holding a port and memory on each such run. Only ORPHANED servers of this
    venv's Python are stopped: no parent, or a parent that is no Python process (init or the
    container's subreaper adopted it). A concurrent pytest, or a benchmark running flows under
    its own harness (``benchmarks/*.py``), keeps its own.
    """
    for process in psutil.process_iter(["cmdline"]):
        command = process.info["cmdline"] or []
        if not command or command[0] != sys.executable or _HARNESS_APP not in command:
            continue
        with contextlib.suppress(psutil.Error):
            if _orphaned(process):
                process.kill()


def _orphaned(process: psutil.Process) -> bool:
    """No parent, or one that is no Python program (init or a subreaper adopted it)."""
    parent = process.parent()
    if parent is None:
        return True
    try:
        command = " ".join([parent.name(), *parent.cmdline()])
    except psutil.AccessDenied:  # a system process such as init: not ours
        return True
    return "python" not in command and "pytest" not in command


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """A temporary Prefect server for flows run in-process (started once per session).

    Run logs are not shipped to it: Prefect's background log worker keeps sockets that outlive
    the tests (a ResourceWarning at interpreter exit), and no test reads those logs.
    """
    from prefect.settings import PREFECT_LOGGING_TO_API_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with (
        temporary_settings({PREFECT_LOGGING_TO_API_ENABLED: False}),
        prefect_test_harness(server_startup_timeout=180),
    ):
        yield


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's VES_* variables, nor the AWS_* ones the blob store reads."""
    for name in list(os.environ):
        if name.startswith(("VES_", "AWS_")):
            monkeypatch.delenv(name)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def database_url(request: pytest.FixtureRequest) -> str | None:
    """The catalog's database: None (the SQLite file in the data folder) or a fresh PostgreSQL
    database when ``VES_TEST_DATABASE=postgres``."""
    if TEST_DATABASE == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    if TEST_DATABASE != "sqlite":
        pytest.fail(f"VES_TEST_DATABASE must be sqlite or postgres, not {TEST_DATABASE!r}")
    return None


@pytest.fixture
def storage_overrides(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """The blob store's settings: none (the data folder) or a fresh bucket on the session's S3
    server when ``VES_TEST_STORAGE=s3``. They are exported to the environment too, since flows
    read their settings from it as a worker's do."""
    if TEST_STORAGE == "local":
        return {}
    if TEST_STORAGE != "s3":
        pytest.fail(f"VES_TEST_STORAGE must be local or s3, not {TEST_STORAGE!r}")
    overrides: dict[str, str] = request.getfixturevalue("s3_server").use_fresh_bucket(monkeypatch)
    return overrides


@pytest.fixture
def settings(
    data_dir: Path, database_url: str | None, storage_overrides: dict[str, str]
) -> Settings:
    """Settings of a service that may fetch from this machine (the test media server)."""
    return Settings(
        data_dir=data_dir,
        database_url=database_url,
        allow_private_sources=True,
        source_timeout_s=3,
        **storage_overrides,
    )


@pytest.fixture
def catalog(settings: Settings) -> Iterator[Catalog]:
    catalog = Catalog.from_settings(settings)
    yield catalog
    catalog.dispose()  # pooled PostgreSQL connections go before the test's database


@pytest.fixture
def tenants(catalog: Catalog) -> TenantStore:
    return TenantStore(catalog)


@pytest.fixture
def api_url(settings: Settings, catalog: Catalog) -> Iterator[str]:
    """Base URL of a live API (real uvicorn, real HTTP) over the test's catalog."""
    with serve_app(create_app(settings, catalog)) as url:
        yield url


Client = Callable[[str], httpx.Client]


@pytest.fixture
def client_for(api_url: str, tenants: TenantStore) -> Iterator[Client]:
    """``client_for("acme")``: an HTTP client holding a fresh key of tenant ``acme``."""
    clients: list[httpx.Client] = []

    def make(tenant_name: str) -> httpx.Client:
        tenant = tenants.find_tenant(tenant_name) or tenants.create_tenant(tenant_name)
        _, key = tenants.create_key(tenant.tenant_id)
        client = httpx.Client(
            base_url=api_url, headers={"Authorization": f"Bearer {key}"}, timeout=30
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(client_for: Client) -> httpx.Client:
    """A client of tenant ``acme``."""
    return client_for("acme")


@pytest.fixture
def anon(api_url: str) -> Iterator[httpx.Client]:
    """A client without a key."""
    with httpx.Client(base_url=api_url, timeout=30) as anonymous:
        yield anonymous


@pytest.fixture
def client_with(
    settings: Settings, catalog: Catalog, tenants: TenantStore
) -> Iterator[Callable[..., httpx.Client]]:
    """``client_with(allow_private_sources=False)``: a client of ``acme`` on an API whose
    settings differ from the default test settings."""
    with ExitStack() as stack:

        def make(**overrides: object) -> httpx.Client:
            app = create_app(settings.model_copy(update=overrides), catalog)
            url = stack.enter_context(serve_app(app))
            tenant = tenants.find_tenant("acme") or tenants.create_tenant("acme")
            _, key = tenants.create_key(tenant.tenant_id)
            headers = {"Authorization": f"Bearer {key}"}
            return stack.enter_context(httpx.Client(base_url=url, headers=headers, timeout=30))

        yield make


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave with pytest's exit status, without the interpreter's own teardown.

    After every test had passed and pytest had printed its summary, a clean-clone CI run died in
    that teardown with a segmentation fault (exit 139): native threads left by the libraries the
    suite loads in one process (onnxruntime, FFmpeg, Dask, uvicorn servers) and destroyed in an
    order no test controls. Every test and fixture has finished and reported by now; only
    garbage collection at exit is skipped.
    """
    import sys

    status = getattr(config, "_ves_exit_status", None)
    if status is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(status))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config._ves_exit_status = exitstatus  # type: ignore[attr-defined]
