"""Which objects a question's qualifiers keep: colour, direction of travel, and the window's
meaning (coming into view in it, going out of view in it, or being in view during it)."""

from __future__ import annotations

from collections.abc import Sequence

from ask.identities import identities_of
from ask.intent import Intent
from ask.pace import moved, ran
from ask.world import PARTS, TEXT, Event, RunWorld, Thing

MIN_COLOUR_CONFIDENCE = 0.2  # below this a measured colour is not claimed
MIN_HEADING = 0.15  # frame widths of net travel before an object "moved left/right"


def measures_colour(world: RunWorld) -> bool:
    """Whether a colour question can be answered from this run: some object's colour was
    measured, or there is no object whose colour could have been (the answer finds none)."""
    physical = world.physical
    return not physical or any(t.colour is not None for t in physical)


def why_no_colours(world: RunWorld) -> str:
    """What a run whose objects all lack a colour did not measure, and why (its refusal).

    Colour came with size, speed and heading (schema version 3): objects with none of them are of
    an older run, which executing the video again would measure. Objects with them were measured
    in every kind of run (whole, in chunks, live), but never seen whole inside the frame, the
    only looks a colour is read from (``tasks.world_state.colour``): executing again would not help.
    """
    if all(t.size is None for t in world.physical):
        return (
            "This run was made before colours were measured, so its objects have none. "
            "Executing the video again would measure them."
        )
    return (
        "This run measured no colour: a colour is read only where an object is seen whole "
        "inside the frame, and no object of this run was, so I make no claim about colours."
    )


def colour_of(thing: Thing) -> str | None:
    """The thing's measured colour when sure enough to say it."""
    sure = thing.colour_confidence >= MIN_COLOUR_CONFIDENCE
    return thing.colour if sure else None


def heading_of(thing: Thing) -> str | None:
    if thing.heading_x is None or abs(thing.heading_x) < MIN_HEADING:
        return None
    return "left" if thing.heading_x < 0 else "right"


def headed(things: list[Thing], direction: str) -> list[Thing]:
    """The things of each identity that went ``direction`` ("left", "right"), for the
    identities whose travel that way, added over their appearances, is at least
    ``MIN_HEADING``: a person seen in two pieces (a track lost and found again) who crossed
    the picture crossed it, though neither piece went far enough alone."""
    sign = -1.0 if direction == "left" else 1.0
    kept: list[Thing] = []
    for group in identities_of(things):
        went = [t for t in group if t.heading_x is not None and t.heading_x * sign > 0]
        if sum(abs(t.heading_x or 0.0) for t in went) >= MIN_HEADING:
            kept += went
    return sorted(kept, key=lambda t: (t.first_s, t.object_id))


def matches(thing: Thing, intent: Intent, direction: bool = True) -> bool:
    """Whether ``thing`` satisfies every qualifier of ``intent`` (window aside; ``direction``
    False: its direction is judged with its identity's, ``headed``)."""
    q = intent.qualifiers
    if q.colour is not None and colour_of(thing) != q.colour:
        return False
    if intent.moving and not moved(thing):
        return False
    if intent.pace is not None and not ran(thing):
        return False
    if q.min_s is not None and intent.action != "dwell" and thing.seen_s < q.min_s:
        return False
    return q.direction is None or not direction or heading_of(thing) == q.direction


def in_window(thing: Thing, intent: Intent) -> bool:
    """Coming into view in the window ("appeared after"), going out of it ("left before"), or
    being in view during it ("visible after")."""
    window = intent.window
    if window is None:
        return True
    if intent.action == "appear" and not intent.presence:
        return window[0] <= thing.first_s <= window[1]
    if intent.action == "disappear":
        return window[0] <= thing.last_s <= window[1]
    return thing.last_s >= window[0] and thing.first_s <= window[1]


def things_for(world: RunWorld, intent: Intent) -> list[Thing]:
    """The objects the question is about, in order of appearance."""
    if intent.subject == TEXT:
        pool = world.texts
    elif intent.subject in {"object", "scene_change"}:
        pool = world.physical
    else:
        pool = [t for t in world.things if t.cls == intent.subject]
    if intent.new:  # "new people": each thing's first appearance only
        firsts = {group[0].object_id for group in identities_of(pool)}
        pool = [t for t in pool if t.object_id in firsts]
    if intent.zone and intent.window is not None and world.in_zone:  # in it during the window
        pool = [t for t in pool if _in_zone_during(world, t, intent.zone, intent.window)]
    elif intent.zone:
        pool = [t for t in pool if intent.zone in t.zones]
    if intent.quoted and intent.subject == TEXT:
        wanted = "".join(intent.quoted.split()).casefold()
        pool = [t for t in pool if wanted in "".join((t.text or "").split()).casefold()]
    kept = [t for t in pool if matches(t, intent, direction=False)]
    if intent.qualifiers.direction is not None:
        kept = headed(kept, intent.qualifiers.direction)
    return [t for t in kept if in_window(t, intent)]


def _in_zone_during(world: RunWorld, thing: Thing, zone: str, window: tuple[float, float]) -> bool:
    stretches = world.in_zone.get(thing.object_id, ())
    return any(z == zone and overlaps(a, b, window) for z, a, b in stretches)


def events_for(world: RunWorld, intent: Intent, kinds: Sequence[str]) -> list[Event]:
    """The events of ``kinds`` the question is about (zone, window and subject class)."""
    chosen = []
    typed = [e for kind in kinds for e in world.events_by_type.get(kind, ())]
    if len(kinds) > 1:
        typed.sort(key=lambda e: e.t_s)  # stable: each type's list is in time order
    for event in typed:
        if not overlaps(event.t_s, event.end_s or event.t_s, intent.window):
            continue
        if intent.zone and event.zone != intent.zone:
            continue
        least = intent.qualifiers.min_s
        if least is not None and event.end_s is not None and event.end_s - event.t_s < least:
            continue
        thing = world.by_id.get(event.object_id or "")
        if thing is not None and not matches(thing, intent):
            continue
        if intent.subject == "object" and thing is not None and thing.cls in PARTS:
            continue  # a face appearing is not one more object
        if event.type == "disappear" and thing is not None and not world.went_out(thing):
            continue  # lost from view inside the picture: it did not leave
        if intent.subject not in {"object", TEXT, "scene_change"} and (
            thing is None or thing.cls != intent.subject
        ):
            continue
        chosen.append(event)
    return chosen


def overlaps(start: float, end: float, window: tuple[float, float] | None) -> bool:
    """Whether ``start``..``end`` meets the window (no window: always)."""
    return window is None or (end >= window[0] and start <= window[1])
