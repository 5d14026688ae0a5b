"""The question shapes that rank or gather: orderings, colours, summaries, people.

Like ``ask.compose``, each function returns claims that carry what they state (or none).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ask.compose import (
    MAX_LISTED,
    capitalised,
    describe,
    event_claim,
    lasting,
    prefixed,
    thing_claim,
)
from ask.counting import count
from ask.identities import IDENTITIES, identities_of
from ask.intent import Intent
from ask.select import colour_of, events_for, things_for
from ask.types import Claim
from ask.world import RunWorld, Thing

# What each ordering sorts by, and whether it takes the largest.
ORDER_KEYS: dict[str, tuple[Callable[[Thing], float | None], bool]] = {
    "longest": (lambda t: t.seen_s, True),
    "shortest": (lambda t: t.seen_s, False),
    "biggest": (lambda t: t.size, True),
    "smallest": (lambda t: t.size, False),
    "fastest": (lambda t: t.speed, True),
    "slowest": (lambda t: t.speed, False),
}
_SAID = {
    "longest": "in view the longest",
    "shortest": "in view the shortest time",
    "biggest": "the biggest (by its box)",
    "smallest": "the smallest (by its box)",
    "fastest": "the fastest (path over time in view)",
    "slowest": "the slowest (path over time in view)",
}


def ranked(world: RunWorld, intent: Intent) -> Thing | None:
    """The one object the ordering picks among those the question is about."""
    order = intent.qualifiers.order
    if order not in ORDER_KEYS:
        return None
    key, largest = ORDER_KEYS[order]
    scored = [(value, t) for t in things_for(world, intent) if (value := key(t)) is not None]
    if not scored:
        return None
    pick = max if largest else min
    return pick(scored, key=lambda vt: vt[0])[1]


def order(world: RunWorld, intent: Intent) -> list[Claim]:
    if intent.still and intent.qualifiers.order in {"longest", "shortest"}:
        return _ranked_wait(world, intent)
    thing = ranked(world, intent)
    if thing is None:
        return []
    said = _SAID[intent.qualifiers.order or ""]
    if intent.qualifiers.order in {"longest", "shortest"}:
        claim = lasting(
            world, thing.evidence_id, describe(thing), "was in view", thing.first_s, thing.last_s
        )
        return [prefixed(f"The one {said}: ", claim)]
    return [prefixed(f"The one {said}: ", thing_claim(world, thing))]


def _ranked_wait(world: RunWorld, intent: Intent) -> list[Claim]:
    """ "Who stood still the longest": the longest (shortest) still stretch, not the longest
    time in view."""
    waits = [e for e in events_for(world, intent, ("dwell",)) if e.end_s is not None]
    if not waits:
        return []
    pick = max if intent.qualifiers.order == "longest" else min
    wait = pick(waits, key=lambda e: (e.end_s or e.t_s) - e.t_s)
    return [prefixed(f"The {intent.qualifiers.order} wait: ", event_claim(world, wait))]


def colour(world: RunWorld, intent: Intent) -> list[Claim]:
    """The measured colour of each object the question is about."""
    if intent.qualifiers.order:
        picked = ranked(world, intent)
        things = [picked] if picked else []
    elif intent.action == "dwell":
        ids = [e.object_id for e in events_for(world, intent, ("dwell",))]
        things = [world.by_id[i] for i in dict.fromkeys(ids) if i in world.by_id]
    else:
        things = things_for(world, intent)
    claims = []
    for thing in things[:MAX_LISTED]:
        named = colour_of(thing)
        if named is None:
            continue
        base = thing_claim(world, thing)
        claims.append(
            Claim(
                f"{capitalised(describe(thing))} was {named} (measured from its pixels); "
                + base.text[0].lower()
                + base.text[1:].replace(describe(thing) + " ", "it ", 1),
                base.citations,
                base.times,
            )
        )
    return claims


def summary(world: RunWorld, intent: Intent) -> list[Claim]:
    """The counts of objects, texts and scene changes, and the texts named."""
    # The one count of every answer: things (identities), with appearances where they differ.
    counted = count(world, Intent("count", "object", "appear", counting=IDENTITIES))
    claims = [c for c in counted[:2] if c.counts]
    texts = world.texts
    if texts:
        quoted = ", ".join(f'"{t.text}"' for t in texts[:MAX_LISTED])
        cites = tuple(world.cite(t.evidence_id) for t in texts[:MAX_LISTED])
        claims.append(Claim(f"Texts read: {quoted}.", cites))
    claims += count(world, Intent("count", "scene_change"))[:1]
    return claims


_NEVER = {
    "dwell": "never stayed still",
    "enter_zone": "never entered zone {zone}",
    "exit_zone": "never left zone {zone}",
}


def without(world: RunWorld, intent: Intent) -> list[Claim]:
    """The objects the question is about that never did its action ("how many objects never
    stopped"): a count citing each of them, and each named."""
    did = {e.object_id for e in events_for(world, intent, (intent.action or "",))}
    things = [t for t in things_for(world, intent) if t.object_id not in did]
    if not things:
        return []
    n = len(things)
    noun = "object" if n == 1 else "objects"
    verb = _NEVER[intent.action or ""].format(zone=intent.zone or "a zone")
    cites = tuple(world.cite(t.evidence_id) for t in things)
    head = Claim(f"{n} {noun} {verb}.", cites, counts=(n,), counted=n)
    return [head, *(thing_claim(world, t) for t in things[:MAX_LISTED])]


def answers_negation(intent: Intent) -> bool:
    """Whether a denied predicate is one ``without`` answers: counting or listing the objects
    that never did an action the run records as events."""
    return intent.kind in {"count", "list"} and intent.action in _NEVER


def no_people(world: RunWorld) -> list[Claim]:
    """On a run whose person detector named none of its moving objects."""
    groups = identities_of(world.physical)  # counted as every count is: different things
    n = len(groups)
    cites = tuple(world.cite(group[0].evidence_id) for group in groups)
    seen = "moving object was" if n == 1 else "different moving objects were"
    text = f"No people were recognised; {n} {seen} seen."
    return [Claim(text, cites, counts=(n,), counted=n)]


def unsure_colour_before(world: RunWorld, intent: Intent) -> str | None:
    """Why "when did the first person in grey appear?" cannot be answered, or None: a thing
    the question is about came (for "last": went) earlier (later) than the first (last) one
    measured in that colour, and its colour was too unsure to name, so it may have been it."""
    colour_asked = intent.qualifiers.colour
    if colour_asked is None or intent.kind not in {"first", "last"}:
        return None
    anyone = dataclasses.replace(
        intent, qualifiers=dataclasses.replace(intent.qualifiers, colour=None)
    )
    things = things_for(world, anyone)
    named = [t for t in things if colour_of(t) == colour_asked]
    if not named:
        return None
    last = intent.kind == "last"
    pick = max(named, key=lambda t: t.last_s) if last else min(named, key=lambda t: t.first_s)
    unsure = [
        t
        for t in things
        if colour_of(t) is None and (t.last_s > pick.last_s if last else t.first_s < pick.first_s)
    ]
    if not unsure:
        return None
    side = "after" if last else "before"
    return (
        f"The {intent.kind} one I can name as {colour_asked} is {describe(pick)}, but "
        f"{len(unsure)} {'was' if len(unsure) == 1 else 'were'} seen {side} it whose colour was "
        f"too unsure to name, so I cannot say which was the {intent.kind} in {colour_asked}."
    )
