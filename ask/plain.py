"""Everyday phrasings rewritten into the reader's words before it reads a question.

Each rule keeps the meaning and only changes the wording: "half a minute" is "30 seconds",
"stood around" is "stood", "the right hand side" is "the right side", "fifteen" is "15". A rule
never drops a word that could change the answer ("at all" and "all the way" are emphasis).
"""

from __future__ import annotations

import re

_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60, "ninety": 90,
}  # fmt: skip
_UNIT = r"(?=\s*(?:s|sec|secs|seconds?|min|mins|minutes?)\b)"
_NUMBER_WORDS = re.compile(rf"\b({'|'.join(sorted(_NUMBERS, key=len, reverse=True))})\b{_UNIT}")
_VIEW = r"(?:view|shot|camera|angle|scene|picture|image)s?"
_OTHER = r"(?:another|a different|a new|the next|the other|a second)"

RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bhalf an? (min(?:ute)?)\b"), r"30 seconds"),
    (re.compile(r"\ban? (min(?:ute)?|hour)\b"), r"1 \1"),
    (re.compile(r"\b((?:stand|stood|wait|linger|loiter)\w*) (?:around|about)\b"), r"\1"),
    (re.compile(r"\b((?:mov|walk|wander|stroll)\w*) (?:around|about)\b"), r"\1"),
    (re.compile(r"\bh[au]ng(?:s|ing|ed)? (?:around|about|out)\b"), "stayed"),
    (re.compile(r"\b(?:not moving|motionless|stationary|unmoving)\b"), "still"),
    (re.compile(r"\b(left|right)-to-(left|right)\b"), r"\1 to \2"),
    (re.compile(r"\b(left|right)[- ]hand(?: side)?\b"), r"\1 side"),
    (
        re.compile(
            r"\b(?:the )?(?:largest|biggest|greatest|highest|maximum|max) (?:number|count|amount)"
            r" of\b"
        ),
        "the most",
    ),
    (re.compile(r"\b(?:the )?(?:biggest|largest) crowd\b"), "the most crowded"),
    (re.compile(r"\bfrom one side(?: of (?:the |this )?\w+)? to the other(?: side)?\b"), "across"),
    (re.compile(r"\b(?:at all|all the way|for a while|for some time)\b"), " "),
    (re.compile(r"\bturn(?:s|ed|ing)? up\b"), "appeared"),
    # a return is not measured: "again" is left over, and the question refused
    (re.compile(r"\b(?:for )?(?:a|the) (?:second|third|2nd|3rd|another) time\b"), "again"),
    (re.compile(r"\bthe (?:whole|entire) (video|clip|footage|recording|scene)\b"), r"the \1"),
    # "the whole time": all along, which no answer checks (it is left over, and refused)
    (
        re.compile(r"\b(?:the (?:whole|entire) time|all the time|the whole way through)\b"),
        "throughout",
    ),
    (re.compile(r"\bhead ?count\b"), "how many people"),
    (re.compile(r"\bnew faces?\b"), "new person"),
    (re.compile(r"\b(?:some|any|every)(one|body) else\b|\banother person\b"), "someone"),
    (re.compile(r"\bst(?:ay|ayed|ays|aying) put\b"), "stood still"),
    (re.compile(r"\bin (?:the same|one) (?:place|spot)\b"), " "),
    (re.compile(r"\b(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?) in\b"), r"at \1 s"),
    (re.compile(r"\bat the (\d+(?:\.\d+)?)[- ](?:s|secs?|seconds?) mark\b"), r"at \1 s"),
    (
        re.compile(
            rf"\b(after|before) the (?:switch|change|jump|cut)(?: (?:to|into) {_OTHER} {_VIEW})?"
        ),
        r"\1 the cut",
    ),
    (
        re.compile(
            rf"\b(?:switch|jump|flip|cut|change)\w*(?: over| back)? (?:to|into) {_OTHER} {_VIEW}"
        ),
        "the camera view changed",
    ),
)


def plain(q: str) -> str:
    """Lower-cased ``q`` in the reader's words."""
    q = _NUMBER_WORDS.sub(lambda m: str(_NUMBERS[m.group(1)]), q)
    for pattern, replacement in RULES:
        q = pattern.sub(replacement, q)
    return q
