"""Words for places: what "in the lobby", "on the street" or "by the door" mean to a run.

A run knows the picture as a whole and its zones (named areas, by default the thirds "left",
"center" and "right"); it does not know where a door is. So a place word is one of three things:

* a zone's name: the question is about that zone (``ask.intent`` reads it as now);
* the SETTING: the video's title words ("Lobby camera": "lobby") and the nouns people use for
  the place a camera watches (lobby, street, hall, room...). The whole picture is that place, so
  the word means "in this video" and changes nothing;
* a PART of the setting (door, entrance, window, counter...): the run cannot tell where it is.
  The question is answered over the whole picture and the answer says so (``Intent.place``), so
  no filter is silently left unapplied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ask.vocabulary import words

# The place a camera watches, as a whole.
SETTING = words(
    r"lobb(?:y|ies)",
    r"streets?",
    r"roads?",
    r"pavements?",
    r"sidewalks?",
    r"squares?",
    r"plazas?",
    r"halls?",
    r"hallways?",
    r"corridors?",
    r"rooms?",
    r"foyers?",
    r"reception",
    r"offices?",
    r"shops?",
    r"stores?",
    r"stations?",
    r"platforms?",
    r"yards?",
    r"car ?parks?",
    r"parking(?: lot)?",
    r"buildings?",
    r"premises",
    r"place",
    r"indoors",
    r"outdoors",
    r"ground floor",
    r"floor",
    r"surveillance",
    r"cctv",
    r"security cam(?:era)?",
)
# Parts of a place that a run has no zone for unless a zone is named so.
PARTS = words(
    r"doors?",
    r"doorways?",
    r"entrances?",
    r"entry",
    r"gates?",
    r"windows?",
    r"counters?",
    r"desks?",
    r"corners?",
    r"stairs?",
    r"staircases?",
    r"elevators?",
    r"lifts?",
    r"benches?",
    r"lamp ?posts?",
    r"kerbs?",
    r"curbs?",
    r"lawns?",
    r"grass",
    r"walls?",
)
# Prepositions that put something at a place: consumed with it.
# A place word is read only where it places something: after a preposition ("in the lobby", "the
# middle of the room"), a verb of going ("crossed the street", "left the room"), or naming the
# camera ("the lobby cam"); "how many doors" or "the colour of the walls" ask about the place
# itself, which no detector sees, and are left over (refused).
_AT_PLACE = (
    r"(?:(?:in|on|at|by|near|through|throughout|across|along|into|from|around|past|outside"
    r"|inside|within|onto|to|towards|toward|of)\s+"
    r"|(?P<verb>(?:cross\w*|leav\w*|left|enter\w*|exit\w*|walk\w*|pass\w*|reach\w*|roam\w*"
    r"|patrol\w*)\s+))"
)
# Every place word, to keep it from being "corrected" into another word ("walls" is no "walks").
PLACE_WORD = re.compile(rf"{SETTING}|{PARTS}")
_ARTICLE = r"(?:(?:the|this|that|a|an|our|my)\s+)?"
# "the lobby zone", "the door area" name a zone (the reader checks the run has it), not a place.
_NOT_A_ZONE = r"(?! (?:zone|area|region|section)s?\b)"
# Short title words that are no place ("a", "of") and the words the reader knows otherwise.
_MIN_TITLE_WORD = 3


@dataclass(frozen=True)
class Places:
    """The place words a question used: ``setting`` (the whole picture) and ``part`` (a part
    of the place the run has no zone for; the answer says it covered the whole picture)."""

    setting: tuple[str, ...] = ()
    part: str | None = None

    def note(self) -> str:
        """What the answer adds when a part of the place was named."""
        if self.part is None:
            return ""
        return (
            f' (This run has no zone named "{self.part}", so this covers the whole picture;'
            " zones can be drawn when the video is executed.)"
        )


def title_words(title: str, known: frozenset[str]) -> tuple[str, ...]:
    """The words of a video's title that name its setting: letters only, not ones the reader
    already gives a meaning (``known``: "camera", "exit", a colour)."""
    found = re.findall(r"[a-z]+", title.lower())
    return tuple(w for w in dict.fromkeys(found) if len(w) >= _MIN_TITLE_WORD and w not in known)


def read_places(q: str, title: tuple[str, ...], zones: list[str]) -> tuple[Places, str]:
    """The place words of lower-cased ``q`` and ``q`` with them consumed (a word that names a
    zone is left for the zone reader; a verb before the place stays: "left the room")."""
    zone_words = {z.lower() for z in zones}
    setting: list[str] = []
    for pattern in [SETTING, *(rf"\b{re.escape(w)}\b" for w in title)]:
        # the setting needs no preposition ("when was the street busiest"), unless counted
        placed = rf"\b{_AT_PLACE}?{_ARTICLE}({pattern}){_NOT_A_ZONE}"
        for m in list(re.finditer(placed, q)):
            word = m.group(2)
            if word not in zone_words and not _COUNTED.search(q[: m.start(2)]):
                setting.append(word)
                q = q.replace(m.group(0), f" {m.group('verb') or ''} ", 1)
    part = None
    for m in re.finditer(rf"\b{_AT_PLACE}{_ARTICLE}({PARTS}){_NOT_A_ZONE}", q):
        if m.group(2) not in zone_words:
            part = part or m.group(2)
            q = q.replace(m.group(0), f" {m.group('verb') or ''} ", 1)
    return Places(tuple(setting), part), q


_COUNTED = re.compile(r"\b(?:how many|number of)(?: (?:different|distinct|separate|\w+))?\s*$")
