"""Checked claims put in plain words by a language model, which may not add a single fact.

The model (any OpenAI-compatible chat completions endpoint) sees only the question and the claims
that already passed the guardrail, each with its evidence ids. Its reply is checked before it is
said, as strictly as a claim:

* every ``[id]`` it cites is an evidence id of the given claims, and it cites at least one;
* every number it writes, in digits or as a word up to twenty but "one" (outside quoted text and
  ids, the citation markers removed), is a time, count or duration the claims carry.

A reply that fails, and any trouble with the endpoint (transport error, timeout, a status other
than 200, a body that is not a completion), gives None and a warning in the log: the engine then
says its rule-based answer. ``phrase`` never raises.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx
from pydantic import BaseModel, Field, ValidationError

from ask.guardrail import TIME_TOLERANCE_S, written_numbers
from ask.types import Answer, Citation, Claim
from ves.settings import Settings

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "You answer a question about a video using ONLY the numbered facts below. Answer in plain "
    "words, briefly. Cite every sentence with the evidence ids of the facts it uses, in square "
    "brackets like [ev_abc]. Never add a number or time that is not in the facts; write numbers "
    "in digits and times as the facts write them. Do not mention the fact numbers."
)
# The phraser cannot weigh evidence (the engine holds the run's confidences); the engine replaces
# this with its own.
UNSET_CONFIDENCE = -1.0

_MARKER = re.compile(r"\[([^\[\]]*)\]")
_ID_SEPARATORS = re.compile(r"[\s,;]+")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?)])")
_QUOTED = re.compile(r"\"[^\"]*\"")
_WORD = re.compile(r"\b[a-z]+\b")  # whole words: "ten" inside an id is no number
# Counts written as words are checked like digits; "one" is not, being a pronoun as often as a
# number ("after one at 0.8 s", "no one").
_NUMBER_WORDS = {
    word: float(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "  # noqa: SIM905
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
    if word != "one"
}


class _Message(BaseModel):
    content: str


class _Choice(BaseModel):
    message: _Message


class _Completion(BaseModel):
    """The part of an OpenAI chat completion this module reads."""

    choices: list[_Choice] = Field(min_length=1)


def build_messages(question: str, claims: Sequence[Claim]) -> list[dict[str, str]]:
    """The chat sent to the model: the instructions, the question and the numbered facts."""
    facts = "\n".join(
        f"{n}. [{', '.join(_ids_of(claim))}] {claim.text}" for n, claim in enumerate(claims, 1)
    )
    return [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": f"Question: {question}\n\nFacts:\n{facts}"},
    ]


def _ids_of(claim: Claim) -> list[str]:
    return list(dict.fromkeys(c.evidence_id for c in claim.citations))


def cited_ids(reply: str) -> list[str]:
    """The ids a reply cites in its ``[..]`` markers (``[ev_a]``, ``[ev_a, ev_b]``), once each."""
    tokens = (t for m in _MARKER.finditer(reply) for t in _ID_SEPARATORS.split(m.group(1)))
    return list(dict.fromkeys(t for t in tokens if t))


def unmarked(reply: str) -> str:
    """The reply without its citation markers, whitespace tidied."""
    text = " ".join(_MARKER.sub(" ", reply).split())
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text)


def _spelled_numbers(text: str) -> list[float]:
    words = _WORD.findall(_QUOTED.sub(" ", text).lower())
    return [_NUMBER_WORDS[w] for w in words if w in _NUMBER_WORDS]


def reply_problems(reply: str, claims: Sequence[Claim]) -> list[str]:
    """Why the model's ``reply`` may not be said (empty when it may)."""
    known = {c.evidence_id for claim in claims for c in claim.citations}
    cited = cited_ids(reply)
    problems = [f"cites {i}, which no fact carries" for i in cited if i not in known]
    if not cited:
        problems.append("cites nothing")
    text = unmarked(reply)
    if not text:
        problems.append("says nothing")
    allowed = [v for claim in claims for v in (*claim.times, *claim.counts, *claim.durations)]
    for number in written_numbers(text) + _spelled_numbers(text):
        if not any(abs(number - a) <= TIME_TOLERANCE_S for a in allowed):
            problems.append(f"writes {number}, which no fact carries")
    return problems


def _citations_cited(reply: str, claims: Sequence[Claim]) -> tuple[Citation, ...]:
    by_id = {c.evidence_id: c for claim in claims for c in claim.citations}
    cited = {by_id[i] for i in cited_ids(reply)}
    return tuple(sorted(cited, key=lambda c: (c.start_s, c.evidence_id)))


@dataclass(frozen=True)
class LlmPhraser:
    """A ``Phraser`` backed by an OpenAI-compatible ``POST {base_url}/chat/completions``.

    Each call opens its own ``httpx.Client``: a question waits seconds for the model anyway, and
    nothing is left open for the app to close.
    """

    base_url: str
    model: str
    timeout_s: float = 10.0
    api_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> LlmPhraser | None:
        """The phraser the settings configure, or None when ``ask_llm_url`` is unset."""
        if not settings.ask_llm_url:
            return None
        key = settings.ask_llm_api_key
        return cls(
            settings.ask_llm_url,
            settings.ask_llm_model,
            settings.ask_llm_timeout_s,
            key.get_secret_value() if key is not None else None,
        )

    def phrase(self, question: str, claims: Sequence[Claim]) -> Answer | None:
        """The claims in the model's words, or None if it fails or its reply fails the check.

        The answer's confidence is ``UNSET_CONFIDENCE``, for the engine to replace.
        """
        reply = self._complete(build_messages(question, claims))
        if reply is None:
            return None
        problems = reply_problems(reply, claims)
        if problems:
            log.warning("phrasing of %r discarded: %s", question, "; ".join(problems))
            return None
        citations = _citations_cited(reply, claims)
        return Answer(
            question,
            unmarked(reply),
            True,
            UNSET_CONFIDENCE,
            citations,
            None,
            tuple(claims),
            phrased_by="llm",
        )

    def _complete(self, messages: list[dict[str, str]]) -> str | None:
        """The model's reply text; None (and a warning) on any trouble with the endpoint."""
        url = f"{self.base_url.rstrip('/')}/chat/completions"
        body = {"model": self.model, "messages": messages, "temperature": 0}
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            with httpx.Client(timeout=self.timeout_s, headers=headers) as client:
                response = client.post(url, json=body)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            log.warning("phrasing model at %s failed: %r", url, exc)
            return None
        if response.status_code != httpx.codes.OK:
            log.warning("phrasing model at %s answered %d", url, response.status_code)
            return None
        try:
            completion = _Completion.model_validate_json(response.content)
        except ValidationError as exc:
            log.warning("phrasing model at %s sent no completion: %s", url, exc.errors()[0]["msg"])
            return None
        return completion.choices[0].message.content
