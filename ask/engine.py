"""Answering one question about one run: read it, gather claims, check them, say them.

No evidence, no claim: a question about something the run's detectors cannot see, about nothing
in the video, or whose claims all fail the guardrail gets ``grounded: false`` with a
``refusal_reason`` and makes no claim; an answer that finds nothing says what was examined.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Protocol

from ask.compose import COMPOSERS, cites_of
from ask.counting import count, listing
from ask.crowd import peak, together
from ask.guardrail import passing
from ask.intent import Intent, parse_question
from ask.pace import RUN_SIZES_PER_S, pace, ran
from ask.places import title_words
from ask.qualifiers import FILLERS
from ask.select import measures_colour, things_for, why_no_colours
from ask.shapes import (
    answers_negation,
    colour,
    no_people,
    order,
    summary,
    unsure_colour_before,
    without,
)
from ask.types import Answer, Claim
from ask.vocabulary import KNOWN_WORDS
from ask.world import RunWorld
from ves.detector_mode import DetectorMode

log = logging.getLogger(__name__)

HINT = (
    "Try: how many objects appeared, when did the first object appear, what text is visible, "
    "how long did an object stay still, what happened between 0:05 and 0:10."
)


class Phraser(Protocol):
    """Rewords checked claims (a language model); returns None when it cannot."""

    def phrase(self, question: str, claims: Sequence[Claim]) -> Answer | None: ...


def capabilities(mode: str) -> str:
    """What a detector mode can see, in words."""
    return DetectorMode.parse(mode).sees()


SHAPED = {
    "count": count,
    "list": listing,
    "order": order,
    "colour": colour,
    "summary": summary,
    "peak": peak,
    "together": together,
}


def refuse(
    question: str, reason: str, answer: str, intent: str = "unknown", read: Intent | None = None
) -> Answer:
    interpreted = read.interpreted() if read is not None else None
    return Answer(question, answer, False, 0.0, (), reason, intent=intent, interpreted=interpreted)


def _refusal_for(world: RunWorld, question: str, intent: Intent) -> Answer | None:
    mode = world.coverage.detector_mode
    if intent.kind == "off_topic":
        return refuse(
            question,
            "off_topic",
            f"That is not a question about this video. I answer only from what this run "
            f"detected: {capabilities(mode)}. {HINT}",
            intent.kind,
        )
    if intent.kind == "unsupported":
        return refuse(
            question,
            "outside_detectors",
            f"This run's detectors ({mode}) cannot tell {intent.unsupported}; they see "
            f"{capabilities(mode)}, so I make no claim about it.",
            intent.kind,
        )
    if (intent.subject == "text" or intent.kind == "text") and not world.reads_text():
        return refuse(
            question,
            "outside_detectors",
            f"This run did not read text (detectors: {mode}); execute the video with the "
            "detector motion+ocr to ask about text.",
            intent.kind,
        )
    if intent.kind == "not_understood":
        return refuse(
            question,
            "not_understood",
            f'I do not know what "{intent.unknown_word}" asks of this video, and it could '
            f"change the answer, so I make no claim. {HINT}",
            intent.kind,
            intent,
        )
    if intent.kind == "unknown":
        return refuse(question, "not_understood", f"I could not tell what you ask. {HINT}")
    if intent.negation is not None and not answers_negation(intent):
        return refuse(
            question,
            "not_understood",
            f'I cannot answer a question denied with "{intent.negation}" in this shape, and '
            f"dropping the word would answer the opposite, so I make no claim. {HINT}",
            intent.kind,
            intent,
        )
    if (intent.qualifiers.colour or intent.kind == "colour") and not measures_colour(world):
        return refuse(question, "outside_detectors", why_no_colours(world), intent.kind, intent)
    return None


def _pace_refusal(world: RunWorld, question: str, intent: Intent) -> Answer | None:
    """A question asking for a running pace ("did anyone run?") where nothing it is about ran:
    refused naming the word (a coarse speed is no evidence that nobody ran)."""
    if intent.pace is None:
        return None
    walking = dataclasses.replace(intent, pace=None)
    things = things_for(world, walking)
    if any(ran(t) for t in things):
        return None
    fastest = max((p for t in things if (p := pace(t)) is not None), default=None)
    measured = (
        f"the fastest moved {fastest:.1f} of its own sizes a second"
        if fastest is not None
        else "no speed was measured"
    )
    return refuse(
        question,
        "no_evidence",
        f"Nothing here moved at a running pace ({RUN_SIZES_PER_S} of its own sizes a second; "
        f'{measured}), so I make no claim about "{intent.pace}".',
        intent.kind,
        intent,
    )


def resolve_window(world: RunWorld, intent: Intent) -> Intent | None:
    """The intent with a window anchored to the video ("after the cut", "the last 20 s")
    made absolute; None when its anchor is not in the run (no cut)."""
    q = intent.qualifiers
    if q.anchor == "last" and q.last_s is not None:
        end = world.coverage.duration_s
        return dataclasses.replace(intent, window=(max(0.0, end - q.last_s), end))
    if q.anchor in {"after_cut", "before_cut"}:
        cuts = [e.t_s for e in world.events if e.type == "scene_change"]
        if not cuts:
            return None
        window = (cuts[0], float("inf")) if q.anchor == "after_cut" else (0.0, cuts[-1])
        return dataclasses.replace(intent, window=window)
    return intent


def _finite(window: tuple[float, float] | None, world: RunWorld) -> tuple[float, float] | None:
    """A question's window with an open end closed at the end of the video."""
    if window is None:
        return None
    return window[0], min(window[1], world.coverage.duration_s)


