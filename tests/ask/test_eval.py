"""An evaluation set for Ask Video: questions over processed synthetic videos with KNOWN truth.

Each case is a question, the video it is asked of, and a check that derives the right answer
from the video's ground truth (``synthetic.ground_truth``), never from the service's output.
One test asks them all, prints a table and the score, and asserts that every grounded answer
cites real spans that carry what it states, that no unanswerable question gets a grounded
answer, and that at least 90 % of the answerable ones are right.

Times may differ from the truth by up to ``TOLERANCE_S``: the run samples 5 frames a second and
a tracker needs a look or two before it reports an object.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import pytest

from ask.engine import answer_question
from ask.guardrail import claim_problems
from ask.types import Answer, Claim
from ask.world import RunWorld
from synthetic import Box, GroundTruth
from tests.ask.conftest import Processed

pytestmark = pytest.mark.slow

TOLERANCE_S = 1.0
MIN_ACCURACY = 0.9
ZONES = ("left", "center", "right")  # the default zones: vertical thirds of the frame


# --- Truth: what truly happens, derived from the scene spec alone -----------------------------


@dataclass(frozen=True)
class Fact:
    """Something that truly happens, and the words an answer uses for it.

    A point fact (``end is None``) is matched by a claim writing ``words`` and a time near ``t``;
    a lasting one by a claim writing ``words`` from near ``t`` to near ``end``.
    """

    words: str
    t: float
    end: float | None = None

    def __str__(self) -> str:
        span = f"{self.t:.1f}" if self.end is None else f"{self.t:.1f}-{self.end:.1f}"
        return f"{self.words} {span}"

    def said_by(self, claim: Claim) -> bool:
        # Spaces aside: OCR may read "GATE 7" as "GATE7", and the answer quotes what was read.
        said = "".join(claim.text.split()).casefold()
        if "".join(self.words.split()).casefold() not in said or not claim.times:
            return False
        if self.end is None:
            return any(_near(t, self.t) for t in claim.times)
        return _near(claim.times[0], self.t) and _near(claim.times[-1], self.end)


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE_S


def zone_of(box: Box, width: int) -> str:
    """The default zone holding a box's centre."""
    return ZONES[min(int((box[0] + box[2]) / 2 / width * len(ZONES)), len(ZONES) - 1)]


def entries(truth: GroundTruth, zone: str) -> list[float]:
    """When objects' centres come into ``zone`` (including appearing in it)."""
    times = []
    for obj in truth.objects:
        previous = None
        for index in sorted(obj.boxes):
            here = zone_of(obj.boxes[index], truth.spec.width)
            if here == zone and previous != zone:
                times.append(index / truth.fps)
            previous = here
    return sorted(times)


def dwells(truth: GroundTruth) -> list[tuple[float, float]]:
    return sorted(d for o in truth.objects for d in o.dwell_intervals)


def dwell_zones(truth: GroundTruth) -> set[str]:
    """The zones objects dwell in (where the centre is when the dwell starts)."""
    zones = set()
    for obj in truth.objects:
        for start, _ in obj.dwell_intervals:
            box = obj.boxes[round(start * truth.fps)]
            zones.add(zone_of(box, truth.spec.width))
    return zones


def text_span(text: str) -> Callable[[GroundTruth], tuple[float, float]]:
    def span(truth: GroundTruth) -> tuple[float, float]:
        (sign,) = [s for s in truth.texts if s.text == text]
        return sign.start_s, sign.end_s

    return span


def facts(truth: GroundTruth) -> list[Fact]:
    """Everything that happens in the video, as answers word it."""
    found = [Fact(f'"{s.text}"', s.start_s, s.end_s) for s in truth.texts]
    found += [Fact("the scene changed", cut) for cut in truth.scene_cuts]
    for obj in truth.objects:
        found += [Fact("appeared", obj.first_seen_s), Fact("disappeared", obj.last_seen_s)]
        found += [Fact("stayed still", a, b) for a, b in obj.dwell_intervals]
    found += [Fact(f"entered zone {z}", t) for z in ZONES for t in entries(truth, z)]
    return sorted(found, key=lambda f: f.t)


def n_objects(truth: GroundTruth) -> int:
    return len(truth.objects)


def n_texts(truth: GroundTruth) -> int:
    return len(truth.texts)


def n_cuts(truth: GroundTruth) -> int:
    return len(truth.scene_cuts)


def first_appearance(truth: GroundTruth) -> float:
    return min(o.first_seen_s for o in truth.objects)


def first_disappearance(truth: GroundTruth) -> float:
    return min(o.last_seen_s for o in truth.objects)


