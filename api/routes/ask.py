"""Operation 7: ask a question about a video, answered only from its newest succeeded run.

The answer is computed from the run's artifacts (``ask/``): every claim cites evidence spans of
operation 6, and a guardrail checks each citation and each number before it is said. What the
artifacts cannot back is refused with ``grounded: false`` and a ``refusal_reason``. Every ask is
logged with its run (for review) and counted in the tenant's usage.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Request

from api.audit import AuditedRoute, ids_of, note_ids
from api.deps import CatalogDep, SearchDep, SettingsDep, TenantDep
from api.operations.ask import ask_about, ask_workspace_about
from api.problems import problem_responses
from api.schemas.ask import AskAnswer, AskRequest, WorkspaceAskAnswer
from ask.engine import Phraser
from ask.world import WorldCache

router = APIRouter(tags=["ask"], route_class=AuditedRoute)

ASK_EXAMPLES = {
    "count": {"summary": "A count", "value": {"question": "How many objects appeared?"}},
    "when": {"summary": "A time", "value": {"question": "When did the first object appear?"}},
    "text": {"summary": "Text in the video", "value": {"question": "What text is visible?"}},
    "window": {
        "summary": "A stretch of time",
        "value": {"question": "What happened between 0:04 and 0:10?"},
    },
    "refused": {
        "summary": "Refused: outside the detectors",
        "value": {"question": "Did a helicopter land?"},
    },
}


def _worlds(request: Request) -> WorldCache:
    cache: WorldCache = request.app.state.worlds
    return cache


@router.post(
    "/api/product/videos/{video_id}/ask",
    summary="Ask a question about a video",
    description=(
        "Answers from the newest succeeded run's artifacts only. `grounded: true` answers cite "
        "the evidence spans (operation 6) that carry every claim; each citation exists in the "
        "run and overlaps the time its claim speaks of, and no number or time is stated without "
        "one. `grounded: false` answers make no claim about the video; `refusal_reason` is "
        "`no_evidence` (nothing in the run backs it; the answer says what was examined), "
        "`outside_detectors` (the run's detectors cannot see it, e.g. a helicopter when it ran "
        "motion), `off_topic` or `not_understood`. Times may be written as seconds or mm:ss."
    ),
    responses=problem_responses(400, 401, 402, 404, 409, 415, 422),
)
def ask_video(
    video_id: str,
    request: Request,
    tenant: TenantDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    body: Annotated[AskRequest, Body(openapi_examples=ASK_EXAMPLES)],
) -> AskAnswer:
    phraser: Phraser | None = getattr(request.app.state, "phraser", None)
    answer = ask_about(
        tenant, video_id, body.question, catalog, settings, _worlds(request), phraser
    )
    note_ids(request, **ids_of(answer.model_dump(include={"run_id", "ask_id", "citations"})))
    return answer


WORKSPACE_EXAMPLES = {
    "which": {
        "summary": "Which videos show a text",
        "value": {"question": "Which videos show GATE 7?"},
    },
    "count": {
        "summary": "A count across videos",
        "value": {"question": "How many people were seen across all videos yesterday?"},
    },
    "dwell": {
        "summary": "Long stops",
        "value": {"question": "Which videos have an object stopped over 5 minutes?"},
    },
}


@router.post(
    "/api/product/ask",
    summary="Ask a question about every video of the workspace",
    description=(
        "The same body and guardrails as asking one video, over the newest published run of "
        "every video: the question is read as a search (`GET /api/product/search`'s `q`) and "
        "answered from its hits only. Answered shapes: which videos show something and when "
        "(each video and time cited), and how many things were seen (per video and in all; a "
        "thing seen again counts once in its video unless the question asks how many times). "
        "Each citation names its `video_id`, `run_id` and evidence span; every time said lies "
        "in a cited span. `grounded: false` answers make no claim and give a `refusal_reason` "
        "(`no_evidence` says what was searched). Clock times (`yesterday`, `after 22:00 on "
        "2026-11-20`) use the videos' `recorded_at`, in UTC. Logged and counted as an ask."
    ),
    responses=problem_responses(400, 401, 402, 415, 422),
)
def ask_workspace(
    request: Request,
    tenant: TenantDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    engine: SearchDep,
    body: Annotated[AskRequest, Body(openapi_examples=WORKSPACE_EXAMPLES)],
) -> WorkspaceAskAnswer:
    answer = ask_workspace_about(tenant, body.question, catalog, settings, engine)
    note_ids(request, ask_id=answer.ask_id)
    return answer
