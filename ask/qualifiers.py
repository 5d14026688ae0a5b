"""What narrows a question's subject, and the check that every word of a question is accounted for.

Qualifiers: a colour ("the red one"), an ordering ("the longest", "the biggest"), a direction
of travel ("moving left"), a window anchored to the video ("after the cut", "in the last 20
seconds"). Each is read by a pattern, and every pattern's match is consumed; a content word no
pattern consumed and no filler covers is left over, and a left-over word could change the
answer, so the engine refuses and names it instead of dropping it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from ask.vocabulary import TIME

COLOUR_WORDS = {
    "red": "red",
    "orange": "orange",
    "yellow": "yellow",
    "green": "green",
    "blue": "blue",
    "purple": "purple",
    "violet": "purple",
    "pink": "pink",
    "brown": "brown",
    "white": "white",
    "grey": "grey",
    "gray": "grey",
    "black": "black",
}
COLOUR = re.compile(rf"\b({'|'.join(COLOUR_WORDS)})(?:ish)?\b")
# A person's colour is what they wear: "in a red jacket", "wearing black" name the colour.
CLOTHES = re.compile(
    r"\b(?:wear\w*|wore|dressed|clad|jackets?|coats?|shirts?|t-shirts?|tops?|sweaters?|jumpers?"
    r"|hoodies?|trousers|pants|jeans|dress|skirts?|outfits?|clothes|clothing)\b"
)
ASKS_COLOUR = re.compile(r"\b(?:what|which) colou?r\b|\bcolou?r of\b")

# Orderings: the word, what it sorts by, and which end it takes.
ORDERS: tuple[tuple[str, str], ...] = (
    ("longest", r"\blongest\b|\bthe most time\b|\bmost time\b|\bthe longest time\b"),
    ("shortest", r"\bshortest\b|\bthe least time\b|\bleast time\b|\bbriefest\b"),
    ("biggest", r"\bbiggest\b|\blargest\b|\bhuge\w*\b"),
    ("smallest", r"\bsmallest\b|\btiniest\b"),
    ("fastest", r"\bfastest\b|\bquickest\b"),
    ("slowest", r"\bslowest\b"),
)
DIRECTION = re.compile(
    r"\b(?:from )?(?P<a>left|right) to (?:the )?(?P<b>left|right)\b"
    r"|\b(?P<w>left|right)wards?\b"
    r"|\b(?:mov\w*|went|go(?:es|ing)?|walk\w*|head\w*|travel\w*|cross\w*)"
    r"(?: (?:off|away|over|out))?(?: (?:to|towards|toward) the| to)? (?P<m>left|right)\b"
)
FROM_TO = re.compile(
    r"\b(?:from )?(?:the )?(?P<a>left|right)(?: (?:side|edge|end|part|hand side)"
    r"|(?: side)? of the (?:frame|picture|screen|image|video|street|road))? to(?:wards)? "
    r"(?:the )?(?P<b>left|right)\b"
)
ANCHORED = re.compile(
    r"\b(?P<side>after|before) the (?:scene )?(?:cut|scene change|change|camera change)\b"
    r"|\b(?P<side2>after|before) the (?:scene|view|camera|picture|shot)"
    r" (?:changed|changes|switched|switches|cut|cuts)(?: (?:view|views|shot|shots))?\b"
    rf"|\b(?:in |during )?the (?:last|final) {TIME}"
)
# "longer than 10 seconds", "for more than 5 s", "at least 8 s", "over a minute" (a minimum
# length of what the question asks about: a wait, a time in view).
# A length needs its unit or a clock ("more than 5 people" is no length).
_LENGTH = (
    r"(?:(\d{1,2}):(\d{2}(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*(?:s|sec|secs|seconds?|min|mins|minutes?)\b)"
)
LONGER = re.compile(
    rf"\b(?:for )?(?:(?:longer|more) than|over|at least|upwards of|in excess of) {_LENGTH}"
    r"(?: or (?:more|longer))?"
    rf"|\bfor {_LENGTH} or (?:more|longer)\b"
)
LAST_N = re.compile(rf"\b(?:in |during )?the (?:last|final) {TIME}")

# Words that change no answer: articles, auxiliaries, pronouns, politeness, "video" nouns.
FILLERS = frozenset(
    re.findall(
        r"\S+",
        """
        a an the is are was were be been being do does did done has have had can could would
        should will shall may might must i me my you your we us our it its it's they them their
        this that these those there here of in on at to for from by with about as into onto and
        or but so if then than too also just only really actually please tell show let know hey
        hi hello ok okay well um uh thanks thank kindly can't couldn't don't doesn't didn't
        isn't wasn't weren't aren't what which who whom when where how many much time times
        number count any anything something everything some every each all total overall up out
        down over still ever even like get got give see saw seen notice noticed spot
        spotted find found happen happened happens going go went come came video clip footage
        recording frame frames scene shot camera picture view screen image one ones thing things
        object objects item items moving mover movers move moved moves movement new first last
        very whole entire point moment second seconds minute minutes mark part say that's what's
        whats there's let's yes no not never none nothing nobody without roughly approximately
        approx altogether pls plz cam here s sec secs min mins am pm kind sort tl dr tldr
        describe summary
        summarise summarize overview recap distinct different separate unique individual place
        anywhere somewhere read reads saying says shown showing displayed through changed
        changes
        """,
    )
)

_WORD = re.compile(r"[a-z][a-z']*")


@dataclass(frozen=True)
class Qualifiers:
    """What narrows the subject, read from a question."""

    colour: str | None = None
    asks_colour: bool = False
    order: str | None = None
    direction: str | None = None  # "left" or "right": net travel
    anchor: str | None = None  # "after_cut", "before_cut" or "last" (with last_s)
    last_s: float | None = None
    min_s: float | None = None  # "longer than N s": the least length asked about


def read_qualifiers(q: str) -> tuple[Qualifiers, str]:
    """The qualifiers of lower-cased question ``q``, and ``q`` with their words consumed."""
    colour_match = COLOUR.search(q)
    colour = COLOUR_WORDS[colour_match.group(1)] if colour_match else None
    asks = bool(ASKS_COLOUR.search(q))
    order = next((name for name, pattern in ORDERS if re.search(pattern, q)), None)
    direction, anchor, last_s = None, None, None
    # "walked left to right": the "from-to" reading first (an earlier "walked left" is its start)
    moved = FROM_TO.search(q) or DIRECTION.search(q)
    if moved:
        found = moved.groupdict()
        direction = found.get("b") or found.get("w") or found.get("m")
    anchored = ANCHORED.search(q)
    if anchored:
        side = anchored.group("side") or anchored.group("side2")
        if side:
            anchor = f"{side}_cut"
        else:
            last = LAST_N.search(q)
            anchor, last_s = ("last", _seconds(last)) if last else (None, None)
    longer = LONGER.search(q)
    min_s = _seconds(longer) if longer else None
    # One colour is read; a second ("red or blue") is left over and refused, not dropped.
    rest = COLOUR.sub(" ", q, count=1)
    patterns: list[str | re.Pattern[str]] = [LONGER, ASKS_COLOUR, FROM_TO, DIRECTION]
    patterns.append(ANCHORED)
    if colour is not None:
        patterns.append(CLOTHES)
    for pattern in patterns + [p for _, p in ORDERS]:
        rest = re.sub(pattern, " ", rest)
    return Qualifiers(colour, asks, order, direction, anchor, last_s, min_s), rest


def _seconds(match: re.Match[str]) -> float:
    """The length a ``LONGER`` match writes: a clock (m:ss) or a number and its unit."""
    groups = match.groups()
    offset = 0 if any(g is not None for g in groups[:3]) else 3
    minutes, seconds, number = groups[offset : offset + 3]
    if minutes is not None:
        return int(minutes) * 60 + float(seconds)
    unit = match.string[match.end(offset + 3) : match.end()]
    return float(number) * (60.0 if re.match(r"\s*min", unit) else 1.0)


def consume(q: str, patterns: list[str | re.Pattern[str]]) -> str:
    """``q`` with every match of ``patterns`` blanked out."""
    for pattern in patterns:
        q = re.sub(pattern, " ", q)
    return q


def left_over(rest: str) -> list[str]:
    """The content words of ``rest`` (what no pattern consumed) that no filler covers."""
    return [w for w in _WORD.findall(rest) if w.strip("'") not in FILLERS and len(w) > 1]


def correct_typos(q: str, known: frozenset[str], only: frozenset[str] | None = None) -> str:
    """``q`` with each unknown word of 5+ letters replaced by a known word that is one typo
    away ("appeard" -> "appeared"); short words are left alone (too many near neighbours)."""

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        if word in known or len(word) < 5 or (only is not None and word not in only):
            return word
        return _closest(word, known)

    return _WORD.sub(fix, q)


@lru_cache(maxsize=4096)
def _closest(word: str, known: frozenset[str]) -> str:
    """The known word one edit from ``word``, or ``word`` (cached: difflib scans every word)."""
    close = difflib.get_close_matches(word, known, n=3, cutoff=0.8)
    return next((c for c in close if one_edit(word, c)), word)


def one_edit(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter inserted, deleted or replaced, or two neighbours
    swapped ("appaered", "secne")."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(differ) == 2 and differ[1] == differ[0] + 1:
            i, j = differ
            return a[i] == b[j] and a[j] == b[i]
        return len(differ) == 1
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))
