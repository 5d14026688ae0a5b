"""Counting what a question asks about: things (identities, with appearances as a second
figure where some came back), events ("how many times did an object stop"), scene changes.

Every count an answer states comes from here or from ``ask.identities``, so the summary, a
list and "how many" say the same number in the same unit.
"""

from __future__ import annotations

from ask.compose import (
    MAX_LISTED,
    VERB,
    event_claim,
    event_claims,
    events_for,
    thing_claim,
    things_for,
)
from ask.identities import IDENTITIES, Nouns, count_claims, identities_of
from ask.intent import Intent
from ask.types import Claim
from ask.world import TEXT, Event, RunWorld


def _noun(intent: Intent, n: int) -> str:
    if intent.subject == TEXT:
        return "text" if n == 1 else "texts"
    if intent.subject == "person":
        return "person" if n == 1 else "people"
    if intent.subject not in {"object", "scene_change"}:
        return intent.subject if n == 1 else f"{intent.subject}s"
    return "object" if n == 1 else "objects"


def count(world: RunWorld, intent: Intent) -> list[Claim]:
    if intent.subject == "scene_change":
        cuts = events_for(world, intent, ("scene_change",))
        times = "The scene changed {n} time" + ("" if len(cuts) == 1 else "s")
        return event_claims(world, cuts, times) if cuts else []
    if intent.action in {"dwell", "enter_zone", "exit_zone", "disappear"}:
        events = events_for(world, intent, (intent.action,))
        verb = VERB[intent.action].format(zone=intent.zone or "a zone")
        who = "an object" if intent.subject == "object" else f"a {_noun(intent, 1)}"
        if not events:
            return []
        if intent.counting == IDENTITIES:  # "how many people stopped": people, then times
            return _doers(world, intent, events, verb)
        times = "time" if len(events) == 1 else "times"
        return event_claims(world, events, f"{{n}} {times} {who} {verb}")
    things = things_for(world, intent)
    if not things:
        return []
    cites = tuple(world.cite(t.evidence_id) for t in things)
    n = len(things)
    if intent.subject == TEXT:
        verb = "were read"
    elif intent.presence and intent.window is not None:
        verb = "was in view" if n == 1 else "were in view"  # being there, not coming in
    else:
        verb = "appeared"
    where = f" in zone {intent.zone}" if intent.zone else ""
    if intent.qualifiers.direction:
        where += f" and went {intent.qualifiers.direction}"
    listed = [thing_claim(world, t) for t in things[:MAX_LISTED]]
    if intent.presence and intent.window is not None:  # different things there at the time
        groups = identities_of(things)
        n, cites = len(groups), tuple(world.cite(g[0].evidence_id) for g in groups)
    elif intent.counting:
        nouns = Nouns(_noun(intent, 1), _noun(intent, 2))
        counted = count_claims(world, things, intent.counting, nouns, where)
        if counted:
            return [*counted, *listed]
    head = Claim(f"{n} {_noun(intent, n)} {verb}{where}.", cites, counts=(n,), counted=n)
    return [head, *listed]


def _doers(world: RunWorld, intent: Intent, events: list[Event], verb: str) -> list[Claim]:
    """How many different things did an event's action (each cited by its first such event),
    and how many times, when they differ."""
    by_thing: dict[str, Event] = {}
    for event in events:
        thing = world.by_id.get(event.object_id or "")
        key = (thing.identity_id or thing.object_id) if thing else event.event_id
        by_thing.setdefault(key, event)
    n, times = len(by_thing), len(events)
    firsts = tuple(world.cite(e.evidence_id) for e in by_thing.values())
    noun = _noun(intent, n)
    different = "" if n == 1 else "different "
    claims = [Claim(f"{n} {different}{noun} {verb}.", firsts, counts=(n,), counted=n)]
    if times != n:
        every = tuple(world.cite(e.evidence_id) for e in events)
        claims.append(
            Claim(f"That was {times} times in all.", every, counts=(times,), counted=times)
        )
    return claims + [event_claim(world, e) for e in events[:MAX_LISTED]]


def listing(world: RunWorld, intent: Intent) -> list[Claim]:
    return count(world, intent)
