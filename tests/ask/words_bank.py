"""A words bank for Ask Video (issue 44): users' everyday words, over the question bank's scenes.

New phrasings (none is in ``tests/ask/bank.py``) over the same synthetic scenes, ``hall`` and
``lobby``, asked with the video's title (``TITLES``). Their words are the ones the engine is being
taught, and the truth is derived by code from the scene exactly as in the question bank:

- place words: the title's words ("in the lobby", "through the hall", "on the ground floor") and
  common place nouns ("in the room", "by the door", "at the entrance", "in this corridor", "on
  camera") mean "in this video": the answer is the unqualified question's truth. A place word
  that names a zone ("in the middle", "on the left side") is that zone; one that names no zone
  of the run ("zone north") must not be dropped (``NotSo``).
- motion words (walk, pass, cross, go, come, leave, enter, stand, wait, loiter, move): moving
  words are about the objects' time in view, waiting words about their waits. Running words
  follow the speed rule of ``tests/ask/words_checks.py``: nothing here runs.
- camera words (view, picture, camera, switch, cut, "another view", "a different shot"): the
  cut. "How many shots" is one more than the cuts.
- counting words must agree everywhere: a count of the different things, and every summary
  claim counting objects (``OneCount``).

The split is the question bank's fixed rule (``bank.half_of``): only the development half's
failures may be read.
"""

from __future__ import annotations

from collections.abc import Sequence

from tests.ask.bank import (
    Case,
    Entry,
    Only,
    Quotes,
    Refuse,
    Says,
    colour_of,
    coloured,
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
    entries,
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
    waited_in,
    waits_of,
)

TITLES = {"hall": "Hall, ground floor", "lobby": "Lobby camera"}


# --- Both scenes: generic place nouns ------------------------------------------------------

