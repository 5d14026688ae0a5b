"""Counting things or counting their appearances: which one a question asks, and the claims.

A thing that left the picture and came back is two objects of one identity (the scene graph's
``identity_id``, see ``tasks.track.identities``). "How many people appeared?", "how many
different people were there?" ask how many THINGS: identities. "How many times did people
pass?", "how many appearances?" ask how many times things came into view: APPEARANCES, the
objects. The answer says which it counted (``counted`` in ``interpreted``, and its words); where
no thing came back the two are one number, and the answer reads as it always did.

The guardrail wants every count to equal the spans it cites, so a count of identities cites one
span per identity (the object span of its first appearance), and a count of appearances cites
every object's span.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ask.types import Claim
from ask.world import RunWorld, Thing

IDENTITIES, APPEARANCES = "identities", "appearances"

# Words that ask how many times things came into view rather than how many things did.
APPEARANCE_WORDS = r"\bhow (?:many times|often)\b|\bappearances\b|\bvisits\b|\bpasses\b"
# Words for coming by (counted as coming into view); which count they ask is read above.
PASSING_WORDS = (
    r"\bpass(?:es|ed|ing)?(?: by)?\b|\bwalk(?:s|ed)? (?:by|past)\b|\bw[ea]nt by\b|\bgo(?:es)? by\b"
)


def counting_of(question: str) -> str:
    """What a count question about things counts: ``appearances`` when it asks how many times
    (``APPEARANCE_WORDS``), else ``identities``."""
    return APPEARANCES if re.search(APPEARANCE_WORDS, question) else IDENTITIES


def identities_of(things: Sequence[Thing]) -> list[list[Thing]]:
    """``things`` grouped by identity, each group and the groups in order of appearance; an
    object without an identity (a run before schema version 4) is one of its own."""
    groups: dict[str, list[Thing]] = {}
    for thing in sorted(things, key=lambda t: (t.first_s, t.object_id)):
        groups.setdefault(thing.identity_id or thing.object_id, []).append(thing)
    return list(groups.values())


@dataclass(frozen=True)
class Nouns:
    """How the answer names what it counts: ``one``/``many`` ("person"/"people") and the
    plural as a sentence's subject ("People", "Objects")."""

    one: str
    many: str

    def of(self, n: int) -> str:
        return self.one if n == 1 else self.many


def count_claims(
    world: RunWorld, things: Sequence[Thing], counting: str, nouns: Nouns, where: str
) -> list[Claim] | None:
    """The counting claims when some thing came back (None when every identity appeared once:
    the plain count says it all). ``where`` ends the sentence (" in zone left", or "")."""
    groups = identities_of(things)
    if len(groups) == len(things):
        return None
    firsts = tuple(world.cite(group[0].evidence_id) for group in groups)
    every = tuple(world.cite(t.evidence_id) for t in things)
    n, times = len(groups), len(things)
    things_claim = Claim(
        f"{n} different {nouns.of(n)} appeared{where}.", firsts, counts=(n,), counted=n
    )
    passes_claim = Claim(
        f"They came into view {times} times (some left and came back).",
        every,
        counts=(times,),
        counted=times,
    )
    if counting == IDENTITIES:
        return [things_claim, passes_claim]
    head = Claim(
        f"{nouns.many[:1].upper()}{nouns.many[1:]} came into view {times} times{where}.",
        every,
        counts=(times,),
        counted=times,
    )
    return [head, Claim(f"That is {n} different {nouns.of(n)}.", firsts, counts=(n,), counted=n)]
