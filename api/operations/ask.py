"""Asking a video a question (operation 7), or the whole workspace; shared by the routes and the
MCP tools."""

from __future__ import annotations

import dataclasses
from typing import Any

from api.schemas.ask import AskAnswer, WorkspaceAskAnswer
from ask.engine import Phraser, answer_question
from ask.world import WorldCache
from search.ask import ask_workspace
from search.engine import SearchEngine
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.served import name_citations, newest_run
from storage.catalog.asks import AskLog
from storage.catalog.database import Catalog
from storage.catalog.records import Tenant
from storage.catalog.runs.store import RunStore
from storage.catalog.usage import UsageStore, day_of, refuse
from storage.catalog.videos import VideoStore
from ves.clock import now_rfc3339
from ves.settings import Settings


def ask_about(
    tenant: Tenant,
    video_id: str,
    question: str,
    catalog: Catalog,
    settings: Settings,
    worlds: WorldCache,
    phraser: Phraser | None,
) -> AskAnswer:
    """Answer ``question`` from the video's newest succeeded run, log the ask and count it.

    Shared by the REST route and the MCP ``ask_video`` tool.
    """
    limits = settings.plan(tenant.plan)
    asked_today = UsageStore(catalog).value(tenant.tenant_id, day_of(now_rfc3339()), "asks")
    if asked_today >= limits.asks_per_day:  # before any work; recording checks it atomically
        raise refuse("asks_per_day", limits.asks_per_day, asked_today)
    videos, runs = VideoStore(catalog), RunStore(catalog)
    run = newest_run(videos, runs, worlds.reader, tenant.tenant_id, video_id)
    world = worlds.get(run.artifacts_path or "", video_id, run.run_id)
    title = videos.get(tenant.tenant_id, video_id).title  # its words name the place
    answer = answer_question(world, question, phraser, title=title)
    document = answer.as_dict()
    ask_id = AskLog(catalog).record(
        tenant.tenant_id, video_id, run.run_id, document, answer.phrased_by, limits
    )
    document["citations"] = name_citations(worlds.reader, runs, document["citations"], run)
    return AskAnswer(
        **document,
        video_id=video_id,
        run_id=run.run_id,
        ask_id=ask_id,
        coverage=world.coverage.as_dict(),
    )


def ask_workspace_about(
    tenant: Tenant, question: str, catalog: Catalog, settings: Settings, engine: SearchEngine
) -> WorkspaceAskAnswer:
    """Answer ``question`` over every video of the workspace, log the ask and count it (as a
    video's ask is counted). Shared by the REST route and the MCP ``ask_workspace`` tool."""
    limits = settings.plan(tenant.plan)
    asked_today = UsageStore(catalog).value(tenant.tenant_id, day_of(now_rfc3339()), "asks")
    if asked_today >= limits.asks_per_day:
        raise refuse("asks_per_day", limits.asks_per_day, asked_today)
    answer = ask_workspace(engine, tenant.tenant_id, question)
    cites: list[dict[str, Any]] = [dataclasses.asdict(c) for c in answer.citations]
    document: dict[str, Any] = {
        "question": answer.question,
        "answer": answer.answer,
        "grounded": answer.grounded,
        "confidence": round(answer.confidence, 3),
        "citations": cites,
        "refusal_reason": answer.refusal_reason,
        "interpreted": answer.interpreted,
        "searched": answer.searched,
    }
    ask_id = AskLog(catalog).record(tenant.tenant_id, None, None, document, "rules", limits)
    reader = ArtifactReader(engine.store)
    try:
        document["citations"] = name_citations(reader, RunStore(catalog), cites)
    finally:
        reader.close()
    return WorkspaceAskAnswer.model_validate(document | {"ask_id": ask_id})
