"""Prefect's SQLite writes: the refusal its DEFERRED transactions meet, and its end.

Real Prefect database configuration, real SQLite file (WAL, Prefect's own pragmas): one
transaction reads, another writes and commits, then the first writes. As shipped, the first is
refused at once with "database is locked" (its snapshot is stale; ``busy_timeout`` cannot help).
With :func:`cli.prefect_server.immediate_sqlite_writes` the second waits for the first, and both
rows land. If Prefect stops refusing as shipped, the first test fails: the patch is then no longer
needed and should go.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
import sqlalchemy as sa
from prefect.server.database.configurations import AioSqliteConfiguration

from cli.prefect_server import immediate_sqlite_writes


async def _read_then_write(path: Path) -> tuple[list[BaseException | None], int]:
    config = AioSqliteConfiguration(connection_url=f"sqlite+aiosqlite:///{path}")
    engine = await config.engine()
    async with engine.connect() as connection:
        await connection.exec_driver_sql("CREATE TABLE beats (n INTEGER)")
    read, written = asyncio.Event(), asyncio.Event()

    async def reads_then_writes() -> None:
        async with await config.session(engine) as session, config.begin_transaction(session):
            await session.execute(sa.text("SELECT count(*) FROM beats"))
            read.set()
            # As shipped the other commits now; with the patch it waits for this one to end.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(written.wait(), 0.5)
            await session.execute(sa.text("INSERT INTO beats VALUES (1)"))

    async def writes() -> None:
        await read.wait()
        async with await config.session(engine) as session, config.begin_transaction(session):
            await session.execute(sa.text("INSERT INTO beats VALUES (2)"))
        written.set()

    outcomes = await asyncio.gather(reads_then_writes(), writes(), return_exceptions=True)
    async with engine.connect() as connection:
        rows = (await connection.exec_driver_sql("SELECT count(*) FROM beats")).scalar_one()
    await engine.dispose()
    return [o if isinstance(o, BaseException) else None for o in outcomes], int(rows)


def test_as_shipped_a_read_then_write_transaction_is_refused_at_once(tmp_path: Path) -> None:
    outcomes, rows = asyncio.run(_read_then_write(tmp_path / "prefect.db"))
    refused, other = outcomes
    assert isinstance(refused, sa.exc.OperationalError) and "database is locked" in str(refused)
    assert other is None and rows == 1


def test_with_writes_taking_their_lock_first_both_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = AioSqliteConfiguration.begin_transaction
    monkeypatch.setattr(AioSqliteConfiguration, "begin_transaction", shipped)  # restored after
    immediate_sqlite_writes()
    immediate_sqlite_writes()  # idempotent: wraps once
    assert AioSqliteConfiguration.begin_transaction is not shipped
    outcomes, rows = asyncio.run(_read_then_write(tmp_path / "prefect.db"))
    assert outcomes == [None, None] and rows == 2
