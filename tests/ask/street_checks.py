"""Checks of the street bank (``tests/ask/street_bank.py``): the right answer from the street's
truth (``tests/ask/street_truth.py``) and whether an answer gives it.

Each check reads only the answer contract's fields: ``grounded``, ``refusal_reason``, the
answer's opening words, and the claims' ``counts``, ``times`` and ``durations``.

Tolerances, fixed before the engine was run on the bank:

* ``TIME_TOL_S`` = 2.0 s: the labels' spacing (a box every 20 frames at 10 fps);
* ``COUNT_TOL`` = 1 person: the annotation itself says 12, or 13 if the peacoat person who
  returns at 21.8 s is someone else; a count of people in view is judged against its frame's
  range from the clearly visible people to all labelled ones (``street_truth``: difficult
  labels are "don't care", as in ``testkit/mot.py``), widened by ``COUNT_TOL`` each side;
* standing still: a claimed duration at least N - ``TIME_TOL_S``.

Unanswerables (what the detectors cannot see or know) are right when refused or answered
"no"; a grounded "yes" to them is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ask.types import Answer, Claim
from tests.ask.bank import says_no
from tests.ask.street_truth import StreetTruth, count_at, frame_near, peak, stood_still

TIME_TOL_S = 2.0
COUNT_TOL = 1
# What ``bank.Refuse`` accepts: the question lies outside what any detector or evidence knows.
REFUSALS = frozenset({"outside_detectors", "not_understood", "off_topic"})


class StreetCheck:
    """The right answer from the street's truth, and whether an answer gives it."""

    answerable = True

    def expect(self, truth: StreetTruth) -> str:
        raise NotImplementedError

    def passes(self, answer: Answer, truth: StreetTruth) -> bool:
        raise NotImplementedError


def _claims(answer: Answer) -> tuple[Claim, ...]:
    return answer.claims if answer.grounded else ()


def first_counted(answer: Answer) -> int | None:
    """The first count of the first grounded claim that states one."""
    return next((c.counts[0] for c in _claims(answer) if c.counts), None)


def first_timed(answer: Answer) -> Claim | None:
    return next((c for c in _claims(answer) if c.times), None)


def _within(n: int | None, low: int, high: int) -> bool:
    return n is not None and low - COUNT_TOL <= n <= high + COUNT_TOL


def _overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] - TIME_TOL_S <= b[1] and b[0] <= a[1] + TIME_TOL_S


@dataclass(frozen=True)
class HowMany(StreetCheck):
    """The first count is within ``COUNT_TOL`` of the truth."""

    of: Callable[[StreetTruth], int]

    def expect(self, truth: StreetTruth) -> str:
        return f"{self.of(truth)} (+-{COUNT_TOL})"

    def passes(self, answer: Answer, truth: StreetTruth) -> bool:
        n = self.of(truth)
        return not says_no(answer) and _within(first_counted(answer), n, n)


@dataclass(frozen=True)
class InViewAt(StreetCheck):
    """The first count fits the count range of the labelled frame at ``t`` (a labelled time)."""

    t: float

    def expect(self, truth: StreetTruth) -> str:
        low, high = count_at(truth, self.t)
        return f"{low}-{high} at {self.t:g} s (+-{COUNT_TOL})"

    def passes(self, answer: Answer, truth: StreetTruth) -> bool:
        return _within(first_counted(answer), *count_at(truth, self.t))


@dataclass(frozen=True)
class Peak(StreetCheck):
    """The most people in view at once: the first claim with a count states about the peak;
    ``timed``: that claim also states a time whose nearest labelled frame can hold a count
    within ``COUNT_TOL`` of the peak."""

    timed: bool = True

    def expect(self, truth: StreetTruth) -> str:
        low, high = peak(truth)
        at = f", at a frame holding >= {low - COUNT_TOL}" if self.timed else ""
        return f"{low}-{high} (+-{COUNT_TOL}){at}"

    def passes(self, answer: Answer, truth: StreetTruth) -> bool:
        claim = next((c for c in _claims(answer) if c.counts), None)
        if claim is None or not _within(claim.counts[0], *peak(truth)):
            return False
        if not self.timed:
            return True
        if not claim.times:
            return False
        frame = frame_near(truth, claim.times[0])
        near = abs(frame.t_s - claim.times[0]) <= TIME_TOL_S
        return near and len(frame.ids) >= peak(truth)[0] - COUNT_TOL


