"""Reading a question: what it asks (its intent) and about what (its slots).

Rules, not a model: a handful of question shapes a video's world state can answer, synonyms for
the words people use, and times written as seconds (``5 s``, ``5.5 seconds``) or ``mm:ss``.
Anything about things the detectors cannot name (a helicopter when the run ran motion, a colour,
a voice) is marked unsupported, and anything not about the video at all is marked off topic, so
the engine can refuse instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ask.identities import APPEARANCE_WORDS, IDENTITIES, PASSING_WORDS, counting_of
from ask.pace import MOVING, ROUTE, RUNNING
from ask.places import PLACE_WORD, Places, read_places
from ask.plain import plain
from ask.qualifiers import (
    FILLERS,
    Qualifiers,
    consume,
    correct_typos,
    left_over,
    read_qualifiers,
)
from ask.vocabulary import (
    ACTIONS,
    KNOWN_WORDS,
    NAMED_THINGS,
    NEGATION,
    PEOPLE,
    PHYSICAL,
    PRESENCE,
    SCENE,
    SHAPES,
    SUMMARY_STYLE,
    SUMMARY_WORDS,
    TEXT_WORDS,
    TIME,
    UNSUPPORTED_ATTRIBUTES,
    VIDEO_WORDS,
    WINDOW_WORDS,
)
from ask.windows import at_a_moment, find_window, unplaced_time, window_matches
from ask.zones import unknown_zone, zone_named


@dataclass(frozen=True)
class Intent:
    """What a question asks.

    Attributes:
        kind: count, first, last, when, duration, zone, text, exists, between, change, list,
            or ``off_topic`` / ``unsupported`` / ``unknown`` (refused).
        subject: ``object`` (physical), ``text``, ``scene_change`` or a class name.
        action: appear, disappear, enter_zone, exit_zone, dwell, or None.
        zone: a zone name the question names.
        window: ``(start_s, end_s)`` the question limits itself to.
        quoted: a text the question quotes (``"EXIT 3"``) or names after ``text``/``sign``.
        unsupported: what the question asks that the detectors cannot see.
        people: the question says people (motion cannot tell them from other things).
    """

    kind: str
    subject: str = "object"
    action: str | None = None
    zone: str | None = None
    window: tuple[float, float] | None = None
    quoted: str | None = None
    unsupported: str | None = None
    people: bool = False
    qualifiers: Qualifiers = field(default_factory=Qualifiers)
    presence: bool = False  # "visible", "seen", "in view": being there, not coming into view
    unknown_word: str | None = None  # a word nothing accounted for (refused)
    negation: str | None = None  # the word denying the predicate ("never"), if any
    counting: str | None = None  # a count of things: identities or appearances (ask.identities)
    moving: bool = False  # "walk", "pass", "cross": things that moved (ask.pace)
    pace: str | None = None  # "ran", "quickly": the word asking for a running pace (ask.pace)
    place: Places = field(default_factory=Places)  # place words read (ask.places)
    new: bool = False  # "new people", "a new person": first appearances of things (identities)
    still: bool = False  # stood, waited, stopped (not "stayed"): "the longest" is the longest wait

    def interpreted(self) -> dict[str, object]:
        """What was answered, for the client: intent, subject, qualifiers and window."""
        q = self.qualifiers
        named = {
            "colour": q.colour,
            "order": q.order,
            "direction": q.direction,
            "zone": self.zone,
            "action": self.action,
            "text": self.quoted,
            "relative_window": q.anchor,
            "negation": self.negation,
            "longer_than_s": q.min_s,
            "pace": self.pace,
            "moved": self.moving or None,
            "new": self.new or None,
            "place": ", ".join((*self.place.setting, *filter(None, [self.place.part]))) or None,
        }
        window = None
        if self.window is not None:
            end = None if self.window[1] == float("inf") else self.window[1]
            window = {"start_s": self.window[0], "end_s": end}
        read: dict[str, object] = {
            "intent": self.kind,
            "subject": self.subject,
            "qualifiers": {k: v for k, v in named.items() if v is not None},
            "window": window,
        }
        return read | ({"counted": self.counting} if self.counting else {})


_OPENING, _CLOSING = '"\u201c\u2018', '"\u201d\u2019'  # straight and curly quotes
_QUOTE = re.compile(
    rf"[{_OPENING}]([^{_CLOSING}]{{1,80}})[{_CLOSING}]|(?<!\w)'([^']{{1,80}})'(?!\w)"
)
_CAPITALS = re.compile(r"(?<![\w'])([A-Z][A-Z0-9%!&.-]+(?:\s+[A-Z0-9][A-Z0-9%!&.-]*)*)(?![\w'])")


def _quoted(question: str) -> str | None:
    """A text the question names: in quotes, or written in capitals (``EXIT 3``)."""
    quoted = _QUOTE.search(question)
    if quoted:
        return (quoted.group(1) or quoted.group(2)).strip()
    if not any(c.islower() for c in question):
        return None  # a question shouted in capitals names no text by its capitals
    capitals = [m.group(1) for m in _CAPITALS.finditer(question) if len(m.group(1)) >= 2]
    return capitals[0].strip() if capitals else None


def _subject(q: str, known: frozenset[str]) -> tuple[str, str | None]:
    """The subject of the question and what it names that the run cannot see, if anything.

    People ("people", "pedestrians", "someone"...) are the ``person`` class when the run's
    detectors name people; otherwise they are moving objects (with a caveat, see the engine).
    """
    named = next(
        (w for w in re.findall(r"[a-z]+", q) if w in NAMED_THINGS and w not in known), None
    )
    if "person" in known and re.search(PEOPLE, q):
        return "person", named  # "did anyone carry a suitcase": a suitcase is still unseen
    for word in re.findall(r"[a-z]+", q):
        singular = word[:-1] if word.endswith("s") and word[:-1] in known else word
        if singular in known and singular not in {"motion", "text"}:
            return singular, None
        if word in NAMED_THINGS:
            return "object", word
    if re.search(SCENE, q):
        return "scene_change", None
    if re.search(TEXT_WORDS, q) and not re.search(r"\bleft\b.*\bscene\b", q):
        return "text", None
    return "object", None


_CROSSINGS = {"enter_zone": "appear", "exit_zone": "disappear"}
_ZONE_WORDS = r"\b(?:zones?|areas?|sides?|parts?|thirds?|regions?)\b"


def _action(q: str, zone: str | None) -> str | None:
    """What the question asks the subject did.

    Entering or leaving with no zone in sight ("when did the first object leave?") is coming
    into or going out of view: a zone crossing needs a zone.
    """
    action = next((a for a, pattern in ACTIONS if re.search(pattern, q)), None)
    if action is None and zone is None and re.search(r"\bleft\b", q):
        return "disappear"  # "which object left first?" (a direction was read before)
    if action in _CROSSINGS and zone is None and not re.search(_ZONE_WORDS, q):
        return _CROSSINGS[action]
    return action


def _shape(q: str) -> str:
    """The first shape ``q`` matches; "the first 10 s" names a window, not the first thing."""
    shaped = re.sub(rf"\b(?:first|opening)\s+{TIME}", " ", q)
    return next((k for k, pattern in SHAPES if re.search(pattern, shaped)), "unknown")


def parse_question(
    question: str, known: frozenset[str], zones: list[str], title: tuple[str, ...] = ()
) -> Intent:
    """The intent of ``question`` for a run whose detectors name ``known`` classes, of a video
    whose title's place words are ``title`` (``ask.places.title_words``)."""
    quoted = _quoted(question)
    asked = question if quoted is None else question.replace(quoted, " ")
    q = plain(" ".join(asked.lower().replace("\u2019", "'").split()))
    moving, running = bool(re.search(MOVING, q)), re.search(RUNNING, q)  # before "through X"
    vertical = _VERTICAL.search(q)  # up or down the picture: not measured ("down the hall" is)
    if vertical:
        return Intent("not_understood", unknown_word=vertical.group(1))
    place, q = read_places(q, title, zones)
    q = _corrected(re.sub(r"\bhw\b", "how", q), zones, known)
    q = re.sub(r"\bon (?:the )?screen\b", "in view", q)  # being visible, not a screen's text
    qualifiers, q = read_qualifiers(q)
    subject, named = _subject(q, known)
    if quoted is not None and subject == "object" and named is None:
        subject = "text"
    for what, pattern in UNSUPPORTED_ATTRIBUTES:
        if re.search(pattern, q) and not (what == "sound" and subject == "text"):
            return Intent("unsupported", unsupported=what)
    if named is not None:
        return Intent("unsupported", unsupported=named)
    kind = _shape(q)
    on_topic = (
        VIDEO_WORDS.search(q)
        or re.search(PHYSICAL, q)
        or re.search(TEXT_WORDS, q)
        or SUMMARY_WORDS.search(q)
        or (kind == "between" and find_window(q) is not None)
        or subject not in {"object", "text"}
        or kind in {"peak", "together"}
        or bool(place.setting)
        or any(re.search(pattern, q) for _, pattern in ACTIONS)
        or moving
        or running
    )
    if not on_topic and qualifiers == Qualifiers():
        return Intent("off_topic")
    zone = zone_named(q, zones)
    came_from = zone is not None and re.search(rf"\bfrom (?:the )?{re.escape(zone.lower())}\b", q)
    if came_from:  # where a thing came in from is not a zone it was in: not measured
        return Intent("not_understood", subject=subject, unknown_word=came_from.group(0))
    if kind in {"first", "last"} and re.search(r"\bfirst\b", q) and re.search(r"\blast\b", q):
        # "when does the last person to arrive first appear": two orders, one answer
        return Intent("not_understood", subject=subject, unknown_word="first ... last")
    named_zone = unknown_zone(q, zones)
    if named_zone is not None:
        # "zone B": a zone this run does not have (a letter is no word the reader drops)
        return Intent("not_understood", subject=subject, unknown_word=named_zone)
    views = _VIEWS.search(q)
    if views:  # the run counts changes of view, not views: refused, not miscounted
        return Intent("not_understood", subject="scene_change", unknown_word=views.group(1))
    left = _left_over(q, zones, known)
    number = unplaced_time(q)
    if left or number:
        word = left[0] if left else number
        return Intent("not_understood", subject=subject, unknown_word=word)
    action = _action(q, zone) or ("appear" if moving or running else None)
    if kind == "last" and action in {None, "appear"} and _seen_last(q):
        action = "disappear"  # "when was the last person seen": the last moment in view
    negation = NEGATION.search(q)
    kind = _kind(kind, qualifiers, q, action, subject)
    universal = _UNIVERSAL.search(q)
    if kind == "exists" and universal:
        # "did every object stop?": one object that did is no "yes".
        return Intent("not_understood", subject=subject, unknown_word=universal.group(0))
    counts_things = kind == "count" and subject not in {"text", "scene_change"}
    return Intent(
        kind,
        counting=_counting(q, action) if counts_things else None,
        subject=subject,
        action=action,
        zone=zone,
        window=find_window(q),
        quoted=quoted,
        people=bool(re.search(PEOPLE, q)),
        qualifiers=qualifiers,
        presence=bool(re.search(PRESENCE, q) or at_a_moment(q)) and not re.search(_COMING, q),
        negation=negation.group(0) if negation else None,
        moving=moving,
        pace=running.group(0) if running else None,
        place=place,
        new=bool(re.search(r"\bnew\b", q)) and subject not in {"text", "scene_change"},
        still=bool(re.search(_STILL, q)),
    )


