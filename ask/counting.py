"""Counting what a question asks about: things (identities, with appearances as a second
figure where some came back), events ("how many times did an object stop"), scene changes.

Every count an answer states comes from here or from ``ask.identities``, so the summary, a
list and "how many" say the same number in the same unit.
"""

from __future__ import annotations

import dataclasses
import itertools

from ask.compose import MAX_LISTED, VERB, event_claim, event_claims, thing_claim
from ask.identities import IDENTITIES, Nouns, count_claims, identities_of
from ask.intent import Intent
from ask.select import events_for, things_for
from ask.types import Claim
from ask.world import TEXT, Event, RunWorld, Thing


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
        hidden = hidden_during(world, intent, intent.window)
        if hidden:
            return _there(world, intent, identities_of(things), hidden, where)
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


def hidden_during(world: RunWorld, intent: Intent, window: tuple[float, float]) -> list[Thing]:
    """The things not in view during ``window`` that were there all the same: lost from view
    inside the picture before it and found again inside the picture after it, as the same
    thing (identity). Each is given by its sighting before the gap."""
    anyone = dataclasses.replace(intent, window=None)
    hidden = []
    for group in identities_of(things_for(world, anyone)):
        for before, after in itertools.pairwise(group):
            gap = before.last_s < window[0] and after.first_s > window[1]
            inside = before.ends_at_edge is False and after.starts_at_edge is False
            if gap and inside:
                hidden.append(before)
    return hidden


def _there(
    world: RunWorld, intent: Intent, seen: list[list[Thing]], hidden: list[Thing], where: str
) -> list[Claim]:
    """How many were there: those in view, and those hidden between two sightings."""
    n, k = len(seen), len(hidden)
    total = n + k
    in_view = tuple(world.cite(g[0].evidence_id) for g in seen)
    lost = tuple(world.cite(t.evidence_id) for t in hidden)
    noun = _noun(intent, total)
    claims = [
        Claim(f"{total} {noun} were there{where}.", in_view + lost, counts=(total,), counted=total)
    ]
    if n:
        verb = "was" if n == 1 else "were"
        claims.append(Claim(f"{n} {verb} in view.", in_view, counts=(n,), counted=n))
    verb = "was" if k == 1 else "were"
    claims.append(
        Claim(
            f"{k} {verb} lost from view inside the picture then (hidden or not found) and "
            "found again inside it later.",
            lost,
            counts=(k,),
            counted=k,
        )
    )
    return claims + [thing_claim(world, t) for t in hidden[:MAX_LISTED]]
