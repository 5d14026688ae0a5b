"""The words bank's development extension: new phrasings, always in the development half.

Like ``bank.DEV_EXTRA`` for the question bank: everyday words written fresh (none is in any
bank, ``test_words_bank`` checks that by code) over the words bank's scenes, ``hall`` and
``lobby``, asked with their titles (``words_bank.TITLES``) and judged by the same checks and
truth (``tests/ask/words_checks.py``, ``tests/ask/bank.py``, ``tests/ask/test_eval.py``).
Whatever its sha256, a case here is in the development half (``Case.extra``), so its failures
may guide the engine; the held-out half stays unseen.

Kinds: place words (the titles' and common place nouns mean "in this video"), motion words
(moving words are about time in view, waiting words about waits, running words follow the
speed rule: nothing runs), camera words (the cut; shots are one more), counts that agree
(different things, summaries) and unanswerables (refused, or "no" naming the word).
"""

from __future__ import annotations

from collections.abc import Sequence

from tests.ask.bank import (
    Case,
    Entry,
    No,
    Only,
    Quotes,
    Refuse,
    Says,
    colour_of,
    earliest,
    first_to_leave,
    in_view_s,
    latest,
    leftward,
    most,
    n_not_dwelling,
    n_rightward,
    speed_of,
    waiter,
)
from tests.ask.test_eval import (
    At,
    Count,
    During,
    Entered,
    Lasting,
    Zones,
    dwell_length,
    dwell_zones,
    first_appearance,
    first_disappearance,
    last_disappearance,
    n_cuts,
    n_texts,
    only_cut,
    only_dwell,
    text_span,
)
from tests.ask.words_checks import (
    DIFFERENT_THINGS,
    RECAP,
    NotSo,
    Someone,
    always,
    appeared_after_cut,
    n_crossing,
    n_shots,
    n_waiters,
    no_returns,
    no_zone,
    nobody_runs,
    waits_of,
)

# --- Both scenes ----------------------------------------------------------------------------

PLACES: list[Entry] = [
    (
        (
            "how many different things came past the door",
            "how many separate objects went down the corridor?",
            "how many distinct things came in through the entrance",
            "number of different things that showed up in the room",
            "how many diffrent things were on camera",
            "How many different objects were in the area altogether?",
            "how many unique things moved around in here",
            "in total how many different things did the camera see",
        ),
        DIFFERENT_THINGS,
    ),
    (
        (
            "how many objects went all the way across the room",
            "how many things crossed from one side of the corridor to the other",
            "how many crossed the whole picture",
        ),
        Count(n_crossing),
    ),
    (
        (
            "did anybody come through the door?",
            "did anything go past the entrance",
            "was there anyone moving about in the corridor",
            "did something walk by on camera",
        ),
        Someone(),
    ),
    (
        (
            "when was something standing still in the room",
            "when did something hang about by the door",
            "at what point was something waiting around",
        ),
        During(only_dwell, "still"),
    ),
    (
        (
            "how long did it stand there for",
            "how long was the wait in the corridor?",
            "for how many seconds did something loiter",
        ),
        Lasting(dwell_length, "still"),
    ),
    (
        (
            "whereabouts in the room did something wait",
            "which part of the picture did it stop in",
        ),
        Zones(dwell_zones),
    ),
    (
        (
            "did something come into the right hand side of the room",
            "did anything move into the right part of the picture",
        ),
        Entered("right"),
    ),
    (
        (
            "when did the first thing come through the door",
            "when does something first show up on camera",
            "what time did the first object enter",
        ),
        At(first_appearance),
    ),
    (
        (
            "when did the last thing leave the room",
            "when does the final object go out of view",
            "at what time is the corridor empty for good",
        ),
        At(last_disappearance),
    ),
    (
        (
            "when did something first go out of the picture",
            "when did the earliest exit happen",
        ),
        At(first_disappearance),
    ),
    (
        (
            "which one moved off to the left",
            "what went leftwards across the room",
        ),
        Only(leftward, "any"),
    ),
    (
        (
            "how many moved to the right",
            "how many things headed right",
            "count the ones that went rightwards",
        ),
        Count(n_rightward),
    ),
    (
        (
            "which one hung around the longest",
            "what stayed on camera for the most time",
        ),
        Only(most(in_view_s), "span"),
    ),
    (("which one moved fastest", "what was the quickest mover"), Only(most(speed_of), "any")),
    (("which thing showed up first", "what came through the door first"), Only(earliest)),
    (("which one showed up last", "what was the last thing to come in"), Only(latest)),
    (
        ("which one went out first", "what was first to leave the corridor"),
        Only(first_to_leave, "last"),
    ),
    (
        (
            "what colour was the one that waited",
            "what color was the thing that stood still",
            "colour of the one that loitered?",
        ),
        Says(lambda t: colour_of(waiter(t))),
    ),
    (
        (
            "how many went through without waiting",
            "how many things kept moving the whole time",
            "how many never stood still",
        ),
        Count(n_not_dwelling),
    ),
    (
        (
            "how many things loitered",
            "how many objects stood around waiting",
            "how many stopped for a while in the corridor",
        ),
        Count(n_waiters),
    ),
    (("did the red one stop at all", "did the red thing hang around"), No()),
]

