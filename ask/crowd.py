"""Questions about many at once: the most in view together, and who went about together.

"When were the most people in view, and how many?", "how many people were in view at a time?"
ask for the PEAK: the largest number of the question's things in view at one moment, found by
sweeping their times in view; the answer cites each of them and says when the peak began and
ended. "Did people walk together?" asks for the scene graph's ``near`` relations (two objects'
boxes close, ``tasks.world_state``) between two of the question's things that last at least
``TOGETHER_MIN_S`` (passing each other is no walking together); "walk" wants both to have moved
(``ask.pace``).
"""

from __future__ import annotations

from ask.compose import MAX_LISTED, capitalised, describe
from ask.intent import Intent
from ask.pace import moved
from ask.select import things_for
from ask.types import Claim, fmt_time
from ask.world import RunWorld, Thing

# Two walking past each other (2.8 m/s closing speed) are close for well under a second, one
# overtaking another (0.5 m/s slower) for about three; together is close for longer than that:
# the world state's dwell time (``WorldConfig.dwell_s``), as long as a stop must last to be one.
TOGETHER_MIN_S = 3.0


def _noun(intent: Intent, n: int) -> str:
    if intent.subject == "person":
        return "person" if n == 1 else "people"
    return "object" if n == 1 else "objects"


def _peak_of(things: list[Thing]) -> tuple[list[Thing], float, float]:
    """The things in view together at the peak, when it began and when the first of them left."""
    marks = sorted(
        [(t.first_s, 0, t) for t in things] + [(t.last_s, 1, t) for t in things],
        key=lambda m: (m[0], m[1]),
    )
    now: dict[str, Thing] = {}
    best: list[Thing] = []
    start = 0.0
    for t, leaving, thing in marks:
        if leaving:
            now.pop(thing.object_id, None)
            continue
        now[thing.object_id] = thing
        if len(now) > len(best):
            best, start = list(now.values()), t
    end = min((t.last_s for t in best), default=start)
    return best, start, end


def peak(world: RunWorld, intent: Intent) -> list[Claim]:
    """The most of the question's things in view at once, when, and each of them."""
    things = things_for(world, intent)
    if not things:
        return []
    best, start, end = _peak_of(things)
    n = len(best)
    cites = tuple(world.cite(t.evidence_id) for t in best)
    span = f"at {fmt_time(start)}" if end <= start else f"from {fmt_time(start)} to {fmt_time(end)}"
    verb = "was" if n == 1 else "were"
    text = f"At most {n} {_noun(intent, n)} {verb} in view at once, {span}."
    times = (start,) if end <= start else (start, end)
    head = Claim(text, cites, times=times, counts=(n,), counted=n)
    named = [
        Claim(f"{capitalised(describe(t))} was in view then.", (world.cite(t.evidence_id),))
        for t in best[:MAX_LISTED]
    ]
    return [head, *named]


def together(world: RunWorld, intent: Intent) -> list[Claim]:
    """Each stretch two of the question's things were close together (moving, for "walk")."""
    pool = {t.object_id: t for t in things_for(world, intent)}
    if intent.moving:
        pool = {i: t for i, t in pool.items() if moved(t)}
    pairs = [
        (start, end, pool[a], pool[b])
        for a, b, start, end in world.near
        if a in pool
        and b in pool
        and _in(intent.window, start, end)
        and end - start >= TOGETHER_MIN_S
    ]
    claims = []
    for i, (start, end, a, b) in enumerate(sorted(pairs, key=lambda p: p[0])[:MAX_LISTED]):
        text = (
            f"{capitalised(describe(a))} and {describe(b)} were close together from "
            f"{fmt_time(start)} to {fmt_time(end)}."
        )
        text = ("Yes: " + text[0].lower() + text[1:]) if i == 0 else text
        cites = (world.cite(a.evidence_id), world.cite(b.evidence_id))
        claims.append(Claim(text, cites, times=(start, end)))
    return claims


def _in(window: tuple[float, float] | None, start: float, end: float) -> bool:
    return window is None or (end >= window[0] and start <= window[1])
