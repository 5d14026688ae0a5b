"""From an intent and a run's world to claims, each carrying the evidence it states.

Every function here returns claims (possibly none). A claim's sentence states only times, counts
and durations it also lists in its fields, and cites the spans they come from, so the guardrail
can check it mechanically. No claims means no evidence: the engine then refuses.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from functools import partial

from ask.intent import Intent
from ask.select import colour_of, events_for, overlaps, things_for
from ask.types import Citation, Claim, fmt_time
from ask.world import TEXT, Event, RunWorld, Thing

MAX_LISTED = 12  # items named one by one; the rest are counted (and still cited)


def _cap(text: str) -> str:
    """The first letter upper case (``str.capitalize`` would lower the rest: quoted text, ids)."""
    return text[:1].upper() + text[1:]


def describe(thing: Thing) -> str:
    """How an answer names an object: its class (or "a moving object") and its id."""
    if thing.cls == TEXT:
        return f'the text "{thing.text}"'
    noun = "moving object" if thing.cls == "motion" else thing.cls
    colour = colour_of(thing)
    if not colour:
        named = noun
    elif thing.cls == "person":  # a person's colour is what they wear: "a person in black"
        named = f"{noun} in {colour}"
    else:
        named = f"{colour} {noun}"
    article = "an" if named[0] in "aeiou" else "a"
    return f"{article} {named} ({thing.object_id})"


def _list(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _event_kinds(intent: Intent) -> tuple[str, ...]:
    if intent.subject == "scene_change":
        return ("scene_change",)
    if intent.subject == TEXT:
        return ("text_seen",)
    return (intent.action or "appear",)


VERB = {
    "appear": "appeared",
    "disappear": "disappeared",
    "enter_zone": "entered zone {zone}",
    "exit_zone": "left zone {zone}",
    "dwell": "stayed still",
    "scene_change": "the scene changed",
    "text_seen": "was seen",
}


def _verb(event: Event) -> str:
    return VERB.get(event.type, event.type.replace("_", " ")).format(zone=event.zone or "")


def event_claims(world: RunWorld, events: Sequence[Event], head: str) -> list[Claim]:
    """One counting claim over ``events`` and one claim per listed event."""
    cites = tuple(world.cite(e.evidence_id) for e in events)
    claims = [
        Claim(f"{head.format(n=len(events))}.", cites, counts=(len(events),), counted=len(events))
    ]
    for event in events[:MAX_LISTED]:
        claims.append(event_claim(world, event))
    return claims


def event_claim(world: RunWorld, event: Event) -> Claim:
    thing = world.by_id.get(event.object_id or "")
    who = describe(thing) if thing else "the scene"
    when = fmt_time(event.t_s)
    if event.type == "scene_change":
        return Claim(
            f"The scene changed at {when}.", (world.cite(event.evidence_id),), times=(event.t_s,)
        )
    if event.end_s is not None:
        length = event.end_s - event.t_s
        lasted = f" for {fmt_time(length)}," if event.type == "dwell" else ""
        span = f"{lasted} from {when} to {fmt_time(event.end_s)}"
        text = f"{_cap(who)} {_verb(event)}{span}"
        text += f" in zone {event.zone}." if event.type == "dwell" and event.zone else "."
        durations = (length,) if lasted else ()
        cites = (world.cite(event.evidence_id),)
        return Claim(text, cites, times=(event.t_s, event.end_s), durations=durations)
    return Claim(
        f"{_cap(who)} {_verb(event)} at {when}.",
        (world.cite(event.evidence_id),),
        times=(event.t_s,),
    )


def _thing_claim(world: RunWorld, thing: Thing) -> Claim:
    verb = "was seen" if thing.cls == TEXT else "was in view"
    span = f"from {fmt_time(thing.first_s)} to {fmt_time(thing.last_s)}"
    text = f"{_cap(describe(thing))} {verb} {span}."
    return Claim(text, (world.cite(thing.evidence_id),), times=(thing.first_s, thing.last_s))


_Found = tuple[float, str, Callable[[], Claim]]  # time, evidence id, the claim's maker


def _firsts(world: RunWorld, intent: Intent) -> list[_Found]:
    """Everything matching the question, in time order, to pick the first or last from; the
    claims are made only for what is picked (an hour holds hundreds)."""
    kinds = _event_kinds(intent)
    found: list[_Found]
    if kinds == ("appear",) and intent.subject != "scene_change":
        found = [
            (t.first_s, t.evidence_id, partial(_thing_claim_at, world, t, "appeared", t.first_s))
            for t in things_for(world, intent)
        ]
    elif kinds == ("disappear",):  # going out of the picture, not being lost inside it
        found = [
            (
                t.last_s,
                t.evidence_id,
                partial(_thing_claim_at, world, t, "was last seen", t.last_s),
            )
            for t in things_for(world, intent)
            if world.went_out(t)
        ]
    else:
        found = [
            (e.t_s, e.evidence_id, partial(event_claim, world, e))
            for e in events_for(world, intent, kinds)
        ]
    return sorted(found, key=lambda f: f[0])


def _thing_claim_at(world: RunWorld, thing: Thing, verb: str, t: float) -> Claim:
    return Claim(
        f"{_cap(describe(thing))} {verb} at {fmt_time(t)}.",
        (world.cite(thing.evidence_id),),
        times=(t,),
    )


def first(world: RunWorld, intent: Intent) -> list[Claim]:
    found = _firsts(world, intent)
    return [_prefixed("First: ", found[0][2]())] if found else []


def last(world: RunWorld, intent: Intent) -> list[Claim]:
    found = _firsts(world, intent)
    return [_prefixed("Last: ", found[-1][2]())] if found else []


def _prefixed(prefix: str, claim: Claim) -> Claim:
    text = prefix + claim.text[0].lower() + claim.text[1:]
    return Claim(text, claim.citations, claim.times, claim.counts, claim.counted, claim.durations)


def when(world: RunWorld, intent: Intent) -> list[Claim]:
    if intent.subject == TEXT:
        return [_thing_claim(world, t) for t in things_for(world, intent)[:MAX_LISTED]]
    found = _firsts(world, intent)
    listed = [make() for _, _, make in found[:MAX_LISTED]]
    if len(found) > MAX_LISTED:
        rest = found[MAX_LISTED:]
        cites = tuple(world.cite(evidence_id) for _, evidence_id, _ in rest)
        more = Claim(
            f"And {len(rest)} more after that.", cites, counts=(len(rest),), counted=len(rest)
        )
        return [*listed, more]
    return listed


def duration(world: RunWorld, intent: Intent) -> list[Claim]:
    if intent.action == "dwell":
        events = [e for e in events_for(world, intent, ("dwell",)) if e.end_s is not None]
        return [
            _lasting(
                world,
                e.evidence_id,
                describe(world.by_id[e.object_id]) if e.object_id in world.by_id else "an object",
                "stayed still",
                e.t_s,
                e.end_s or e.t_s,
            )
            for e in events[:MAX_LISTED]
        ]
    things = things_for(world, intent)
    verb = "was visible" if intent.subject == TEXT else "was in view"
    return [
        _lasting(world, t.evidence_id, describe(t), verb, t.first_s, t.last_s)
        for t in things[:MAX_LISTED]
    ]


def _lasting(
    world: RunWorld, evidence_id: str, who: str, verb: str, start: float, end: float
) -> Claim:
    length = end - start
    text = f"{_cap(who)} {verb} for {fmt_time(length)}, from {fmt_time(start)} to {fmt_time(end)}."
    return Claim(text, (world.cite(evidence_id),), times=(start, end), durations=(length,))


def zone(world: RunWorld, intent: Intent) -> list[Claim]:
    if intent.action == "dwell":
        events = [e for e in events_for(world, intent, ("dwell",)) if e.zone]
        return [event_claim(world, e) for e in events[:MAX_LISTED]]
    if intent.action in {"enter_zone", "exit_zone"}:
        return [
            event_claim(world, e) for e in events_for(world, intent, (intent.action,))[:MAX_LISTED]
        ]
    things = [t for t in things_for(world, intent) if t.zones]
    return [
        Claim(
            f"{_cap(describe(t))} was in zone{'s' if len(t.zones) > 1 else ''} "
            f"{_list(list(t.zones))} (in view from {fmt_time(t.first_s)} to "
            f"{fmt_time(t.last_s)}).",
            (world.cite(t.evidence_id),),
            times=(t.first_s, t.last_s),
        )
        for t in things[:MAX_LISTED]
    ]


def texts(world: RunWorld, intent: Intent) -> list[Claim]:
    return [_thing_claim(world, t) for t in things_for(world, _as_text(intent))[:MAX_LISTED]]


def _as_text(intent: Intent) -> Intent:
    return Intent(intent.kind, TEXT, intent.action, intent.zone, intent.window, intent.quoted)


def exists(world: RunWorld, intent: Intent) -> list[Claim]:
    if intent.subject == "scene_change" or intent.action in {"dwell", "enter_zone", "exit_zone"}:
        kinds = _event_kinds(intent)
        events = events_for(world, intent, kinds)
        return [
            _yes(event_claim(world, e)) if i == 0 else event_claim(world, e)
            for i, e in enumerate(events[:MAX_LISTED])
        ]
    things = things_for(world, intent)
    return [
        _yes(_thing_claim(world, t)) if i == 0 else _thing_claim(world, t)
        for i, t in enumerate(things[:MAX_LISTED])
    ]


def _yes(claim: Claim) -> Claim:
    return _prefixed("Yes: ", claim)


def between(world: RunWorld, intent: Intent) -> list[Claim]:
    kinds = ("appear", "disappear", "enter_zone", "exit_zone", "dwell", "text_seen", "scene_change")
    events = [
        e
        for e in world.events
        if e.type in kinds and overlaps(e.t_s, e.end_s or e.t_s, intent.window)
    ]
    claims = [event_claim(world, e) for e in events[:MAX_LISTED]]
    if len(events) > MAX_LISTED:
        rest = events[MAX_LISTED:]
        cites = tuple(world.cite(e.evidence_id) for e in rest)
        claims.append(
            Claim(f"And {len(rest)} more events.", cites, counts=(len(rest),), counted=len(rest))
        )
    return claims


def change(world: RunWorld, intent: Intent) -> list[Claim]:
    """Each scene change (the first few, the rest counted) and what appeared or went within a
    second of it."""
    cuts = events_for(
        world, Intent("change", "scene_change", window=intent.window), ("scene_change",)
    )
    times = [e.t_s for e in world.events]  # events are in time order
    claims = []
    for cut in cuts[:MAX_LISTED]:
        claims.append(event_claim(world, cut))
        lo, hi = bisect_left(times, cut.t_s - 1.0), bisect_right(times, cut.t_s + 1.0)
        for event in world.events[lo:hi]:
            if event.type in {"appear", "disappear", "text_seen"}:
                claims.append(event_claim(world, event))
    if len(cuts) > MAX_LISTED:
        rest = cuts[MAX_LISTED:]
        cites = tuple(world.cite(e.evidence_id) for e in rest)
        claims.append(
            Claim(
                f"And {len(rest)} more scene changes.",
                cites,
                counts=(len(rest),),
                counted=len(rest),
            )
        )
    return claims


def thing_claim(world: RunWorld, thing: Thing) -> Claim:
    """The thing was in view (or, a text, seen) from its first to its last look."""
    return _thing_claim(world, thing)


def lasting(
    world: RunWorld, evidence_id: str, who: str, verb: str, start: float, end: float
) -> Claim:
    """The subject did something for a length of time, from ``start`` to ``end``."""
    return _lasting(world, evidence_id, who, verb, start, end)


def prefixed(prefix: str, claim: Claim) -> Claim:
    """The claim's sentence behind ``prefix`` (its first letter lowered)."""
    return _prefixed(prefix, claim)


def capitalised(text: str) -> str:
    return _cap(text)


COMPOSERS: dict[str, Callable[[RunWorld, Intent], list[Claim]]] = {
    "first": first,
    "last": last,
    "when": when,
    "duration": duration,
    "zone": zone,
    "text": texts,
    "exists": exists,
    "between": between,
    "change": change,
}


def cites_of(claims: Sequence[Claim]) -> tuple[Citation, ...]:
    """Every span the claims cite, once each, in time order."""
    unique = {c.evidence_id: c for claim in claims for c in claim.citations}
    return tuple(sorted(unique.values(), key=lambda c: (c.start_s, c.evidence_id)))
