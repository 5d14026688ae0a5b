"""The model phraser: its reply is said only if it cites the claims' spans and adds no number."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request, Response
from pydantic import SecretStr

from ask.engine import answer_question
from ask.phrasing import LlmPhraser
from ask.types import Citation, Claim, Coverage
from ask.world import RunWorld, Thing
from testkit.live_server import free_port, serve_app
from ves.settings import Settings

A = Citation("ev_a", 0.8, 8.2)
B = Citation("ev_b", 4.0, 11.6)
C = Citation("ev_c", 13.4, 19.2)
CLAIMS = (
    Claim("3 objects appeared.", (A, B, C), counts=(3,), counted=3),
    Claim("A moving object (obj_a) appeared at 0.8 s.", (A,), times=(0.8,)),
    Claim("A moving object (obj_b) appeared at 4.0 s.", (B,), times=(4.0,)),
    Claim(
        "A moving object (obj_c) was in view for 5.8 s, from 13.4 s to 19.2 s.",
        (C,),
        times=(13.4, 19.2),
        durations=(5.8,),
    ),
)
QUESTION = "when did objects appear"


@dataclass
class Reply:
    """What the fake endpoint answers: a completion of ``content``, or ``raw`` as the body."""

    content: str = ""
    status: int = 200
    raw: str | None = None
    delay_s: float = 0.0


@dataclass
class FakeLlm:
    """An OpenAI-compatible endpoint that records its requests and answers as scripted."""

    url: str = ""
    reply: Reply = field(default_factory=Reply)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def complete(request: Request) -> Response:
            self.requests.append({"headers": request.headers, "body": await request.json()})
            await asyncio.sleep(self.reply.delay_s)
            body = self.reply.raw
            if body is None:
                message = {"role": "assistant", "content": self.reply.content}
                body = json.dumps({"choices": [{"index": 0, "message": message}]})
            return Response(body, self.reply.status, media_type="application/json")

        return app

    def phraser(self, timeout_s: float = 5.0) -> LlmPhraser:
        return LlmPhraser(f"{self.url}/v1", "test-model", timeout_s, "sk-test")


@pytest.fixture(scope="module")
def _served() -> Iterator[FakeLlm]:
    fake = FakeLlm()
    with serve_app(fake.app()) as url:
        fake.url = url
        yield fake


@pytest.fixture
def llm(_served: FakeLlm) -> FakeLlm:
    """The fake endpoint, its script and its record fresh for each test."""
    _served.reply, _served.requests = Reply(), []
    return _served


def test_a_checked_phrasing_is_said(llm: FakeLlm) -> None:
    llm.reply = Reply("A moving object appeared at 4.0 s [ev_b], after one at 0.8 s [ev_a].")
    answer = llm.phraser().phrase(QUESTION, CLAIMS)
    assert answer is not None
    assert answer.answer == "A moving object appeared at 4.0 s, after one at 0.8 s."
    assert (answer.grounded, answer.phrased_by, answer.citations) == (True, "llm", (A, B))
    [sent] = llm.requests
    assert sent["headers"]["authorization"] == "Bearer sk-test"
    body = sent["body"]
    assert (body["model"], body["temperature"]) == ("test-model", 0)
    prompt = body["messages"][-1]["content"]
    assert QUESTION in prompt
    assert "1. [ev_a, ev_b, ev_c] 3 objects appeared." in prompt
    assert all(claim.text in prompt for claim in CLAIMS)


def test_markers_may_list_several_ids(llm: FakeLlm) -> None:
    llm.reply = Reply("Three objects appeared [ev_a, ev_b][ev_c].")
    answer = llm.phraser().phrase(QUESTION, CLAIMS)
    assert answer is not None
    assert (answer.answer, answer.citations) == ("Three objects appeared.", (A, B, C))


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("An object appeared at 0.8 s [ev_zzz].", id="unknown-id"),
        pytest.param("An object appeared at 0.8 s [source].", id="not-an-id"),
        pytest.param("An object appeared at 0.8 s.", id="no-citation"),
        pytest.param("An object appeared at 7.5 s [ev_a].", id="time-not-in-facts"),
        pytest.param("5 objects appeared [ev_a, ev_b, ev_c].", id="wrong-count"),
        pytest.param("Five objects appeared [ev_a, ev_b, ev_c].", id="wrong-count-in-words"),
        pytest.param("It stayed 9.0 s [ev_c].", id="wrong-duration"),
        pytest.param("[ev_a]", id="says-nothing"),
    ],
)
def test_a_phrasing_that_fails_the_check_is_discarded(llm: FakeLlm, content: str) -> None:
    llm.reply = Reply(content)
    assert llm.phraser().phrase(QUESTION, CLAIMS) is None


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(Reply(status=500, raw='{"error": "boom"}'), id="server-error"),
        pytest.param(Reply(raw="{not json"), id="malformed-json"),
        pytest.param(Reply(raw='{"choices": []}'), id="no-choices"),
        pytest.param(Reply(raw='{"choices": [{"message": {"content": null}}]}'), id="no-content"),
        pytest.param(Reply("3 objects appeared [ev_a].", delay_s=1.0), id="timeout"),
    ],
)
def test_endpoint_trouble_gives_none_and_a_warning(
    llm: FakeLlm, reply: Reply, caplog: pytest.LogCaptureFixture
) -> None:
    llm.reply = reply
    with caplog.at_level(logging.WARNING, logger="ask.phrasing"):
        assert llm.phraser(timeout_s=0.2).phrase(QUESTION, CLAIMS) is None
    assert [r.levelname for r in caplog.records] == ["WARNING"]


def test_an_unreachable_endpoint_gives_none() -> None:
    phraser = LlmPhraser(f"http://127.0.0.1:{free_port()}/v1", "test-model", 1.0)
    assert phraser.phrase(QUESTION, CLAIMS) is None


def test_from_settings(tmp_path: Path) -> None:
    assert LlmPhraser.from_settings(Settings(data_dir=tmp_path)) is None
    settings = Settings(
        data_dir=tmp_path,
        ask_llm_url="http://127.0.0.1:8080/v1",
        ask_llm_model="small",
        ask_llm_api_key=SecretStr("sk-secret"),
        ask_llm_timeout_s=3.0,
    )
    phraser = LlmPhraser.from_settings(settings)
    assert phraser == LlmPhraser("http://127.0.0.1:8080/v1", "small", 3.0, "sk-secret")
    assert "sk-secret" not in repr(phraser)


def _one_object_world() -> RunWorld:
    thing = Thing("obj_01", "motion", 0.8, 8.2, 0.7, (), None, "ev_01")
    return RunWorld(
        "vid_01",
        "run_01",
        Coverage(20.0, 100, "motion"),
        [thing],
        [],
        {"ev_01": Citation("ev_01", 0.8, 8.2)},
        [],
        frozenset({"motion"}),
    )


def test_the_engine_says_a_checked_phrasing_with_its_own_confidence(llm: FakeLlm) -> None:
    world = _one_object_world()
    rules = answer_question(world, "how many objects appeared")
    llm.reply = Reply("One moving object appeared; it was in view from 0.8 s to 8.2 s [ev_01].")
    answer = answer_question(world, "how many objects appeared", llm.phraser())
    assert answer.answer == "One moving object appeared; it was in view from 0.8 s to 8.2 s."
    assert (answer.phrased_by, answer.grounded) == ("llm", True)
    assert answer.confidence == pytest.approx(0.7)
    assert answer.intent == "count"
    assert (answer.claims, answer.citations) == (rules.claims, rules.citations)


def test_the_engine_keeps_its_caveat_on_a_phrasing(llm: FakeLlm) -> None:
    llm.reply = Reply("One moving thing appeared [ev_01].")
    answer = answer_question(_one_object_world(), "how many people appeared", llm.phraser())
    assert answer.phrased_by == "llm"
    assert answer.answer.startswith("One moving thing appeared. (Motion detection does not tell")


def test_the_engine_says_its_own_answer_when_the_phrasing_fails(llm: FakeLlm) -> None:
    world = _one_object_world()
    rules = answer_question(world, "how many objects appeared")
    llm.reply = Reply("3 objects appeared [ev_01].")
    answer = answer_question(world, "how many objects appeared", llm.phraser())
    assert answer == rules
    assert answer.phrased_by == "rules"
    assert answer.answer.startswith("1 object appeared.")