def last_disappearance(truth: GroundTruth) -> float:
    return max(o.last_seen_s for o in truth.objects)


def last_text_start(truth: GroundTruth) -> float:
    return max(s.start_s for s in truth.texts)


def only_cut(truth: GroundTruth) -> float:
    (cut,) = truth.scene_cuts
    return cut


def only_dwell(truth: GroundTruth) -> tuple[float, float]:
    (dwell,) = dwells(truth)
    return dwell


def dwell_length(truth: GroundTruth) -> float:
    start, end = only_dwell(truth)
    return end - start


def text_start(text: str) -> Callable[[GroundTruth], float]:
    return lambda truth: text_span(text)(truth)[0]


def text_end(text: str) -> Callable[[GroundTruth], float]:
    return lambda truth: text_span(text)(truth)[1]


def text_length(text: str) -> Callable[[GroundTruth], float]:
    return lambda truth: text_end(text)(truth) - text_start(text)(truth)


def all_texts(truth: GroundTruth) -> set[str]:
    return {s.text for s in truth.texts}


def objects_after(t: float) -> Callable[[GroundTruth], list[tuple[float, float]]]:
    """The (first, last) seen of every object still in view after ``t``."""
    return lambda truth: [
        (o.first_seen_s, o.last_seen_s) for o in truth.objects if o.last_seen_s > t
    ]


# --- Checks: the right answer from the truth, and whether an answer gives it ------------------


class Check:
    """What the right answer is (from the truth) and whether an answer gives it."""

    answerable = True  # refusals are right for the questions whose check says False

    def expect(self, truth: GroundTruth) -> str:
        raise NotImplementedError

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        raise NotImplementedError


def first_claim(answer: Answer, about: str = "") -> Claim:
    """The claim that answers (the rest back it up) if it says ``about``; else an empty one."""
    claim = answer.claims[0] if answer.grounded and answer.claims else Claim("", ())
    return claim if about.casefold() in claim.text.casefold() else Claim("", ())


@dataclass(frozen=True)
class Count(Check):
    """The first claim states the true count."""

    of: Callable[[GroundTruth], int]

    def expect(self, truth: GroundTruth) -> str:
        return str(self.of(truth))

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        return first_claim(answer).counts[:1] == (self.of(truth),)


@dataclass(frozen=True)
class At(Check):
    """The first claim states a time near the true one (and says ``about``)."""

    of: Callable[[GroundTruth], float]
    about: str = ""

    def expect(self, truth: GroundTruth) -> str:
        return f"{self.of(truth):.1f} s"

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        return any(_near(t, self.of(truth)) for t in first_claim(answer, self.about).times)


@dataclass(frozen=True)
class During(Check):
    """The first claim states the true interval, from near its start to near its end (and
    says ``about``)."""

    of: Callable[[GroundTruth], tuple[float, float]]
    about: str = ""

    def expect(self, truth: GroundTruth) -> str:
        return "{:.1f}-{:.1f} s".format(*self.of(truth))

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        start, end = self.of(truth)
        times = first_claim(answer, self.about).times
        return len(times) >= 2 and _near(times[0], start) and _near(times[-1], end)


@dataclass(frozen=True)
class Lasting(Check):
    """The first claim states the true length of time (and says ``about``)."""

    of: Callable[[GroundTruth], float]
    about: str = ""

    def expect(self, truth: GroundTruth) -> str:
        return f"{self.of(truth):.1f} s long"

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        lengths = first_claim(answer, self.about).durations
        return len(lengths) == 1 and _near(lengths[0], self.of(truth))


@dataclass(frozen=True)
class Texts(Check):
    """The claims quote exactly the texts truly shown."""

    of: Callable[[GroundTruth], set[str]]

    def expect(self, truth: GroundTruth) -> str:
        return ", ".join(sorted(self.of(truth)))

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        quoted = {q for c in answer.claims for q in re.findall(r'"([^"]+)"', c.text)}
        return answer.grounded and quoted == self.of(truth)


@dataclass(frozen=True)
class Zones(Check):
    """The claims name exactly the true zones."""

    of: Callable[[GroundTruth], set[str]]

    def expect(self, truth: GroundTruth) -> str:
        return "zone " + ", ".join(sorted(self.of(truth)))

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        named = {z for c in answer.claims for z in re.findall(r"\bzones? (\w+)", c.text)}
        return answer.grounded and named == self.of(truth)


