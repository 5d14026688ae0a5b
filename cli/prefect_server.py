"""Prefect's own server (``prefect server start``), with its SQLite writes taking their lock first.

Why: Prefect opens its SQLite write transactions DEFERRED unless a caller asks for a row lock
(``with_for_update``). Such a transaction reads under a snapshot and takes the write lock only at
its first write; when another connection has committed in between, SQLite refuses the upgrade at
once with ``SQLITE_BUSY_SNAPSHOT`` ("database is locked"), and ``busy_timeout`` (60 s in Prefect)
never applies, because waiting cannot make an old snapshot new. Under load the embedded server
logged these as "Worker channel heartbeat persistence failed" and "Encountered error during state
validation" (a 503 the client retries, or a worker channel closed). Taking the write lock at
``BEGIN`` (``BEGIN IMMEDIATE``) makes writers queue on ``busy_timeout`` instead, which is what
Prefect already does where it asks for ``with_for_update``. Reads outside a transaction are
untouched, so the UI's queries still run beside a writer (WAL).

PostgreSQL (``PREFECT_API_DATABASE_CONNECTION_URL``) is not affected: the change is to Prefect's
SQLite configuration class only. tests/cli/test_prefect_server.py shows the refusal on Prefect's
own class as shipped and its absence after :func:`immediate_sqlite_writes`.
"""

from __future__ import annotations

import sys
from contextlib import AbstractAsyncContextManager
from typing import Any

_PATCHED = "_ves_immediate_writes"


def immediate_sqlite_writes() -> None:
    """Make every transaction Prefect's SQLite configuration begins a ``BEGIN IMMEDIATE`` one."""
    from prefect.server.database.configurations import AioSqliteConfiguration

    if getattr(AioSqliteConfiguration.begin_transaction, _PATCHED, False):
        return
    shipped = AioSqliteConfiguration.begin_transaction

    def begin_transaction(
        self: AioSqliteConfiguration, session: Any, with_for_update: bool = False
    ) -> AbstractAsyncContextManager[Any]:
        return shipped(self, session, with_for_update=True)

    setattr(begin_transaction, _PATCHED, True)
    AioSqliteConfiguration.begin_transaction = begin_transaction  # type: ignore[method-assign,assignment]


def main() -> int:
    """``python -m cli.prefect_server start --host H --port P``: Prefect's CLI, patched first."""
    immediate_sqlite_writes()
    from prefect.cli import app

    sys.argv = ["prefect", "server", *sys.argv[1:]]
    app()  # exits by itself on an error
    return 0


if __name__ == "__main__":
    sys.exit(main())