def _counting(q: str, action: str | None) -> str | None:
    """What a count of things counts: identities or appearances (coming into view); a count
    of what things did ("how many people stopped") counts identities, or times (None)."""
    counting = counting_of(q)
    return counting if action in {None, "appear"} or counting == IDENTITIES else None


def _seen_last(q: str) -> bool:
    """Whether a "last" question asks when things were last in view, not when the last one
    came into view ("when did the last person appear")."""
    return bool(re.search(PRESENCE, q)) and not re.search(_COMING, q)


_VIEWS = re.compile(
    r"\bhow many (?:different |distinct |separate )?(?:camera )?"
    r"(views?|shots?|angles?|cameras?|scenes?|camera angles?|exits|entrances|ways (?:in|out))\b"
    r"(?! (?:change|switch|cut))"
)
_STILL = r"\b(?:stood|stand\w*|wait\w*|stop\w*|still|paus\w*|loiter\w*|linger\w*|idle|dwell\w*)\b"
_VERTICAL = re.compile(
    r"\b(?:mov|go|went|head|walk|travel|climb|ris|rose|drift|came|come)\w* "
    r"(up|down|upwards?|downwards?|towards? the (?:camera|top|bottom)|away from the camera)\b"
    r"(?! (?:the|this|a|that) )"
)
_NEVER_A_CORRECTION = frozenset({"left", "right", "center"})
_LONG_FILLER = 7
_UNIVERSAL = re.compile(r"\b(?:every|everything|everyone|everybody|all|each|both|only)\b")
_COMING = r"\b(?:appear\w*|show\w* up|arriv\w*|c[oa]me in\w*|enter\w*|new)\b"


