"""Truth and checks for everyday words (issue 44): places, motion, the camera, counts.

The words bank (``tests/ask/words_bank.py``) reuses the question bank's checks; these are the
few its words need besides, each deriving the right answer from the scene's ground truth.

The speed rule ("run", "rush", "quickly", "sprint"): a lobby or hall camera's view spans some
8 to 10 m, so a person walking (about 1.4 m/s) crosses some 0.15 frame widths a second and a
runner (3 m/s or more) 0.3 or more. An object runs when its mean speed over its time in view
is at least ``RUN_WIDTHS_PER_S`` frame widths a second. Nothing in the synthetic scenes does
(the fastest, the hall's red, makes 0.17): a question whether anyone ran gets an honest "no" or
a refusal naming the word, and a grounded "yes" is wrong (``NotSo``). A scene where the rule
no longer holds turns the case into "CASE IS WRONG" rather than into a silent pass.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ask.types import Answer
from synthetic import GroundTruth, ObjectTruth, ground_truth
from tests.ask.bank import SCENES, No, Summary, coloured, says_no, speed_of
from tests.ask.test_eval import (
    TOLERANCE_S,
    ZONES,
    Check,
    Count,
    During,
    Lasting,
    dwell_length,
    dwell_zones,
    first_claim,
    only_cut,
    only_dwell,
    zone_of,
)

RUN_WIDTHS_PER_S = 0.3


# --- Truth, by code ----------------------------------------------------------------------------


def n_identities(truth: GroundTruth) -> int:
    """How many different things appeared (an identity that returns is one thing)."""
    return len({o.identity for o in truth.objects})


def no_returns(truth: GroundTruth) -> bool:
    """No identity appears twice: nothing comes back."""
    return n_identities(truth) == len(truth.objects)


def runs(obj: ObjectTruth, width: int) -> bool:
    """Whether an object moves at running pace (see the module's speed rule)."""
    return speed_of(obj) / width >= RUN_WIDTHS_PER_S


def nobody_runs(truth: GroundTruth) -> bool:
    return not any(runs(o, truth.spec.width) for o in truth.objects)


def zones_crossed(obj: ObjectTruth, width: int) -> set[str]:
    """The default zones an object's centre is ever in."""
    return {zone_of(box, width) for box in obj.boxes.values()}


def n_crossing(truth: GroundTruth) -> int:
    """Objects that cross the picture: their centre is in every default zone at some time."""
    return sum(zones_crossed(o, truth.spec.width) == set(ZONES) for o in truth.objects)


def n_waiters(truth: GroundTruth) -> int:
    """Objects that waited (stayed still) at least once."""
    return sum(bool(o.dwell_intervals) for o in truth.objects)


def appeared_after_cut(truth: GroundTruth) -> int:
    """Objects first seen after the (only) scene cut."""
    cut = only_cut(truth)
    return sum(o.first_seen_s > cut for o in truth.objects)


def n_shots(truth: GroundTruth) -> int:
    """Different shots (camera views): one more than the cuts."""
    return len(truth.scene_cuts) + 1


def no_zone(name: str) -> Callable[[GroundTruth], bool]:
    """True when ``name`` is none of the run's zones (the default thirds)."""
    return lambda truth: name not in ZONES


# --- Checks --------------------------------------------------------------------------------------

_APPEARANCES = re.compile(r"\bappearances?\b|\bcame into view\b.*\btimes\b", re.IGNORECASE)
_ABOUT_OBJECTS = re.compile(r"object|appeared", re.IGNORECASE)


def counts_appearances(text: str) -> bool:
    """A claim that says it counts appearances ("4 appearances", "came into view 4 times"),
    which may differ from the number of things."""
    return bool(_APPEARANCES.search(text))


@dataclass(frozen=True)
class OneCount(Check):
    """Every claim stating how many objects appeared states the truth's number of different
    things (identities), and at least one does. A claim counts objects when it has ``counts``
    and says "object" or "appeared"; its first count is the one it leads with. A claim that
    says it counts appearances is exempt."""

    def expect(self, truth: GroundTruth) -> str:
        return f"every object count {n_identities(truth)}"

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        stated = [
            c.counts[0]
            for c in answer.claims
            if c.counts and _ABOUT_OBJECTS.search(c.text) and not counts_appearances(c.text)
        ]
        return answer.grounded and bool(stated) and set(stated) == {n_identities(truth)}


@dataclass(frozen=True)
class AllOf(Check):
    """Right when every check is (they must agree on whether the question is answerable)."""

    checks: Sequence[Check]

    @property
    def answerable(self) -> bool:  # type: ignore[override]
        return all(c.answerable for c in self.checks)

    def expect(self, truth: GroundTruth) -> str:
        return "; ".join(c.expect(truth) for c in self.checks)

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        return all(c.passes(answer, truth) for c in self.checks)


def _within_some_object(t: float, truth: GroundTruth) -> bool:
    return any(
        o.first_seen_s - TOLERANCE_S <= t <= o.last_seen_s + TOLERANCE_S for o in truth.objects
    )


@dataclass(frozen=True)
class Someone(Check):
    """ "Did anybody walk/pass/come through ...?" when things did: right is a grounded "Yes"
    whose every stated time falls in some object's time in view, or an answer whose first claim
    counts the different things (the bank's people convention: "No people were recognised; 3
    moving objects were seen" names no person yet tells what moved). A bare "no" is wrong: the
    figures did move through."""

    def expect(self, truth: GroundTruth) -> str:
        return f"yes: {n_identities(truth)} moving objects"

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        if not answer.grounded:
            return False
        if first_claim(answer).counts[:1] == (n_identities(truth),):
            return True
        times = [t for c in answer.claims for t in c.times]
        in_view = all(_within_some_object(t, truth) for t in times)
        return answer.answer.startswith("Yes") and bool(times) and in_view


@dataclass(frozen=True)
class NotSo(Check):
    """What is asked is not so (``premise`` checks that, by code) and hangs on ``word``: an
    honest "no", or a refusal that names the word. A grounded "yes" is wrong, and so is a
    grounded answer to the question without the word."""

    premise: Callable[[GroundTruth], bool]
    word: str
    answerable = False

    def expect(self, truth: GroundTruth) -> str:
        if not self.premise(truth):
            return f"CASE IS WRONG: {self.word!r} holds"
        return f'no, or refuse naming "{self.word}"'

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        if not self.premise(truth):
            return False
        named = re.search(rf"\b{re.escape(self.word)}", answer.answer, re.IGNORECASE)
        return says_no(answer) or (not answer.grounded and named is not None)


# --- Checks decided by the scene's truth, and the ones the banks share -----------------------

DIFFERENT_THINGS = AllOf((Count(n_identities), OneCount()))
RECAP = AllOf((Summary(), OneCount()))


def always(truth: GroundTruth) -> bool:
    """A premise that holds whatever the truth (what is asked is never so in any video)."""
    return True


@functools.cache
def truth_of(scene: str) -> GroundTruth:
    """A bank scene's ground truth, from its spec alone (no video is rendered)."""
    return ground_truth(SCENES[scene]())


def waited_in(zone: str, scene: str) -> Check:
    """Whether something waited in ``zone``: the wait when it truly was there, else "no"."""
    return During(only_dwell, "still") if zone in dwell_zones(truth_of(scene)) else No()


def waits_of(colour: str, scene: str) -> tuple[Check, Check]:
    """Whether the ``colour`` one waited, and for how long: the wait and its length when that
    object truly waited, else "no" to both."""
    if coloured(colour)(truth_of(scene)).dwell_intervals:
        return During(only_dwell, "still"), Lasting(dwell_length, "still")
    return No(), No()