BOTH: list[Entry] = [
    (
        (
            "how many different objects went through the room?",
            "how many different things passed by the door",
            "how many objects came through the entrance",
            "how many distinct things moved on camera?",
            "how many different things walked through this corridor",
            "number of different objects that moved through the room",
            "How many separate things went past the camera?",
            "count the different things that came into the room",
            "how many things moved in the room altogether",
        ),
        DIFFERENT_THINGS,
    ),
    (
        (
            "How many things crossed the room?",
            "how many objects crossed the corridor",
            "how many things went across the picture",
            "how many objects crossed from one side to the other",
            "how many crossed the whole view",
        ),
        Count(n_crossing),
    ),
    (
        (
            "did anybody walk through the room?",
            "did someone pass by the door",
            "did anyone come in through the entrance?",
            "was anyone walking in this corridor",
            "did anything move on camera?",
            "did something go past the door",
            "did anyone enter the room",
            "anybody cross the corridor?",
            "did anyone leave the room",
        ),
        Someone(),
    ),
    (
        (
            "did someone wait by the door?",
            "did anybody stand around in the room",
            "was someone loitering at the entrance?",
            "did anyone hang around on camera",
            "did anything stand still in this corridor",
            "did somebody stop and wait in the room?",
        ),
        During(only_dwell, "still"),
    ),
    (
        (
            "how long did someone wait by the door",
            "how long was somebody standing at the entrance?",
            "for how long did anyone loiter in the room",
            "how long did the one that stopped stand there",
            "how long did someone hang around in this corridor?",
        ),
        Lasting(dwell_length, "still"),
    ),
    (
        (
            "where in the room did someone wait",
            "in which part of the picture did something stand still?",
            "where did the loiterer stand",
        ),
        Zones(dwell_zones),
    ),
    (
        ("did anything enter the right side of the room", "did someone walk into the right part"),
        Entered("right"),
    ),
    (
        ("when did something first come into the middle of the room",),
        At(lambda t: entries(t, "center")[0]),
    ),
    (
        (
            "when did the first one come into the room",
            "when did somebody first walk in",
            "what time did the first thing enter the picture?",
            "when did someone first show up on camera",
            "when did the first visitor come through the entrance",
        ),
        At(first_appearance),
    ),
    (
        (
            "when did the last one leave the room?",
            "when did the last thing walk out of the picture",
            "when did the last one go out the door",
            "when did the final one go off camera",
        ),
        At(last_disappearance),
    ),
    (
        ("when did the first one leave the room", "when did the first thing walk out"),
        At(first_disappearance),
    ),
    (
        (
            "when does the camera cut to another view",
            "when do we get a different shot",
            "at what point does the picture change to a different camera",
            "when does the view switch",
            "when is there a cut to another shot?",
            "what time does the image jump to another view",
            "when does it switch cameras",
            "when does the footage cut",
        ),
        At(only_cut),
    ),
    (
        (
            "how many times does the picture switch to another view?",
            "how many times does the camera cut?",
            "how often does the shot change",
        ),
        Count(n_cuts),
    ),
    (
        ("how many different shots are there?", "how many camera views does the video have"),
        Count(n_shots),
    ),
    (
        (
            "how many things came in after the picture switched",
            "after the camera changes view, how many new things walk in",
            "how many came into the room after the cut to another shot",
        ),
        Count(appeared_after_cut),
    ),
    (
        (
            "what do the signs on camera say",
            "what's written by the door",
            "read me the signs in the room",
            "what text can you see at the entrance",
            "what does the writing in this corridor say",
        ),
        Quotes(),
    ),
    (("how many signs are in the room", "how many signs can you see on camera"), Count(n_texts)),
    (
        ("which one walked to the left", "which thing crossed the room going left"),
        Only(leftward, "any"),
    ),
    (
        ("how many walked to the right", "how many things went right across the room"),
        Count(n_rightward),
    ),
    (
        ("which one stayed in the room the longest", "what was on camera the longest"),
        Only(most(in_view_s), "span"),
    ),
    (
        (
            "which one moved the fastest through the room",
            "which thing went through the corridor fastest",
        ),
        Only(most(speed_of), "any"),
    ),
    (("which one came in first", "what walked in first"), Only(earliest)),
    (("which one came into the room last",), Only(latest)),
    (("which one left the room first",), Only(first_to_leave, "last")),
    (
        (
            "what colour was the one waiting by the door",
            "which colour was the thing standing around",
        ),
        Says(lambda t: colour_of(waiter(t))),
    ),
    (("how many passed through without stopping",), Count(n_not_dwelling)),
    (("how many things waited in the room",), Count(n_waiters)),
    (
        (
            "Summarize what happens in the room.",
            "give me a recap",
            "recap of the camera footage please",
            "what happened on camera?",
            "sum up the video",
            "rundown of what came and went",
        ),
        RECAP,
    ),
    # Unanswerable: running words (the speed rule), zones that do not exist, returns, things
    # no detector sees.
    (
        (
            "did anybody run through the room?",
            "was anyone running on camera",
            "did someone run past the door",
            "did anything run across the corridor",
        ),
        NotSo(nobody_runs, "run"),
    ),
    (("did someone rush through the entrance?",), NotSo(nobody_runs, "rush")),
    (
        ("did anything move quickly through the room", "did anyone walk quickly past the door"),
        NotSo(nobody_runs, "quickly"),
    ),
    (("did anyone sprint across the room",), NotSo(nobody_runs, "sprint")),
    (("did anyone wait in zone north",), NotSo(no_zone("north"), "north")),
    (("how many things entered the upstairs zone",), NotSo(no_zone("upstairs"), "upstairs")),
    (("when did someone enter the kitchen zone",), NotSo(no_zone("kitchen"), "kitchen")),
    (("did anybody come back into the room?",), NotSo(no_returns, "back")),
    (("how many objects walked through twice",), NotSo(no_returns, "twice")),
    (("did the same one pass the door again",), NotSo(no_returns, "again")),
    (("did a car drive past the entrance?",), NotSo(always, "car")),
    (
        (
            "did someone hold the door open",
            "did anyone wave at the camera",
            "was anybody talking by the door",
            "why did someone wait by the door?",
            "was the one standing at the entrance waiting for a taxi?",
            "did anyone look at the camera",
            "what was the loiterer thinking",
            "was the door locked",
            "did somebody steal something from the entrance",
            "how old was the one who walked in",
            "did anyone buy a ticket at the entrance",
        ),
        Refuse(),
    ),
]


