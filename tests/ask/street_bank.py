"""A question bank on the real street clip ``vtest.avi``: 150+ phrasings in users' own words.

Issue 44, item 7 (street half). Every case is a phrasing and a check whose truth is derived by
code from the clip's annotation files (``tests/ask/street_truth.py``: the labelled boxes, the
12 identities and their sightings, and the clothing colours and groups read once from the
identities' notes into ``testkit/data/vtest_attributes.json``), never from the service's
output. The checks (``tests/ask/street_checks.py``) judge only the answer contract's fields.

Tolerances, fixed before the engine was run on the bank, stated once as constants there:
times within ``TIME_TOL_S`` = 2.0 s (the labels' spacing); counts of people within
``COUNT_TOL`` = 1 (the annotation itself says 12, or 13); a count in view is judged against
its labelled frame's range from the clearly visible people to all labelled ones (difficult
labels are "don't care"); a stated standing-still time at least N - 2.0 s.

The split is ``bank.half_of``: a phrasing whose sha256 starts with an even hex digit is in the
development half, the others are held out. Only the development half's failures may guide the
engine. Styles are mixed on purpose: terse, chatty, lower case, no punctuation, a few typos.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from tests.ask.bank import half_of
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
    first_in_colour,
    last_new_person,
    last_seen,
    n_left_to_right,
    n_people,
    n_right_to_left,
)

Entry = tuple[Sequence[str], StreetCheck]


def in_colour(colour: str) -> When:
    """The first appearance of a person wearing ``colour``."""
    return When(partial(first_in_colour, colour=colour), f"first person in {colour}")


PEOPLE: list[Entry] = [
    (
        (
            "How many people are in this video?",
            "how many different people walked through",
            "how many people did you see",
            "number of people in the clip?",
            "how many ppl are there",
            "How many distinct people appear on the street?",
            "hey, roughly how many different people show up in this footage?",
            "how many people came by in total",
            "count the people",
            "how many individuals were there",
            "how many pedestrians are in the clip",
            "how many different persons were seen on the pavement",
            "how many poeple are in this",
            "total number of people?",
            "how many people did the camera catch",
            "how many unique people walked across the square",
            "Can you tell me how many different people were on the street in this clip?",
            "people count",
        ),
        HowMany(n_people),
    ),
    (
        (
            "How many people walked from left to right?",
            "how many people went left to right",
            "how many walked to the right",
            "number of people crossing left to right",
            "how many people crossed the street from left to right?",
            "how many ppl walked left to right across the square",
            "how many people moved towards the right side of the picture",
            "left to right - how many people?",
            "how many pedestrians passed from left to right",
            "how many people went by heading right",
        ),
        HowMany(n_left_to_right),
    ),
    (
        (
            "How many people walked from right to left?",
            "how many people went right to left",
            "how many walked to the left",
            "number of people crossing right to left",
            "how many people crossed from right to left on the pavement?",
            "how many people headed left across the square",
            "right to left, how many?",
            "how many folks walked right-to-left in this clip",
            "how many people passed by going left",
            "how many people moved from the right of the frame to the left",
        ),
        HowMany(n_right_to_left),
    ),
]

IN_VIEW: list[Entry] = [
    (
        (
            "When were the most people in view, and how many?",
            "when was it busiest",
            "When was the street most crowded?",
            "at what time were there the most people on screen and how many were there",
            "busiest moment?",
            "when did the most people show up at once",
            "when were the most ppl on the pavement at the same time",
            "whats the busiest point in the clip and how many people were around",
            "when was the crowd biggest",
            "at which point were the most people in the camera's view",
            "peak number of people and when",
        ),
        Peak(),
    ),
    (
        (
            "How many people were in view at once at most?",
            "what's the most people in view at one time",
            "max number of people at the same time",
            "how many people were on the street at the same time, at most?",
            "how many people at once",
            "whats the largest number of people visible together",
            "how many people were in the picture at the busiest moment",
            "most people in frame at once?",
            "how many people were in view at a time, max",
        ),
        Peak(timed=False),
    ),
    (("How many people were in view at 0:05?", "how many people at 5 seconds"), InViewAt(5.0)),
    (
        ("how many people were on the street at 0:13", "how many people could you see 13 s in"),
        InViewAt(13.0),
    ),
    (("how many people were in view at 21 s?",), InViewAt(21.0)),
    (("how many people were there at 0:31", "people in view at 31 seconds?"), InViewAt(31.0)),
    (
        ("How many people were visible at 0:41?", "how many people were on the pavement at 41s"),
        InViewAt(41.0),
    ),
    (("how many were in the picture at 45 seconds",), InViewAt(45.0)),
    (("number of people in shot at 0:51",), InViewAt(51.0)),
    (
        ("how many people at 1:01", "at 61 seconds how many people were in the frame?"),
        InViewAt(61.0),
    ),
    (
        ("How many people were in view at 1:13?", "how many ppl on screen at 73 sec"),
        InViewAt(73.0),
    ),
]

STILL_AND_TOGETHER: list[Entry] = [
    (
        (
            "Who stood still for longer than 5 seconds, and where?",
            "did anyone stand still for more than 5 seconds",
            "anyone waiting around for over 5 s?",
            "who stayed in one place longer than 5 seconds",
        ),
        StoodStill(5.0),
    ),
    (
        (
            "Who stood still longer than 8 seconds?",
            "did anybody loiter for more than 8 seconds",
            "did someone wait in one spot for over 8 s and where",
        ),
        StoodStill(8.0),
    ),
    (
        (
            "Did anyone stand still for more than 20 seconds?",
            "who waited longer than 20 seconds",
            "anyone loitering for over 20 s on the pavement?",
        ),
        StoodStill(20.0),
    ),
    (
        (
            "did anyone stand still longer than 30 seconds",
            "who stood in one place for more than half a minute",
        ),
        StoodStill(30.0),
    ),
    (
        (
            "Did people walk together?",
            "were people walking in a group",
            "Did anyone walk in pairs?",
            "did any people walk together on the street",
            "was there a group of people walking together",
            "did some of them come as a group",
            "were any people together",
            "did two people walk side by side",
            "did a couple walk together across the square",
            "any groups?",
        ),
        Together(),
    ),
]

WHEN: list[Entry] = [
    (
        (
            "When did a person in red first appear?",
            "when does someone wearing red show up",
            "first time we see somebody in red?",
            "when did the person in the red jacket first come into view",
        ),
        in_colour("red"),
    ),
    (
        (
            "When did a person in blue first appear?",
            "when did someone in blue first show up on the street",
            "first appearence of a person wearing blue",
        ),
        in_colour("blue"),
    ),
    (
        (
            "when did a person in black first appear",
            "when do we first see someone dressed in black",
        ),
        in_colour("black"),
    ),
    (
        ("When did someone in a brown jacket first appear?", "when did a person in brown show up"),
        in_colour("brown"),
    ),
    (
        (
            "when did a person in grey first appear",
            "when does somebody wearing a grey jacket first come into view",
        ),
        in_colour("grey"),
    ),
    (
        ("when did a person in green first appear", "did someone wearing a green coat walk by"),
        NobodyIn("green"),
    ),
    (
        (
            "when did someone in yellow first show up",
            "when did the person in the yellow jacket appear",
        ),
        NobodyIn("yellow"),
    ),
    (("when does a person wearing purple appear",), NobodyIn("purple")),
    (
        ("when did someone in pink first come into view", "first time a person in pink shows up?"),
        NobodyIn("pink"),
    ),
    (("When did a person in an orange top first appear?",), NobodyIn("orange")),
    (
        (
            "When did the first person appear?",
            "when did someone first show up",
            "first person in view - when?",
            "when does the first pedestrian come into the picture",
        ),
        When(first_appearance, "first appearance"),
    ),
    (
        (
            "When did the last new person show up?",
            "when did the last person to arrive come in",
            "when did the final new person enter the scene",
        ),
        When(last_new_person, "last new person"),
    ),
    (
        (
            "When did the first person leave?",
            "when did somebody first walk out of view",
            "first person to leave the frame, when",
            "when did the first person exit the street",
        ),
        When(first_exit, "first exit"),
    ),
    (
        (
            "When was the last person seen?",
            "when did the last person go out of view",
            "last time anyone was on camera?",
        ),
        When(last_seen, "last seen"),
    ),
]

UNKNOWABLE: list[Entry] = [
    (
        (
            "How many cars drove past?",
            "did a car go by",
            "was there any traffic on the street",
            "how many vehicles passed",
            "did anyone ride a bicycle",
            "any bikes?",
            "how many cyclists crossed the square",
            "is there a dog in the video",
            "did someone walk a dog",
            "any pets?",
            "What is the name of the man with the paper roll?",
            "who is the woman in the red jacket",
            "whats the blonde womans name",
            "who are these people",
            "can you identify the faces",
            "is anyone famous in this clip",
            "do you recognise the guy with glasses?",
            "how old is the man in the leather jacket",
            "how old was the blonde woman",
            "were there any kids",
            "how many women were there",
            "how many men walked by",
            "is the person in the peacoat a man or a woman",
            "why did the man stand by the sign",
            "why did they leave",
            "why is everyone walking to the left",
            "what are the people saying",
            "what did the two by the sign talk about",
            "were they arguing",
            "what will the weather be tomorrow",
            "will it rain here tomorrow?",
            "which city is this",
            "whats in the brown envelope",
            "is the man in the grey jacket married",
            "where were they going after this",
            "did anybody drop litter",
        ),
        Unknowable(),
    ),
]

ENTRIES: list[Entry] = PEOPLE + IN_VIEW + STILL_AND_TOGETHER + WHEN + UNKNOWABLE


@dataclass(frozen=True)
class StreetCase:
    question: str
    check: StreetCheck

    @property
    def half(self) -> str:
        return half_of(self.question)


STREET_BANK: list[StreetCase] = [StreetCase(q, c) for phrasings, c in ENTRIES for q in phrasings]
