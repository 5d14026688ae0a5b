"""A question bank for Ask Video: 300+ everyday phrasings over synthetic scenes with KNOWN truth.

Every case is a phrasing, the scene it is asked of and a judge derived from the scene's ground
truth by code (``synthetic.ground_truth``), never from the service's output. A judge sorts an
answer into ``right``, ``refused`` (no grounded claim) or ``wrong`` (a grounded answer whose
stated fact is false, or a "yes" to a qualifier the truth does not hold).

The bank is split in two by a fixed rule, decided before the engine was changed: a phrasing
whose sha256 starts with an even hex digit is in the development half, the others are held
out. The same phrasing lands in the same half for both scenes. Only the development half's
failures may guide changes to the engine; the held-out figures are the ones reported.

Writers' styles are mixed on purpose: terse, chatty, lower case, no punctuation, typos,
relative times ("after the cut", "in the last 20 seconds") and negations.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ask.types import Answer
from synthetic import GroundTruth, SceneSpec, lobby_scene
from synthetic.scene import MovingObject, ObjectTruth, TextSign
from tests.ask.test_eval import (
    TOLERANCE_S,
    At,
    Check,
    Count,
    During,
    Lasting,
    Window,
    Zones,
    all_texts,
    dwell_length,
    dwell_zones,
    first_appearance,
    last_disappearance,
    n_cuts,
    n_objects,
    n_texts,
    only_cut,
    only_dwell,
    text_length,
    text_span,
)

COLOURS = ("red", "green", "blue", "yellow", "orange", "purple", "pink", "white", "black", "grey")


def hall_scene() -> SceneSpec:
    """The issue's lobby: 60 s, three movers of distinct colours, a 25 s wait, two signs, a cut.

    red crosses left to right fast (2-8 s); blue walks in from the right, waits 25 s at the
    centre (8-33 s) and leaves to the left by 39 s; the background changes at the 42 s cut;
    green (the biggest) rises from the bottom at 44 s and leaves to the right by 58 s.
    "EXIT 12" is shown throughout, "GATE 7" during 20-40 s.
    """
    red = MovingObject("red", (210, 40, 40), (20, 44), ((2.0, -15, 200), (8.0, 335, 200)))
    blue_path = ((4.0, 345, 130), (8.0, 160, 130), (33.0, 160, 130), (39.0, -20, 130))
    blue = MovingObject("blue", (50, 80, 210), (24, 48), blue_path)
    green_path = ((44.0, 60, 265), (47.0, 60, 160), (58.0, 345, 160))
    green = MovingObject("green", (40, 180, 70), (40, 40), green_path)
    signs = (
        TextSign("EXIT 12", 0.0, 60.0, (160, 26), font_px=28),
        TextSign("GATE 7", 20.0, 40.0, (262, 70), font_px=20),
    )
    return SceneSpec(
        duration_s=60.0, objects=(red, blue, green), signs=signs, scene_cuts=(42.0,), noise=2.0
    )


# --- Truth about objects, by code ----------------------------------------------------------


def colour_of(obj: ObjectTruth) -> str:
    """The name of a scene object's (primary) colour: its strongest channel."""
    return ("red", "green", "blue")[max(range(3), key=lambda i: obj.color[i])]


def _centre(box: tuple[float, float, float, float]) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def in_view_s(obj: ObjectTruth) -> float:
    return obj.last_seen_s - obj.first_seen_s


