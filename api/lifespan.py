"""The API's background duty: reap runs that stopped without finishing, at start and on a timer."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI

from flows.orchestrator import Submitter, reap
from storage.catalog.runs.store import RunStore
from ves.settings import Settings

log = logging.getLogger("ves.api")

REAP_EVERY_S = 15.0


def reaper_lifespan(
    settings: Settings,
    runs: RunStore,
    submitter: Submitter,
    alongside: Callable[[], AbstractAsyncContextManager[None]] | None = None,
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """A lifespan that reaps once at start-up, then every ``REAP_EVERY_S`` (or half the heartbeat
    timeout, when that is shorter) until shutdown.

    Args:
        alongside: a context entered for the app's lifetime too (the MCP session manager's
            ``run``, whose task group holds the MCP sessions).
    """

    async def loop() -> None:
        while True:
            try:
                await reap(settings, runs, submitter)
            except Exception:  # the reaper must outlive any one bad pass
                log.exception("reaper pass failed")
            await asyncio.sleep(min(REAP_EVERY_S, settings.heartbeat_timeout_s / 2))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(loop(), name="reaper")
        try:
            async with alongside() if alongside else contextlib.nullcontext():
                yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            app.state.reader.close()

    return lifespan