def _scene_entries(scene: str, place: str, where: str, waiter_colour: str) -> list[Entry]:
    """Phrasings naming the scene's title words (``place``: "the hall"; ``where``: "on the
    ground floor"), truth by code."""
    did_wait, how_long = waits_of(waiter_colour, scene)
    blue_waited, blue_how_long = waits_of("blue", scene)
    red_waited, _ = waits_of("red", scene)
    return [
        (
            (
                f"how many different things moved through {place}",
                f"how many objects went through {place}",
            ),
            DIFFERENT_THINGS,
        ),
        ((f"how many things crossed {place}",), Count(n_crossing)),
        ((f"did anyone walk across {place}?", f"did someone pass by {where}"), Someone()),
        (
            (
                "how long did the blue one stand there?",
                f"how long did the blue one wait in {place}",
            ),
            blue_how_long,
        ),
        ((f"did the blue one loiter in {place}?",), blue_waited),
        ((f"did the red one wait in {place}",), red_waited),
        ((f"how long did the {waiter_colour} one hang around {where}",), how_long),
        (
            (f"did the {waiter_colour} one stand in the middle of {place}",),
            waited_in("center", scene),
        ),
        (
            (f"did the {waiter_colour} one wait on the left side of {place}",),
            waited_in("left", scene),
        ),
        ((f"did the {waiter_colour} one stop on the right of {place}",), waited_in("right", scene)),
        ((f"did the {waiter_colour} one stand still {where}",), did_wait),
        ((f"when did the red one walk into {place}",), Only(coloured("red"))),
        ((f"when did the green one come into {place}?",), Only(coloured("green"))),
        ((f"when did the blue one leave {place}",), Only(coloured("blue"), "last")),
        ((f"which one crossed {place} going left",), Only(leftward, "any")),
        ((f"when does the picture of {place} switch to another view",), At(only_cut)),
        ((f"what do the signs in {place} say",), Quotes()),
        (
            (f"summarize what happens in {place}", f"give me a recap of what happened {where}"),
            RECAP,
        ),
        ((f"how many things came into {place} after the view changed",), Count(appeared_after_cut)),
        ((f"how many waited in {place}",), Count(n_waiters)),
        ((f"how many passed through {place} without stopping",), Count(n_not_dwelling)),
        ((f"did anything enter the right side of {place}",), Entered("right")),
        ((f"did anybody run through {place}?",), NotSo(nobody_runs, "run")),
        ((f"did the blue one rush across {place}",), NotSo(nobody_runs, "rush")),
        ((f"did anyone stand in the north zone of {place}",), NotSo(no_zone("north"), "north")),
    ]


HALL: list[Entry] = [
    *_scene_entries("hall", "the hall", "on the ground floor", "blue"),
    (("did someone wait upstairs",), NotSo(always, "upstairs")),
    (("when was GATE 7 on camera in the hall",), During(text_span("GATE 7"), '"GATE')),
]

LOBBY: list[Entry] = [
    *_scene_entries("lobby", "the lobby", "on the lobby camera", "green"),
    (("when was EXIT 3 on camera",), During(text_span("EXIT 3"), '"EXIT 3"')),
]


def _cases(scene: str, entries: Sequence[Entry]) -> list[Case]:
    return [Case(scene, q, check) for phrasings, check in entries for q in phrasings]


WORDS_BANK: list[Case] = (
    _cases("hall", BOTH) + _cases("lobby", BOTH) + _cases("hall", HALL) + _cases("lobby", LOBBY)
)