def _kind(kind: str, qualifiers: Qualifiers, q: str, action: str | None, subject: str) -> str:
    """The shape, refined by the qualifiers: "what colour", an ordering, a summary; a terse
    question with no shape word that names being seen ("red object seen?") asks whether."""
    if qualifiers.asks_colour:
        return "colour"
    if qualifiers.order and kind not in {"count", "duration"}:
        return "order"
    if kind == "between" and find_window(q) is None and qualifiers.anchor is None:
        return "summary"
    if kind == "unknown" and SUMMARY_WORDS.search(q):
        return "summary"
    if kind == "unknown" and qualifiers.direction:
        return "list"
    if kind == "unknown" and at_a_moment(q) and action in {None, "appear"}:
        return "count"  # terse: "people in frame at 19s?" asks how many were there
    if kind == "unknown" and (action in {"appear", "dwell"} or re.search(PRESENCE, q)):
        return "list" if re.match(r"(?:what|which)\b", q) else "exists"
    if kind == "unknown" and action is None and subject == "text":
        return "text"  # terse: "signs?"
    return kind


def _corrected(q: str, zones: list[str], known: frozenset[str]) -> str:
    """``q`` with its typos corrected: a word nothing accounts for, one edit away from a word
    the reader knows ("appeard"), becomes that word. Colour words are never the correction
    ("write" is not "white"), nor are sides and zones ("fight" is not "right")."""
    words = _vocabulary(known, tuple(zones))
    if all(w in words or len(w) < 5 for w in re.findall(r"[a-z][a-z']*", q)):
        return q  # nothing to correct (most questions): skip the reading below
    unknown = frozenset(w for w in _left_over(q, zones, known) if not PLACE_WORD.fullmatch(w))
    return correct_typos(q, _targets(known), only=unknown)