@dataclass(frozen=True)
class StoodStill(StreetCheck):
    """Who stood still longer than ``seconds``: every duration claimed is at least
    ``seconds - TIME_TOL_S`` and overlaps a truth span at least that long, and some claim
    overlaps a span of ``seconds`` or more; when there is none the right answer is "no"."""

    seconds: float

    def expect(self, truth: StreetTruth) -> str:
        spans = stood_still(truth, self.seconds)
        listed = ", ".join(f"id {s.person} {s.start:g}-{s.end:g} s" for s in spans)
        return listed or "no"

    def passes(self, answer: Answer, truth: StreetTruth) -> bool:
        wanted = [(s.start, s.end) for s in stood_still(truth, self.seconds)]
        if not wanted:
            return says_no(answer)
        fair = [(s.start, s.end) for s in stood_still(truth, self.seconds - TIME_TOL_S)]
        claims = [c for c in _claims(answer) if c.durations]
        if says_no(answer) or not claims:
            return False
        spans = [(min(c.times), max(c.times)) for c in claims if c.times]
        long_enough = all(d >= self.seconds - TIME_TOL_S for c in claims for d in c.durations)
        true = len(spans) == len(claims) and all(any(_overlaps(s, f) for f in fair) for s in spans)
        return long_enough and true and any(_overlaps(s, w) for s in spans for w in wanted)


@dataclass(frozen=True)
class Together(StreetCheck):
    """People walking or standing together: a grounded "Yes" whose timed claims all overlap a
    group span of the attributes file (and there is one)."""

    def expect(self, truth: StreetTruth) -> str:
        return "yes: " + ", ".join(f"{sorted(g.ids)} {g.spans}" for g in truth.groups)

    def passes(self, answer: Answer, truth: StreetTruth) -> bool:
        spans = [(min(c.times), max(c.times)) for c in _claims(answer) if c.times]
        groups = [span for g in truth.groups for span in g.spans]
        fits = all(any(_overlaps(s, g) for g in groups) for s in spans)
        return answer.answer.startswith("Yes") and bool(spans) and fits


@dataclass(frozen=True)
class When(StreetCheck):
    """The first timed claim states a time within ``TIME_TOL_S`` of the truth."""

    of: Callable[[StreetTruth], float | None]
    what: str

    def expect(self, truth: StreetTruth) -> str:
        return f"{self.what} {self.of(truth)} s"

    def passes(self, answer: Answer, truth: StreetTruth) -> bool:
        t = self.of(truth)
        assert t is not None, f"no truth for {self.what}: ask it with NobodyIn"
        claim = first_timed(answer)
        return (
            not says_no(answer)
            and claim is not None
            and any(abs(x - t) <= TIME_TOL_S for x in claim.times)
        )


@dataclass(frozen=True)
class NobodyIn(StreetCheck):
    """A colour no person wears: "no" or a refusal is right, a grounded time is wrong."""

    colour: str
    answerable = False

    def expect(self, truth: StreetTruth) -> str:
        assert all(self.colour not in c for c in truth.colours.values()), self.colour
        return f"no one in {self.colour}"

    def passes(self, answer: Answer, truth: StreetTruth) -> bool:
        return says_no(answer) or not answer.grounded


@dataclass(frozen=True)
class Unknowable(StreetCheck):
    """What no detector sees or knows (cars, names, motives, tomorrow): refused, or an honest
    "no" (``bank.Refuse`` or ``bank.No``); a grounded "yes" is wrong."""

    answerable = False

    def expect(self, truth: StreetTruth) -> str:
        return "refuse or no"

    def passes(self, answer: Answer, truth: StreetTruth) -> bool:
        refused = not answer.grounded and answer.refusal_reason in REFUSALS
        return refused or says_no(answer)


def judge(check: StreetCheck, answer: Answer, truth: StreetTruth, trusted: bool = True) -> str:
    """``right``, ``refused`` or ``wrong`` (as ``bank.judge``): untrusted citations are wrong."""
    if answer.grounded and not trusted:
        return "wrong"
    if check.passes(answer, truth):
        return "right"
    return "refused" if not answer.grounded else "wrong"