def speed_of(obj: ObjectTruth) -> float:
    """Path length of the box centre over its time in view (pixels a second)."""
    frames = sorted(obj.boxes)
    centres = [_centre(obj.boxes[i]) for i in frames]
    path = sum(
        ((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) ** 0.5 for a, b in itertools.pairwise(centres)
    )
    return float(path) / max(in_view_s(obj), 1e-9)


def heading_x(obj: ObjectTruth) -> float:
    """Net horizontal travel of the centre (positive: to the right)."""
    frames = sorted(obj.boxes)
    return _centre(obj.boxes[frames[-1]])[0] - _centre(obj.boxes[frames[0]])[0]


Pick = Callable[[GroundTruth], ObjectTruth]


def coloured(colour: str) -> Pick:
    return lambda truth: next(o for o in truth.objects if colour_of(o) == colour)


def most(key: Callable[[ObjectTruth], float], *, least: bool = False) -> Pick:
    def pick(truth: GroundTruth) -> ObjectTruth:
        ranked = sorted(truth.objects, key=key)
        return ranked[0] if least else ranked[-1]

    return pick


def area(obj: ObjectTruth) -> float:
    return float(obj.size[0] * obj.size[1])


def earliest(truth: GroundTruth) -> ObjectTruth:
    return min(truth.objects, key=lambda o: o.first_seen_s)


def latest(truth: GroundTruth) -> ObjectTruth:
    return max(truth.objects, key=lambda o: o.first_seen_s)


def first_to_leave(truth: GroundTruth) -> ObjectTruth:
    return min(truth.objects, key=lambda o: o.last_seen_s)


def leftward(truth: GroundTruth) -> ObjectTruth:
    (mover,) = [o for o in truth.objects if heading_x(o) < 0]
    return mover


def waiter(truth: GroundTruth) -> ObjectTruth:
    (obj,) = [o for o in truth.objects if o.dwell_intervals]
    return obj


def appeared(after: float = 0.0, before: float = 1e9) -> Callable[[GroundTruth], int]:
    return lambda truth: sum(after < o.first_seen_s < before for o in truth.objects)


def left_before(t: float) -> Callable[[GroundTruth], int]:
    """Objects that went out of view before ``t`` (and before the end of the video)."""
    return lambda truth: sum(o.last_seen_s < min(t, truth.duration_s - 1.0) for o in truth.objects)


def in_view_after(t: float) -> Callable[[GroundTruth], int]:
    return lambda truth: sum(o.last_seen_s > t for o in truth.objects)


def n_rightward(truth: GroundTruth) -> int:
    return sum(heading_x(o) > 0 for o in truth.objects)


def n_dwells(truth: GroundTruth) -> int:
    return sum(len(o.dwell_intervals) for o in truth.objects)


def n_not_dwelling(truth: GroundTruth) -> int:
    return sum(not o.dwell_intervals for o in truth.objects)


# --- Judges ----------------------------------------------------------------------------------


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE_S


def says_no(answer: Answer) -> bool:
    """An answer whose honest content is "no": refused for lack of evidence, or it opens "No"."""
    no_evidence = not answer.grounded and answer.refusal_reason == "no_evidence"
    return no_evidence or bool(re.match(r"\s*no\b", answer.answer, re.IGNORECASE))


@dataclass(frozen=True)
class Only(Check):
    """Every timed claim is about the object ``pick`` names (its times inside its time in view),
    and the first states its appearance (``need="first"``), its going (``"last"``) or both
    (``"span"``). With ``yes``, the answer opens "Yes"."""

    pick: Pick
    need: str = "first"
    yes: bool = False

    def expect(self, truth: GroundTruth) -> str:
        o = self.pick(truth)
        return (
            f"{'yes: ' if self.yes else ''}{colour_of(o)} {o.first_seen_s:.1f}-{o.last_seen_s:.1f}"
        )

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        o = self.pick(truth)
        timed = [c for c in answer.claims if c.times]
        if not answer.grounded or not timed or says_no(answer):
            return False
        if self.yes and not answer.answer.startswith("Yes"):
            return False
        lo, hi = o.first_seen_s - TOLERANCE_S, o.last_seen_s + TOLERANCE_S
        if not all(lo <= t <= hi for c in timed for t in c.times):
            return False
        head = timed[0].times
        firsts = any(_near(t, o.first_seen_s) for t in head)
        lasts = any(_near(t, o.last_seen_s) for t in head)
        return {"first": firsts, "last": lasts, "span": firsts and lasts}.get(self.need, True)


@dataclass(frozen=True)
class Says(Check):
    """A grounded answer naming the colour ``of`` gives, and no other colour."""

    of: Callable[[GroundTruth], str]

    def expect(self, truth: GroundTruth) -> str:
        return self.of(truth)

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        named = {c for c in COLOURS if re.search(rf"\b{c}\b", answer.answer, re.IGNORECASE)}
        return answer.grounded and named == {self.of(truth)}


def _bare(text: str) -> str:
    """A text without spaces, case folded: OCR may read "GATE 7" as "GATE7"."""
    return "".join(text.split()).casefold()


def quoted_texts(answer: Answer) -> set[str]:
    return {_bare(q) for c in answer.claims for q in re.findall(r'"([^"]+)"', c.text)}


@dataclass(frozen=True)
class Quotes(Check):
    """The claims quote exactly the texts truly shown (spaces aside)."""

    def expect(self, truth: GroundTruth) -> str:
        return ", ".join(sorted(all_texts(truth)))

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        return answer.grounded and quoted_texts(answer) == {_bare(t) for t in all_texts(truth)}


@dataclass(frozen=True)
class Summary(Check):
    """A summary: states the true number of objects and quotes exactly the true texts."""

    def expect(self, truth: GroundTruth) -> str:
        return f"{n_objects(truth)} objects; " + ", ".join(sorted(all_texts(truth)))

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        counted = any(
            c.counts[:1] == (n_objects(truth),) and "object" in c.text for c in answer.claims
        )
        texts = {_bare(t) for t in all_texts(truth)}
        return answer.grounded and counted and quoted_texts(answer) == texts


@dataclass(frozen=True)
class No(Check):
    """The honest answer is "no" (what is asked is not in the truth): a grounded "yes" is wrong."""

    answerable = False

    def expect(self, truth: GroundTruth) -> str:
        return "no (with coverage)"

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        return says_no(answer)


@dataclass(frozen=True)
class Refuse(Check):
    """No evidence can answer it (a verdict, a name, a motive, the world): refuse, claim nothing."""

    answerable = False

    def expect(self, truth: GroundTruth) -> str:
        return "refuse"

    def passes(self, answer: Answer, truth: GroundTruth) -> bool:
        return not answer.grounded and answer.refusal_reason in {
            "outside_detectors",
            "not_understood",
            "off_topic",
        }


def judge(check: Check, answer: Answer, truth: GroundTruth, trusted: bool = True) -> str:
    """``right``, ``refused`` or ``wrong``; an answer whose citations fail is ``wrong``."""
    if answer.grounded and not trusted:
        return "wrong"
    if check.passes(answer, truth):
        return "right"
    return "refused" if not answer.grounded else "wrong"


# --- The bank ----------------------------------------------------------------------------------

Entry = tuple[Sequence[str], Check]

BOTH: list[Entry] = [
    (
        (
            "How many objects appeared?",
            "how many objects were there",
            "How many moving things did you see?",
            "number of objects?",
            "hw many objects appeard",
            "so, how many things moved through the scene in total?",
            "count the objects",
            "How many different objects were seen?",
            "how many distinct moving objects are in the clip",
            "objects count",
        ),
        Count(n_objects),
    ),
    (
        (
            "How many signs were there?",
            "how many different texts were read",
            "number of signs",
            "How many pieces of text are visible?",
            "how many signz are there",
            "how many texts",
        ),
        Count(n_texts),
    ),
    (
        (
            "How many scene changes were there?",
            "how many times does the camera view change?",
            "how many cuts are in the video",
            "How many times did the picture switch?",
            "number of scene cuts",
        ),
        Count(n_cuts),
    ),
    (
        (
            "When does the camera view change?",
            "when did the scene change",
            "At what time does the picture switch?",
            "when is the cut",
            "when did the shot change?",
            "time of the scene cut?",
            "hey, at what point does the camera angle switch?",
        ),
        At(only_cut),
    ),
    (
        (
            "When did the first object appear?",
            "when did something first show up",
            "first object - when?",
            "What time did the earliest object arrive?",
            "when did the very first thing come into view",
        ),
        At(first_appearance),
    ),
    (
        (
            "When did the last object disappear?",
            "when did the final object leave the frame",
            "when did the last thing go out of view",
            "last object gone - what time",
        ),
        At(last_disappearance),
    ),
    (
        (
            "What text is visible?",
            "what do the signs say",
            "read me the signs",
            "whats written in the video",
            "Which words appear on screen?",
            "any text? what does it say",
            "list the signs",
        ),
        Quotes(),
    ),
    (
        (
            "When did the red object appear?",
            "when does the red one show up",
            "red object: when?",
            "At what time did the red thing come into view?",
            "when did the red one arive",
        ),
        Only(coloured("red")),
    ),
    (
        (
            "When did the blue object appear?",
            "when did the blue one first show up?",
            "what time did the blue thing arrive",
        ),
        Only(coloured("blue")),
    ),
    (
        (
            "When did the green object appear?",
            "green one - when did it appear",
            "when did the green thing show up",
        ),
        Only(coloured("green")),
    ),
    (
        ("When did the blue one leave?", "what time did the blue object disappear"),
        Only(coloured("blue"), "last"),
    ),
    (
        (
            "Did a red object appear?",
            "was there a red object",
            "any red things?",
            "is there something red in the video",
            "did you see a red object",
        ),
        Only(coloured("red"), "any", yes=True),
    ),
    (
        ("Did a blue object appear?", "was there anything blue"),
        Only(coloured("blue"), "any", yes=True),
    ),
    (
        ("was there anything green?", "Did a green object show up?"),
        Only(coloured("green"), "any", yes=True),
    ),
    (
        (
            "Did a purple object appear?",
            "was there a yellow object?",
            "any orange things",
            "did you see something pink",
            "Was there a white object moving?",
        ),
        No(),
    ),
    (
        (
            "Were there any people in the video?",
            "did anyone show up",
            "any people?",
            "was there a person",
            "Did you see any pedestrians?",
        ),
        No(),
    ),
    (
        (
            "Did the blue object break the law?",
            "did the red one commit a crime",
            "Was the green object dangerous?",
            "is the blue object a car?",
            "did a dog appear",
            "Who is the person in red?",
            "what did the blue one say",
            "why did the blue object stop",
            "how much does the red object weigh",
            "is the red one happy?",
            "What is the capital of France?",
            "write me a haiku about this clip",
            "did the red object steal anything",
            "was the blue one a security guard",
            "what brand is the green object",
        ),
        Refuse(),
    ),
    (
        (
            "Which object was visible the longest?",
            "what stayed in view the longest",
            "longest visible object?",
            "which thing was on screen for the most time",
            "which object was there for the longest time",
        ),
        Only(most(in_view_s), "span"),
    ),
    (
        (
            "Which object was visible for the shortest time?",
            "what was on screen the shortest",
            "shortest visible object",
        ),
        Only(most(in_view_s, least=True), "span"),
    ),
    (
        (
            "Which object was the biggest?",
            "what's the largest object",
            "biggest thing?",
            "which one was the largest",
        ),
        Only(most(area), "any"),
    ),
    (
        (
            "Which object moved left?",
            "which one was moving to the left",
            "what went from right to left",
            "anything moving leftwards?",
        ),
        Only(leftward, "any"),
    ),
    (
        ("How many objects moved to the right?", "how many things went rightwards"),
        Count(n_rightward),
    ),
    (
        (
            "Summarise the video",
            "give me a summary",
            "what happened in the video?",
            "tl;dr of the clip?",
            "can you describe the whole video for me please",
        ),
        Summary(),
    ),
    (("Which object appeared first?", "what showed up first"), Only(earliest)),
    (("which object appeared last", "What was the last object to appear?"), Only(latest)),
    (
        ("Which object left first?", "what was the first thing to leave"),
        Only(first_to_leave, "last"),
    ),
    (
        (
            "How many times did an object stop?",
            "how many stops were there",
            "How many different objects stopped?",
        ),
        Count(n_dwells),
    ),
    (("How many objects did not stop?", "how many things never waited"), Count(n_not_dwelling)),
    (
        ("What colour was the object that waited?", "what color is the one that stood still"),
        Says(lambda t: colour_of(waiter(t))),
    ),
    (
        ("What colour was the biggest object?", "colour of the largest thing?"),
        Says(lambda t: colour_of(most(area)(t))),
    ),
    (("Where did the object wait?", "which zone did someone stand still in"), Zones(dwell_zones)),
    (
        ("How long did anyone wait?", "how long did the waiting last", "length of the stop?"),
        Lasting(dwell_length, "still"),
    ),
    (("Is there a sign saying PIZZA?", "any text that says PIZZA"), No()),
    (("Did anything appear after 1:30?", "did something show up after 2 minutes"), No()),
]

HALL: list[Entry] = [
    (
        (
            "How many objects appeared after 00:28?",
            "how many objects appeared after 0:28",
            "how many new things showed up after 28 seconds",
            "after 28s how many objects came in",
        ),
        Count(appeared(after=28.0)),
    ),
    (
        (
            "How many objects were in view after 0:28?",
            "how many objects were visible after 28 s",
        ),
        Count(in_view_after(28.0)),
    ),
    (
        ("how many objects appeared before 0:20", "How many objects arrived before 20 seconds?"),
        Count(appeared(before=20.0)),
    ),
    (("How many objects left before 0:20?",), Count(left_before(20.0))),
    (("how many objects appeared between 0:03 and 0:30?",), Count(appeared(3.0, 30.0))),
    (
        (
            "How many objects appeared in the first 10 seconds?",
            "in the first 10 s how many objects appeared",
        ),
        Count(appeared(before=10.0)),
    ),
    (("in the last 20 seconds, how many objects appeared?",), Count(appeared(after=40.0))),
    (
        (
            "how many objects appeared after the cut",
            "How many objects showed up after the scene change?",
        ),
        Count(appeared(after=42.0)),
    ),
    (("How many objects appeared before the cut?",), Count(appeared(before=42.0))),
    (
        ("What happened at 0:42?", "what happened around 42 s", "anything happen at 00:42?"),
        Window(41.0, 43.0),
    ),
    (("What happened between 0:30 and 0:40?",), Window(30.0, 40.0)),
    (
        (
            "How long did the blue one wait?",
            "how long did the blue object stay still",
            "blue object wait time?",
        ),
        Lasting(dwell_length, "still"),
    ),
    (("Did the blue object wait?", "didn't the blue one wait?"), During(only_dwell, "still")),
    (
        ("Did the red object stop?", "did the red one wait anywhere", "did the green one linger"),
        No(),
    ),
    (("When was GATE 7 visible?", "When did GATE 7 show?"), During(text_span("GATE 7"), '"GATE')),
    (("How long was GATE 7 shown?",), Lasting(text_length("GATE 7"), '"GATE')),
    (("Is there a sign saying EXIT 12?",), During(text_span("EXIT 12"), '"EXIT')),
    (("Was there a cut before 0:10?", "did the scene change in the first 10 seconds"), No()),
    (("Which object was the smallest?", "smallest object?"), Only(most(area, least=True), "any")),
    (
        ("Which object moved the fastest?", "what was the fastest thing", "fastest object?"),
        Only(most(speed_of), "any"),
    ),
]

LOBBY: list[Entry] = [
    (
        (
            "How many objects appeared after 0:12?",
            "how many new objects showed up after 12 seconds",
            "after 12s how many objects appeared",
        ),
        Count(appeared(after=12.0)),
    ),
    (
        ("How many objects were in view after 0:10?", "how many things were visible after 10 s"),
        Count(in_view_after(10.0)),
    ),
    (("how many objects appeared before 0:05",), Count(appeared(before=5.0))),
    (
        (
            "How many objects appeared after the cut?",
            "how many objects appeared after the scene changed",
        ),
        Count(appeared(after=12.0)),
    ),
    (("What happened at 0:12?", "what happened around 12 s"), Window(11.0, 13.0)),
    (
        ("How long did the green one wait?", "how long did the green object stay still"),
        Lasting(dwell_length, "still"),
    ),
    (("Did the green object wait?", "did the green one linger"), During(only_dwell, "still")),
    (("Did the red object stop?", "did the blue one wait anywhere"), No()),
    (("When was EXIT 3 visible?",), During(text_span("EXIT 3"), '"EXIT 3"')),
    (("Was there a cut before 0:05?",), No()),
]


def in_view_at(t: float) -> Callable[[GroundTruth], int]:
    """Objects in view at instant ``t``."""
    return lambda truth: sum(o.first_seen_s <= t <= o.last_seen_s for o in truth.objects)


# --- The development extension ---------------------------------------------------------------
#
# Written AFTER the engine change (once the development half above was all right, so it no longer
# taught anything): new phrasings of the shapes issue 29 names, always in the development half
# whatever their hash. Their figures are never reported as held-out figures; the held-out half
# above is unchanged.

BOTH_EXTRA: list[Entry] = [
    (
        (
            "how many different things were there",
            "total number of moving objects",
            "How many objects are in this video?",
            "tell me how many objects there were please",
            "How many unique objects appeared in the clip?",
            "how mny objects appeared",
            "How many objcts were there?",
            "how many times did an object appear",
            "number of things that showed up",
        ),
        Count(n_objects),
    ),
    (
        (
            "how many different signs did you read",
            "number of texts in the video",
            "How many signs are shown?",
            "how many texts are visible",
        ),
        Count(n_texts),
    ),
    (
        (
            "how many times did the scene cut",
            "How many camera switches are there?",
            "count the scene changes",
            "how many times did the view change",
        ),
        Count(n_cuts),
    ),
    (
        (
            "when does the camera switch",
            "at what time does the view change",
            "When did the picture change?",
            "what time is the scene cut",
            "when does the shot switch?",
            "when did the camera angle change",
            "scene change time",
        ),
        At(only_cut),
    ),
    (
        (
            "when did the first thing appear",
            "What time did the first object show up?",
            "when did the earliest thing show up",
            "first object appeared when",
        ),
        At(first_appearance),
    ),
    (
        (
            "when did the last object leave",
            "When did the final thing disappear?",
            "what time did the last object vanish",
        ),
        At(last_disappearance),
    ),
    (
        (
            "what signs are there",
            "What does the text say?",
            "read the text for me",
            "which signs were visible",
            "what words are shown",
        ),
        Quotes(),
    ),
    (
        (
            "when did the red object show up",
            "red thing, when did it appear",
            "what time did the red object come into view",
        ),
        Only(coloured("red")),
    ),
    (
        ("at what time did the green object arrive", "when did the green one come in"),
        Only(coloured("green")),
    ),
    (("when did the blue object come into view",), Only(coloured("blue"))),
    (
        ("when did the blue object leave the frame", "blue one - when did it disappear"),
        Only(coloured("blue"), "last"),
    ),
    (
        ("what time did the green one disappear", "when did the green thing go away"),
        Only(coloured("green"), "last"),
    ),
    (("when did the red one go out of view",), Only(coloured("red"), "last")),
    (
        (
            "did you spot a red object?",
            "Was there a red thing in the video?",
            "didn't a red object appear?",
            "red object seen?",
        ),
        Only(coloured("red"), "any", yes=True),
    ),
    (
        ("any blue objects?", "Was there something blue?"),
        Only(coloured("blue"), "any", yes=True),
    ),
    (
        ("did a green thing appear", "is there a green object"),
        Only(coloured("green"), "any", yes=True),
    ),
    (
        (
            "did a yellow object show up",
            "was there anything purple",
            "any black objects?",
            "did you see an orange thing",
            "wasn't there a yellow object",
        ),
        No(),
    ),
    (
        (
            "was anybody there",
            "did any people appear",
            "were there people in the clip",
            "any persons in the video?",
        ),
        No(),
    ),
    (
        (
            "did the green object break anything",
            "what is the blue object's name",
            "who owns the green object",
            "what is the weather like",
            "what will the red object do next",
            "is the blue object friendly?",
            "Did the green one pay for anything?",
            "what's the price of the red object",
            "tell me a joke",
            "was the red object stolen",
            "is the green one a robot",
        ),
        Refuse(),
    ),
    (
        (
            "What was visible for the longest time?",
            "which thing was seen the longest",
            "longest on screen?",
            "which object was in view the longest",
        ),
        Only(most(in_view_s), "span"),
    ),
    (
        (
            "which object was seen for the shortest time",
            "what was visible the shortest time",
            "briefest object?",
        ),
        Only(most(in_view_s, least=True), "span"),
    ),
    (
        ("what was the biggest object", "largest thing in the video?", "which thing is biggest"),
        Only(most(area), "any"),
    ),
    (
        ("which one was the fastest", "quickest object?", "what moved fastest"),
        Only(most(speed_of), "any"),
    ),
    (
        (
            "what moved from right to left",
            "which thing went left",
            "which object was heading left?",
            "something moving to the left?",
        ),
        Only(leftward, "any"),
    ),
    (
        ("how many objects went to the right", "number of things moving right"),
        Count(n_rightward),
    ),
    (
        (
            "summarize the clip",
            "give me an overview of the video",
            "what went on in the video",
            "quick recap please",
            "describe the video",
            "Summary?",
        ),
        Summary(),
    ),
    (
        ("which thing appeared first", "what was the first object to show up"),
        Only(earliest),
    ),
    (("what appeared last", "which object showed up last?"), Only(latest)),
    (("which object disappeared first", "what left first"), Only(first_to_leave, "last")),
    (
        (
            "how many times did something wait",
            "how many waits were there",
            "how many different objects waited",
        ),
        Count(n_dwells),
    ),
    (("how many objects never stopped", "how many things did not wait"), Count(n_not_dwelling)),
    (
        ("which colour was the object that stopped", "what colour was the thing that waited"),
        Says(lambda t: colour_of(waiter(t))),
    ),
    (("what color was the largest object",), Says(lambda t: colour_of(most(area)(t)))),
    (("where did something stop", "in which zone did the object wait"), Zones(dwell_zones)),
    (
        (
            "how long was the wait",
            "how long did something stay still",
            "for how long did the object stop",
        ),
        Lasting(dwell_length, "still"),
    ),
    (("was PIZZA written anywhere", "does any sign say PIZZA"), No()),
    (("did anything show up after 1:45", "was anything seen after 2:00"), No()),
    # Chatty, terse, no punctuation, typos.
    (
        (
            "hi there! could you tell me how many objects moved through the video?",
            "objects how many",
            "how many objects appaered",
            "HOW MANY OBJECTS WERE THERE",
        ),
        Count(n_objects),
    ),
    (
        ("hey can you tell me when the first object showed up", "first appearence time"),
        At(first_appearance),
    ),
    (
        (
            "could you please let me know when the scene changes",
            "when does the secne change",
            "cut time",
        ),
        At(only_cut),
    ),
    (
        ("what does the writing say", "what text is in the clip", "signs?"),
        Quotes(),
    ),
    (("give me a quick summary of the footage", "summarise the recording please"), Summary()),
    (
        ("which object stayed on screen the longest", "longest visible thing"),
        Only(most(in_view_s), "span"),
    ),
    (
        ("which objects did not stop", "what never stopped"),
        Count(n_not_dwelling),
    ),
    (("did anyone appear in the video?", "any humans?", "was a man there"), No()),
    (
        (
            "did the red object run a red light",
            "is the blue one married",
            "did the green object win",
            "how tall is the red one",
        ),
        Refuse(),
    ),
]

HALL_EXTRA: list[Entry] = [
    (
        (
            "how many objects showed up after 0:28",
            "after 00:28, how many new objects appeared?",
            "how many things arrived after 28 s",
        ),
        Count(appeared(after=28.0)),
    ),
    (
        ("how many things were in view after 28 seconds", "how many objects were seen after 0:28"),
        Count(in_view_after(28.0)),
    ),
    (("how many things appeared before 0:20",), Count(appeared(before=20.0))),
    (("how many things showed up between 0:03 and 0:30",), Count(appeared(3.0, 30.0))),
    (("how many things appeared in the first 10 seconds",), Count(appeared(before=10.0))),
    (("how many objects showed up in the last 20 seconds",), Count(appeared(after=40.0))),
    (
        ("how many things appeared after the cut", "how many new objects after the scene change"),
        Count(appeared(after=42.0)),
    ),
    (("how many things showed up before the scene change",), Count(appeared(before=42.0))),
    (
        ("how many objects were visible at 00:32?", "how many things were in view at 0:32"),
        Count(in_view_at(32.0)),
    ),
    (("what was in view at 0:20",), Count(in_view_at(20.0))),
    (("what happened at 42 seconds", "what's going on around 0:42"), Window(41.0, 43.0)),
    (
        ("what happened from 0:30 to 0:40", "what went on between 30 s and 40 s"),
        Window(30.0, 40.0),
    ),
    (
        ("how long did the blue one stop", "for how long did the blue thing wait"),
        Lasting(dwell_length, "still"),
    ),
    (
        ("did the blue thing stop", "did the blue one stand still"),
        During(only_dwell, "still"),
    ),
    (("did the red thing wait", "did the green object stop anywhere"), No()),
    (
        ("when was the GATE 7 sign shown", "when does GATE 7 appear"),
        During(text_span("GATE 7"), '"GATE'),
    ),
    (("how long was GATE 7 visible",), Lasting(text_length("GATE 7"), '"GATE')),
    (("was EXIT 12 shown", "does a sign say EXIT 12"), During(text_span("EXIT 12"), '"EXIT')),
    (("was there a scene change before 0:10", "did the camera switch in the first 10 s"), No()),
    (("which thing was fastest",), Only(most(speed_of), "any")),
    (
        ("what's the smallest thing", "which object is the tiniest"),
        Only(most(area, least=True), "any"),
    ),
]

LOBBY_EXTRA: list[Entry] = [
    (
        ("how many things showed up after 0:12", "after 12 seconds how many new things appeared"),
        Count(appeared(after=12.0)),
    ),
    (("how many objects were seen after 0:10",), Count(in_view_after(10.0))),
    (("how many things appeared before 5 s",), Count(appeared(before=5.0))),
    (("how many things appeared after the scene change",), Count(appeared(after=12.0))),
    (("what happened at 12 seconds", "what's going on around 0:12"), Window(11.0, 13.0)),
    (
        ("how long did the green one stop", "for how long did the green thing wait"),
        Lasting(dwell_length, "still"),
    ),
    (("did the green thing stop", "did the green one stand still"), During(only_dwell, "still")),
    (("did the red thing wait", "did the blue object stop anywhere"), No()),
    (("when was the EXIT 3 sign shown",), During(text_span("EXIT 3"), '"EXIT 3"')),
    (("was there a scene change before 0:05",), No()),
]


@dataclass(frozen=True)
class Case:
    scene: str  # "hall" or "lobby"
    question: str
    check: Check
    extra: bool = False  # the development extension: always in the development half

    @property
    def half(self) -> str:
        return "dev" if self.extra else half_of(self.question)


def half_of(question: str) -> str:
    """The fixed split: ``dev`` when the phrasing's sha256 starts with an even hex digit."""
    return "dev" if int(hashlib.sha256(question.encode()).hexdigest()[0], 16) % 2 == 0 else "held"


def _cases(scene: str, entries: Sequence[Entry], extra: bool = False) -> list[Case]:
    return [Case(scene, q, check, extra) for phrasings, check in entries for q in phrasings]


BANK: list[Case] = (
    _cases("hall", BOTH) + _cases("lobby", BOTH) + _cases("hall", HALL) + _cases("lobby", LOBBY)
)
# The development extension (see ``BOTH_EXTRA``): asked with the bank, always in the dev half.
DEV_EXTRA: list[Case] = (
    _cases("hall", BOTH_EXTRA, extra=True)
    + _cases("lobby", BOTH_EXTRA, extra=True)
    + _cases("hall", HALL_EXTRA, extra=True)
    + _cases("lobby", LOBBY_EXTRA, extra=True)
)
SCENES: dict[str, Callable[[], SceneSpec]] = {"hall": hall_scene, "lobby": lobby_scene}