@dataclass(frozen=True)
class Entered(Check):
    """Every claim is an entry into ``zone`` near a true one (and there is at least one)."""

    zone: str

    def expect(self, truth: GroundTruth) -> str:
        return f"into {self.zone} at " + ", ".join(f"{t:.1f}" for t in entries(truth, self.zone))

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        fact = [Fact(f"entered zone {self.zone}", t) for t in entries(truth, self.zone)]
        said = [any(f.said_by(c) for f in fact) for c in answer.claims]
        return answer.grounded and bool(said) and all(said)


@dataclass(frozen=True)
class Visible(Check):
    """One claim per object truly in view, each stating its true interval."""

    of: Callable[[GroundTruth], list[tuple[float, float]]]

    def expect(self, truth: GroundTruth) -> str:
        return ", ".join(f"{a:.1f}-{b:.1f} s" for a, b in self.of(truth))

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        stated = [(c.times[0], c.times[-1]) for c in answer.claims if c.times]
        expected = self.of(truth)
        return (
            answer.grounded
            and len(stated) == len(answer.claims) == len(expected)
            and all(
                _near(a, x) and _near(b, y) for (a, b), (x, y) in zip(stated, expected, strict=True)
            )
        )


@dataclass(frozen=True)
class Window(Check):
    """What happened from ``start`` to ``end``: the answer says every fact truly in the window
    (a lasting fact that overlaps it, a point fact well inside it) and nothing far outside."""

    start: float
    end: float

    def required(self, truth: GroundTruth) -> list[Fact]:
        inside = self.start + TOLERANCE_S / 2, self.end - TOLERANCE_S / 2
        return [
            f
            for f in facts(truth)
            if (f.end is not None and f.t <= self.end and f.end >= self.start)
            or (f.end is None and inside[0] <= f.t <= inside[1])
        ]

    def expect(self, truth: GroundTruth) -> str:
        return "; ".join(str(f) for f in self.required(truth))

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        said = all(any(f.said_by(c) for c in answer.claims) for f in self.required(truth))
        return answer.grounded and said and all(self._about(c) for c in answer.claims)

    def _about(self, claim: Claim) -> bool:
        return bool(claim.times) and (
            min(claim.times) <= self.end + TOLERANCE_S
            and max(claim.times) >= self.start - TOLERANCE_S
        )


@dataclass(frozen=True)
class AtCut(Check):
    """What changed at the scene cut: the cut, every appearance or disappearance right at it,
    and nothing far from it."""

    def required(self, truth: GroundTruth) -> list[Fact]:
        cut = only_cut(truth)
        moving = ("appeared", "disappeared")
        return [Fact("the scene changed", cut)] + [
            f for f in facts(truth) if f.words in moving and abs(f.t - cut) <= TOLERANCE_S / 2
        ]

    def expect(self, truth: GroundTruth) -> str:
        return "; ".join(str(f) for f in self.required(truth))

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        cut = only_cut(truth)
        said = all(any(f.said_by(c) for c in answer.claims) for f in self.required(truth))
        near = all(any(abs(t - cut) <= 1.5 * TOLERANCE_S for t in c.times) for c in answer.claims)
        return answer.grounded and said and near


@dataclass(frozen=True)
class Refused(Check):
    """Not answerable from the run: no grounded answer, and the right reason."""

    reason: str
    answerable = False

    def expect(self, truth: GroundTruth) -> str:
        return f"refuse: {self.reason}"

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        return not answer.grounded and answer.refusal_reason == self.reason


@dataclass(frozen=True)
class Absent(Check):
    """About something the truth does not hold (``premise`` checks that it truly does not):
    no grounded answer, refused for lack of evidence."""

    premise: Callable[[GroundTruth], bool]
    answerable = False

    def expect(self, truth: GroundTruth) -> str:
        return "refuse: no_evidence" if self.premise(truth) else "CASE IS WRONG: it is there"

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        refused = not answer.grounded and answer.refusal_reason == "no_evidence"
        return self.premise(truth) and refused


def no_text(text: str) -> Callable[[GroundTruth], bool]:
    return lambda truth: all(text.casefold() not in s.text.casefold() for s in truth.texts)


# --- The set ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    video: str  # "lobby" or "signs"
    question: str
    check: Check