@lru_cache(maxsize=64)
def _targets(known: frozenset[str]) -> frozenset[str]:
    """The words a typo may become: not a side or a zone ("fight" is not "right"), nor a
    short filler."""
    # A filler is a target only when long: "might" is no typo of "fight", "somthing" is one
    # of "something" (a content word one edit from a short filler would vanish silently).
    long_fillers = {w for w in FILLERS if len(w) >= _LONG_FILLER}
    return (KNOWN_WORDS | long_fillers | known) - _NEVER_A_CORRECTION


@lru_cache(maxsize=64)
def _vocabulary(known: frozenset[str], zones: tuple[str, ...]) -> frozenset[str]:
    """The words the reader knows on a run (cached: a run's classes and zones do not change)."""
    return KNOWN_WORDS | FILLERS | known | {z.lower() for z in zones}


# Words that narrow to a time: accounted for only inside a window the reader computed.
_WINDOWING = re.compile(
    r"\b(?:after|before|between|until|till|during|since|later|earlier|beginning|start|end"
    r"|around|near)\b"
)


def _left_over(q: str, zones: list[str], known: frozenset[str]) -> list[str]:
    """The words of ``q`` that no pattern of the reader and no filler accounts for; a word
    that narrows to a time ("after the blue one left", "at the end") but names no window the
    reader computes is one of them."""
    for m in sorted(window_matches(q)[1], key=lambda m: m.start(), reverse=True):
        q = q[: m.start()] + " " + q[m.end() :]
    windowing = _WINDOWING.findall(q)
    q = _WINDOWING.sub(" ", q)
    patterns: list[str | re.Pattern[str]] = [SUMMARY_STYLE, SUMMARY_WORDS]
    patterns += [p for _, p in (*SHAPES, *ACTIONS)]
    patterns += [TIME, WINDOW_WORDS, SCENE, TEXT_WORDS, PHYSICAL, VIDEO_WORDS, PRESENCE]
    patterns += [_ZONE_WORDS, APPEARANCE_WORDS, PASSING_WORDS, MOVING, ROUTE, RUNNING]
    patterns += [rf"\b{re.escape(z.lower())}\b" for z in zones]
    patterns += [rf"\b{re.escape(k)}s?\b" for k in known]
    # the content words first: the word named in a refusal is the one that matters most
    return [w for w in left_over(consume(q, patterns)) if w not in FILLERS] + windowing