CAMERA: list[Entry] = [
    (
        (
            "when does the camera flip over to the other view",
            "at what point does the picture change",
            "when do we cut to another view",
            "whens the cut",
            "When does the shot change?",
            "what time does it switch to a different camera",
        ),
        At(only_cut),
    ),
    (
        (
            "how many times does the camera switch",
            "how many cuts are there",
            "how often does the view change",
        ),
        Count(n_cuts),
    ),
    (
        (
            "how many different views are there",
            "how many camera angles does this have",
            "how many separate shots make up the video",
        ),
        Count(n_shots),
    ),
    (
        (
            "how many things came in after the camera changed",
            "after the switch to another view how many new things appeared",
        ),
        Count(appeared_after_cut),
    ),
    (("what do the signs on the wall read", "read me the signs on the wall"), Quotes()),
    (("how many signs are up in the corridor", "number of signs on camera?"), Count(n_texts)),
    (
        (
            "summarise the video",
            "give me a quick rundown of what happened",
            "what went on in the room, in short",
            "can you sum up the footage for me",
            "overview of the clip pls",
        ),
        RECAP,
    ),
]

UNANSWERABLE: list[Entry] = [
    (("was anyone running", "did anything run past the door"), NotSo(nobody_runs, "run")),
    (("did somebody jog through the room",), NotSo(nobody_runs, "jog")),
    (("did anything dash across the corridor",), NotSo(nobody_runs, "dash")),
    (("did anyone hurry past the entrance",), NotSo(nobody_runs, "hurry")),
    (("did something race through the room",), NotSo(nobody_runs, "race")),
    (("did any of them move quickly",), NotSo(nobody_runs, "quickly")),
    (("did anything stop in zone east",), NotSo(no_zone("east"), "east")),
    (("when did something enter the basement zone",), NotSo(no_zone("basement"), "basement")),
    (("did anyone come back later",), NotSo(no_returns, "back")),
    (("did anything return to the room",), NotSo(no_returns, "return")),
    (("did a dog walk through the room",), NotSo(always, "dog")),
    (("was there a bike in the corridor",), NotSo(always, "bike")),
    (("did anyone carry a suitcase",), NotSo(always, "suitcase")),
    (("did the door open",), NotSo(always, "open")),
    (
        (
            "who was the one that waited",
            "what is the blue one's name",
            "why did it stop in the middle",
            "was the red one in a bad mood",
            "is this place safe",
            "what will happen next in here",
            "who owns this building",
            "was the thing that waited up to no good",
            "what were they thinking about",
            "is the camera working properly",
        ),
        Refuse(),
    ),
]

BOTH: list[Entry] = PLACES + CAMERA + UNANSWERABLE


# --- One scene: its title's words -----------------------------------------------------------


def _titled(place: str, where: str, waiter_colour: str) -> list[Entry]:
    did_wait, how_long = waits_of(waiter_colour, place.split()[-1])
    return [
        (
            (
                f"how many different things were in {place}?",
                f"count the different objects {where}",
            ),
            DIFFERENT_THINGS,
        ),
        ((f"did anyone walk through {place}",), Someone()),
        ((f"when did the first thing turn up in {place}",), At(first_appearance)),
        ((f"when did the {waiter_colour} one wait {where}",), did_wait),
        ((f"how long did the {waiter_colour} one stay still {where}",), how_long),
        ((f"sum up {place} video",), RECAP),
        ((f"did anyone run {where}",), NotSo(nobody_runs, "run")),
    ]


HALL: list[Entry] = [
    *_titled("the hall", "on the ground floor", "blue"),
    (("when was GATE 7 up in the hall",), During(text_span("GATE 7"), '"GATE')),
]

LOBBY: list[Entry] = [
    *_titled("the lobby", "on the lobby cam", "green"),
    (("when is the EXIT 3 sign visible in the lobby",), During(text_span("EXIT 3"), '"EXIT 3"')),
]


def _cases(scene: str, entries: Sequence[Entry]) -> list[Case]:
    return [Case(scene, q, check, extra=True) for phrasings, check in entries for q in phrasings]


WORDS_DEV_EXTRA: list[Case] = (
    _cases("hall", BOTH) + _cases("lobby", BOTH) + _cases("hall", HALL) + _cases("lobby", LOBBY)
)