LOBBY: list[tuple[str, Check]] = [
    # counts
    ("How many objects appeared?", Count(n_objects)),
    ("How many people showed up?", Count(n_objects)),
    ("How many texts were read?", Count(n_texts)),
    ("How many signs are there?", Count(n_texts)),
    ("How many times did the scene change?", Count(n_cuts)),
    ("How many scene cuts were there?", Count(n_cuts)),
    ("How many objects entered the left zone?", Count(lambda t: len(entries(t, "left")))),
    # first, last, when
    ("When did the first object appear?", At(first_appearance)),
    ("When did the first person arrive?", At(first_appearance)),
    ("When did the last object disappear?", At(last_disappearance)),
    ("When did the last object leave?", At(last_disappearance)),
    ("When did the first object leave the frame?", At(first_disappearance)),
    ("When did the last text appear?", At(last_text_start)),
    ("When did the first object enter the center zone?", At(lambda t: entries(t, "center")[0])),
    ("When did the scene change?", At(only_cut)),
    ("At what time did the scene cut happen?", At(only_cut)),
    ("When was 'EXIT 3' visible?", During(text_span("EXIT 3"), '"EXIT 3"')),
    ("When does the EXIT 3 sign show up?", At(text_start("EXIT 3"), '"EXIT 3"')),
    ("Was anything visible after 0:15?", Visible(objects_after(15.0))),
    # dwell
    ("How long did the object stay still?", Lasting(dwell_length, "still")),
    ("How long did someone wait?", Lasting(dwell_length, "still")),
    ("How long did the loitering last?", Lasting(dwell_length, "still")),
    ("Did anyone linger?", During(only_dwell, "still")),
    ("Did anybody stay in one place?", During(only_dwell, "still")),
    ("Where did someone stop?", Zones(dwell_zones)),
    ("Which zone did an object dwell in?", Zones(dwell_zones)),
    # zones
    ("Did anyone enter the right zone?", Entered("right")),
    # texts
    ("What text is visible?", Texts(all_texts)),
    ("What does the sign say?", Texts(all_texts)),
    ("What caption is shown?", Texts(all_texts)),
    ('Is there any text saying "EXIT 3"?', During(text_span("EXIT 3"), '"EXIT 3"')),
    ("How long was EXIT 3 visible?", Lasting(text_length("EXIT 3"), '"EXIT 3"')),
    # windows, in seconds and mm:ss, and the cut
    ("What happened between 0:04 and 0:06?", Window(4.0, 6.0)),
    ("What happened at 12 s?", Window(11.0, 13.0)),
    ("What happened between 13 and 16 seconds?", Window(13.0, 16.0)),
    ("What happened in the first 3 seconds?", Window(0.0, 3.0)),
    ("What changed at the scene cut?", AtCut()),
    # unanswerable: off topic, outside the detectors, absent
    ("What is the capital of France?", Refused("off_topic")),
    ("What's the weather tomorrow?", Refused("off_topic")),
    ("Did a helicopter land?", Refused("outside_detectors")),
    ("What colour is the car?", Refused("outside_detectors")),
    ("Who is the person in the lobby?", Refused("outside_detectors")),
    ("What did they say?", Refused("outside_detectors")),
    ("Why did the person stop?", Refused("outside_detectors")),
    ("Is there a sign saying PIZZA?", Absent(no_text("PIZZA"))),
    ("Did anything appear after 0:50?", Absent(lambda t: t.duration_s < 50.0)),
    ("Did anyone stop in the left zone?", Absent(lambda t: "left" not in dwell_zones(t))),
]

SIGNS: list[tuple[str, Check]] = [
    ("How many objects appeared?", Count(n_objects)),
    ("How many texts were read?", Count(n_texts)),
    ("When did the first object appear?", At(first_appearance)),
    ("When did the last object disappear?", At(last_disappearance)),
    ("When did the first object enter the center zone?", At(lambda t: entries(t, "center")[0])),
    ("Did anyone enter the right zone?", Entered("right")),
    ("What does the sign say?", Texts(all_texts)),
    ("What labels can be seen?", Texts(all_texts)),
    ("What is written on the sign?", Texts(all_texts)),
    ("When did SALE 50% appear?", At(text_start("SALE 50%"), '"SALE 50%"')),
    ('When did "SALE 50%" disappear?', At(text_end("SALE 50%"), '"SALE 50%"')),
    ("When did the text 'OPEN DAILY' show up?", At(text_start("OPEN DAILY"), '"OPEN DAILY"')),
    ("How long was the SALE 50% sign visible?", Lasting(text_length("SALE 50%"), '"SALE 50%"')),
    ("How long was OPEN DAILY on screen?", Lasting(text_length("OPEN DAILY"), '"OPEN DAILY"')),
    ("What happened between 0:09 and 0:11?", Window(9.0, 11.0)),
    ("What happened between 0:12 and 0:15?", Window(12.0, 15.0)),
    ("What happened from 0:20 to 0:25?", Window(20.0, 25.0)),
    # unanswerable
    ("Write me a poem.", Refused("off_topic")),
    ("How many dogs are there?", Refused("outside_detectors")),
    ("How fast was the object moving?", Refused("outside_detectors")),
    ("Is there a sign saying PIZZA?", Absent(no_text("PIZZA"))),
    ("Did the scene change?", Absent(lambda t: not t.scene_cuts)),
]

