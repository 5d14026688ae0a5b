"""The street bank's development extension: new phrasings, always in the development half.

Like ``bank.DEV_EXTRA`` for the question bank: phrasings written fresh (none is in any bank,
``test_street_bank`` checks that by code), judged by the street bank's own checks
(``tests/ask/street_checks.py``) against the truth derived from the annotation files
(``tests/ask/street_truth.py``). Whatever its sha256, a phrasing here is in the development
half, so its failures may guide the engine; the held-out half stays unseen.

The truth these phrasings lean on (by code, see ``test_every_extension_check_has_a_truth``):
12 people, 3 walk left to right and 10 right to left; times asked of "in view" are labelled
times only (3, 19, 25, 31, 39, 45, 51, 65 s); standing still is asked for 5, 7, 15, 40 and 60
s (the longest still span is 10 s); colours nobody wears are green, yellow, pink, orange and
purple. Nothing here asks whether anyone ran: the street's truth has no speed rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tests.ask.street_bank import StreetCase
from tests.ask.street_bank import in_colour as _in
from tests.ask.street_checks import (
    HowMany,
    InViewAt,
    NobodyIn,
    Peak,
    StoodStill,
    StreetCheck,
    Together,
    Unknowable,
    When,
)
from tests.ask.street_truth import (
    first_appearance,
    first_exit,
    last_new_person,
    last_seen,
    n_left_to_right,
    n_people,
    n_right_to_left,
)

Entry = tuple[Sequence[str], StreetCheck]


PEOPLE: list[Entry] = [
    (
        (
            "how many folks walk past in this clip",
            "total number of people on the street?",
            "how many humans did the camera pick up",
            "whats the headcount",
            "How many different people can be seen walking around here?",
            "could you tell me how many people turn up in the footage",
            "how many unique people r in the video",
            "in total, how many persons appear",
            "how many peple are in this",
            "number of distinct pedestrians",
            "so how many people went by overall?",
            "give me a count of everyone who appears",
        ),
        HowMany(n_people),
    ),
    (
        (
            "how many people are heading to the right",
            "how many walked from the left side to the right side",
            "count the people going left to right",
            "how many pedestrians crossed from left to right?",
            "how many ppl moving rightwards",
            "How many people travel left-to-right across the picture?",
            "number of people walking towards the right hand side",
            "how many went left to right",
        ),
        HowMany(n_left_to_right),
    ),
    (
        (
            "how many people are heading to the left",
            "how many walked from the right side to the left side",
            "count the people going right to left",
            "how many pedestrians crossed from right to left?",
            "how many ppl moving leftwards",
            "How many people travel right-to-left across the picture?",
            "number of people walking towards the left hand side",
            "how many went right to left",
        ),
        HowMany(n_right_to_left),
    ),
]

CROWD: list[Entry] = [
    (
        (
            "when was the street at its busiest and how many people were there",
            "at what moment are the most people in shot, and how many?",
            "whens the biggest crowd",
            "At which time can you see the largest number of people at once?",
            "when were the most ppl on screen at the same time",
            "when is it most crowded",
        ),
        Peak(),
    ),
    (
        (
            "what's the largest number of people visible at one time",
            "max people in frame at once?",
            "how many people at most were on screen together",
            "whats the most people u can see at one moment",
            "what is the peak number of people in view",
        ),
        Peak(timed=False),
    ),
    (("how many people are in view at 0:03", "how many ppl on screen 3 seconds in"), InViewAt(3.0)),
    (("how many people can you see at 0:19", "people in frame at 19s?"), InViewAt(19.0)),
    (("at 25 seconds how many people are visible",), InViewAt(25.0)),
    (("how many people were on the street at 0:31",), InViewAt(31.0)),
    (("how many are in shot at the 39 second mark",), InViewAt(39.0)),
    (("How many people are walking around at 00:45?", "count people at 45 s"), InViewAt(45.0)),
    (("how many people can be seen at 51 seconds",), InViewAt(51.0)),
    (("how many people are in the picture at 1:05", "number of people at 65s"), InViewAt(65.0)),
]

STILL_AND_TOGETHER: list[Entry] = [
    (
        (
            "did anybody stand still for more than 5 seconds, and where?",
            "who stayed put longer than five secs",
        ),
        StoodStill(5.0),
    ),
    (
        (
            "was anyone standing around for over 7 seconds",
            "anyone not moving for longer than 7s? where",
        ),
        StoodStill(7.0),
    ),
    (
        (
            "did someone stay in one spot for more than 15 seconds",
            "anybody stood still over fifteen seconds?",
        ),
        StoodStill(15.0),
    ),
    (("was anyone motionless for longer than 40 seconds",), StoodStill(40.0)),
    (
        (
            "did any person stand in the same place for more than a minute",
            "anyone stand still for over 60 s",
        ),
        StoodStill(60.0),
    ),
    (
        (
            "are any of the people walking together",
            "do some people walk in pairs?",
            "did anyone walk along with someone else",
            "are there groups of people standing together",
            "any couples strolling side by side",
            "Is there a group of people walking as a group?",
            "do people walk in twos",
            "were there people hanging around together in a group",
        ),
        Together(),
    ),
]

WHEN: list[Entry] = [
    (
        (
            "when does the first person show up",
            "at what time is someone first seen?",
            "when do we first see a person",
            "first person appears when",
        ),
        When(first_appearance, "first appearance"),
    ),
    (
        (
            "when does the last new face show up",
            "when did the final new person come into view",
            "at what time does the last person to arrive first appear?",
        ),
        When(last_new_person, "last new person"),
    ),
    (
        (
            "when does someone first walk out of the shot",
            "what time did the first person leave the picture",
            "when is the first time anybody goes out of view",
        ),
        When(first_exit, "first exit"),
    ),
    (
        (
            "when was the last person seen",
            "at what time do the final people disappear from view",
            "when is anyone last visible?",
        ),
        When(last_seen, "last seen"),
    ),
    (("when does someone wearing red first appear", "first red clothes when?"), _in("red")),
    (
        ("When did we first see a person dressed in blue?", "first guy in blue when"),
        _in("blue"),
    ),
    (("when does a person wearing black first come into view",), _in("black")),
    (("when's the first person in brown",), _in("brown")),
    (
        ("when did someone in gray first show up", "first person in a grey coat appears when"),
        _in("grey"),
    ),
    (
        ("when does a person in white first appear?", "first one wearing white, when"),
        _in("white"),
    ),
    (("when does someone in green first show up", "anyone dressed in green?"), NobodyIn("green")),
    (("when do we first see a person in yellow",), NobodyIn("yellow")),
    (("first person wearing pink appears when?",), NobodyIn("pink")),
    (("when did somebody in orange come into view", "anyone in an orange top"), NobodyIn("orange")),
    (("when does a person in purple first appear",), NobodyIn("purple")),
]

UNKNOWABLE: list[Entry] = [
    (
        (
            "how many cars drove past",
            "was there a bicycle on the street?",
            "did a bus go by",
            "any motorbikes in the clip",
            "is there a van parked anywhere",
            "did you see a dog",
            "were there any birds",
            "what's the name of the man in black",
            "who is the person in the red jacket",
            "how old is the woman in white",
            "how many women are in the video",
            "how many men walked past",
            "does anyone look angry",
            "is the person in blue happy",
            "what are the people talking about",
            "did anybody shout",
            "what's the weather like",
            "is it raining in the clip",
            "why did the people stop",
            "why is everyone walking left",
            "where will the man in grey go next",
            "what happens after the video ends",
            "did anyone fall over",
            "did anyone fight",
            "was there a robbery",
            "which street is this",
            "what time of day was this filmed",
            "is anyone smoking",
            "did someone drop their wallet",
            "are they tourists",
        ),
        Unknowable(),
    ),
]

ENTRIES: list[Entry] = PEOPLE + CROWD + STILL_AND_TOGETHER + WHEN + UNKNOWABLE


@dataclass(frozen=True)
class StreetDevCase(StreetCase):
    """A case of the development extension: in the development half whatever its hash."""

    @property
    def half(self) -> str:
        return "dev"


STREET_DEV_EXTRA: list[StreetCase] = [
    StreetDevCase(q, c) for phrasings, c in ENTRIES for q in phrasings
]