def _confidence(world: RunWorld, claims: Sequence[Claim]) -> float:
    values = [world.confidence.get(c.evidence_id, 0.5) for claim in claims for c in claim.citations]
    return min(0.95, sum(values) / len(values)) if values else 0.0


def _about_people(world: RunWorld, intent: Intent) -> tuple[Intent, str]:
    """The intent to answer and the caveat it needs when the question is about people.

    On a run that cannot name people, people are moving objects (said so). On a run whose person
    detector named NONE of the moving objects, the moving objects are still what the video shows
    (a person seen from above, sitting, half hidden): they are answered, and the answer says no
    person was recognised, instead of a flat "no evidence".
    """
    if intent.people and "person" not in world.classes_known:
        return intent, " (Motion detection does not tell people from other moving things.)"
    named = any(t.cls == "person" for t in world.things)
    if intent.subject == "person" and not named and world.physical:
        caveat = " (The person detector recognised none of these moving objects as a person.)"
        return dataclasses.replace(intent, subject="object"), caveat
    return intent, ""


def _asks_people_none_named(world: RunWorld, intent: Intent) -> bool:
    """Whether people are asked for (are there any, how many) on a run whose person detector
    named none of its moving objects: the honest answer is "no people were recognised"."""
    if "person" not in world.classes_known or any(t.cls == "person" for t in world.things):
        return False
    asks = intent.kind in {"exists", "count"} and intent.action in {None, "appear"}
    plain = intent.qualifiers == type(intent.qualifiers)() and intent.window is None
    return intent.subject == "person" and asks and plain and bool(world.physical)


def answer_question(
    world: RunWorld, question: str, phraser: Phraser | None = None, *, title: str = ""
) -> Answer:
    """The answer to ``question`` from ``world``, every claim checked by the guardrail;
    ``title`` is the video's (its words name the place: "in the lobby")."""
    places = title_words(title, KNOWN_WORDS | FILLERS | world.classes_known)
    read = parse_question(question, world.classes_known, world.zones, places)
    intent, caveat = _about_people(world, read)
    caveat += intent.place.note()
    refusal = _refusal_for(world, question, intent) or _pace_refusal(world, question, intent)
    if refusal is not None:
        return refusal
    anchored = resolve_window(world, intent)
    if anchored is None:
        return refuse(
            question,
            "no_evidence",
            f"No scene change in this run, so nothing is before or after one. "
            f"{world.coverage.sentence()}",
            intent.kind,
            intent,
        )
    intent = anchored
    unsure = unsure_colour_before(world, intent)
    if unsure is not None:
        return refuse(question, "no_evidence", unsure, intent.kind, intent)
    if _asks_people_none_named(world, read):
        claims, caveat = no_people(world), ""
    else:
        claims = _claims_for(world, intent)
    kept, problems = passing(claims, world.spans)
    if problems:
        log.warning("guardrail dropped claims for %r: %s", question, "; ".join(problems))
    if not kept:
        return refuse(
            question,
            "no_evidence",
            "No evidence of that in this run, so I make no claim. "
            f"{world.coverage.sentence(_finite(intent.window, world))}",
            intent.kind,
            intent,
        )
    deterministic = Answer(
        question,
        " ".join(c.text for c in kept) + caveat,
        True,
        _confidence(world, kept),
        cites_of(kept),
        None,
        tuple(kept),
        intent.kind,
        interpreted=intent.interpreted(),
    )
    phrased = None if phraser is None else phraser.phrase(question, kept)
    return deterministic if phrased is None else _engine_owned(phrased, deterministic, caveat)


def _claims_for(world: RunWorld, intent: Intent) -> list[Claim]:
    """The claims the composer of the intent's kind makes (a denied action: its own)."""
    if intent.negation is not None:
        return without(world, intent)
    return {**COMPOSERS, **SHAPED}[intent.kind](world, intent)


def _engine_owned(phrased: Answer, deterministic: Answer, caveat: str) -> Answer:
    """A phrased answer whose confidence, claims and intent (and the caveat the claims cannot
    carry) are the engine's: the phraser sees only the checked claims."""
    return dataclasses.replace(
        phrased,
        answer=phrased.answer + caveat,
        confidence=deterministic.confidence,
        claims=deterministic.claims,
        intent=deterministic.intent,
        phrased_by="llm",
    )