CASES = [Case("lobby", q, c) for q, c in LOBBY] + [Case("signs", q, c) for q, c in SIGNS]


# --- Scoring ----------------------------------------------------------------------------------


class Cited(Protocol):
    """A processed run as the citation check reads it: its world and its evidence table."""

    world: RunWorld
    evidence: dict[str, tuple[float, float]]


@dataclass(frozen=True)
class Scored:
    case: Case
    answer: Answer
    expected: str
    ok: bool


def citation_problems(answer: Answer, run: Processed | Cited) -> list[str]:
    """Why a grounded answer's citations are not to be trusted (empty when they are)."""
    if not answer.grounded:
        return []
    problems = [] if answer.claims and answer.citations else ["grounded without a claim"]
    for claim in answer.claims:
        problems += claim_problems(claim, run.world.spans)
    for cite in {c for claim in answer.claims for c in claim.citations} | set(answer.citations):
        if run.world.spans.get(cite.evidence_id) != cite:
            problems.append(f"{cite.evidence_id} is not a span of the run")
        if run.evidence.get(cite.evidence_id) != (cite.start_s, cite.end_s):
            problems.append(f"{cite.evidence_id} is not in evidence.parquet with those times")
    return [f"{answer.question!r}: {p}" for p in problems]


def _got(answer: Answer) -> str:
    """The answer without object ids (they only take room in a table)."""
    if not answer.grounded:
        return f"refused: {answer.refusal_reason}"
    return re.sub(r" \(obj_\w+\)", "", answer.answer)


def _row(*cells: str) -> str:
    widths = (5, 50, 36, 72, 5)
    fitted = [
        c if len(c) <= w else c[: w - 1] + "\u2026" for c, w in zip(cells, widths, strict=True)
    ]
    return " | ".join(c.ljust(w) for c, w in zip(fitted, widths, strict=True)).rstrip()


def print_table(scored: Sequence[Scored]) -> None:
    """One row a question; the whole answer again under every wrong one."""
    print("\n" + _row("video", "question", "expected", "got", "ok"))
    for s in scored:
        got = _got(s.answer)
        print(_row(s.case.video, s.case.question, s.expected, got, "ok" if s.ok else "WRONG"))
        if not s.ok:
            print(f"      WRONG: {got}")


def _share(scored: Sequence[Scored]) -> float:
    return sum(s.ok for s in scored) / len(scored)


def test_the_evaluation_set(lobby_world: Processed, signs_world: Processed) -> None:
    runs = {"lobby": lobby_world, "signs": signs_world}
    scored, problems = [], []
    for case in CASES:
        run = runs[case.video]
        answer = answer_question(run.world, case.question)
        problems += citation_problems(answer, run)
        ok = case.check.passes(answer, run.truth)
        scored.append(Scored(case, answer, case.check.expect(run.truth), ok))
    answerable = [s for s in scored if s.case.check.answerable]
    unanswerable = [s for s in scored if not s.case.check.answerable]
    print_table(scored)
    print(
        f"\nanswerable: {sum(s.ok for s in answerable)}/{len(answerable)} correct "
        f"({_share(answerable):.1%}); unanswerable: {sum(s.ok for s in unanswerable)}/"
        f"{len(unanswerable)} refused for the right reason; {len(scored)} questions"
    )
    assert len(scored) >= 40 and len(unanswerable) >= 10
    assert problems == []
    assert [s.case.question for s in unanswerable if s.answer.grounded] == []
    assert _share(answerable) >= MIN_ACCURACY, [s.case.question for s in answerable if not s.ok]


def test_people_on_a_run_that_named_no_person_are_its_moving_objects_said_so(
    lobby_world: Processed,
) -> None:
    """The lobby's walkers are coloured blobs: the default mode's person detector names none of
    them, so "how many people" is answered "no people were recognised", with the moving objects
    counted and cited (issue 29: never a "yes" about people the detector did not name)."""
    world = lobby_world.world
    assert "person" in world.classes_known and not [t for t in world.things if t.cls == "person"]
    answer = answer_question(world, "How many people showed up?")
    assert answer.grounded
    n = n_objects(lobby_world.truth)
    assert answer.answer == f"No people were recognised; {n} different moving objects were seen."
    assert len(answer.citations) == n
