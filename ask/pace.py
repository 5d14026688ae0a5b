"""Words for motion and what the run measured for them: walking, passing, crossing, running.

"Walk", "pass", "cross" and the like ask about things that came into view and MOVED: a thing
moved when its path in view (speed x time in view) is at least its own size (the side of a
square of its mean box area), so a figure that stood in one place the whole time did not walk.

"Run", "rush", "quickly" ask about pace. A person walks at about 1.4 m/s and runs at 3 m/s or
more; a standing person's box is about 1.7 m x 0.5 m, whose square side is about 0.9 m. So a
walker covers about 1.5 of their own sizes a second and a runner 3.3 or more; the line between
them is drawn at 2.5 sizes a second, from those figures and not from any video. A thing whose
size or speed the run did not measure is never said to run. Where nothing the question is about
ran, the engine refuses and names the word instead of answering "no": a coarse speed is not
evidence that nobody ran.
"""

from __future__ import annotations

import math

from ask.vocabulary import words
from ask.world import Thing

# Coming by and moving through: the thing moved (answers count it as appeared).
MOVING = words(
    r"walk\w*",
    r"cross\w*",
    r"pass(?:es|ed|ing)?",
    r"travel\w*",
    r"wander\w*",
    r"stroll\w*",
    r"strode",
    r"stride\w*",
    r"mov(?:e|es|ed|ing) (?:through|across|along|past|by|around)",
    r"w[ea]nt (?:through|across|along|past|by)",
    r"go(?:es|ing)? (?:through|across|along|past|by)",
    r"c[oa]me (?:through|across|along|past|by)",
)
# Where a mover went: read with MOVING, no meaning of their own.
ROUTE = words(r"through", r"across", r"along", r"past", r"by", r"around")
RUNNING = words(
    r"r[au]n",
    r"runs",
    r"running",
    r"runners?",
    r"jog\w*",
    r"sprint\w*",
    r"rush\w*",
    r"hurr(?:y|ied|ies|ying)",
    r"quickly",
    r"fast",
    r"rac(?:e|ed|es|ing)",
    r"dash\w*",
)
RUN_SIZES_PER_S = 2.5  # own sizes a second: between walking (~1.5) and running (>= 3.3)


def own_size(thing: Thing) -> float | None:
    """The side of a square of the thing's mean box area, in the units of its speed."""
    return math.sqrt(thing.size) if thing.size else None


def moved(thing: Thing) -> bool:
    """Whether the thing's path in view is at least its own size (unmeasured: it moved, as
    every motion track moves)."""
    size = own_size(thing)
    if size is None or thing.speed is None:
        return True
    return thing.speed * thing.seen_s >= size


def pace(thing: Thing) -> float | None:
    """Own sizes a second, or None when the run did not measure size and speed."""
    size = own_size(thing)
    return None if size is None or thing.speed is None else thing.speed / size


def ran(thing: Thing) -> bool:
    measured = pace(thing)
    return measured is not None and measured >= RUN_SIZES_PER_S
