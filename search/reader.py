"""Free text read as a search: ``q=GATE 7 after 20 s`` becomes the filters it means.

The words about the workspace (which videos, days and clock times, "longer than 5 minutes") are
read here; what is left is read by Ask's own intent reader (``ask.intent``), so a search and a
question understand the same words the same way. What neither can read is refused
(``NotUnderstood``, a 422 that says what was understood) and never guessed.

Clock times are UTC. They are clock times only next to a day ("after 22:00 on 2026-11-20",
"yesterday", "last week"); alone, ``after 1:30`` is a time in the video, as Ask reads it.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from ask.intent import Intent, parse_question
from ask.vocabulary import TIME
from search.filters import SearchFilters
from ves.clock import to_rfc3339
from ves.errors import NotUnderstood

BASE_CLASSES = frozenset({"person", "face", "motion", "text"})
_DAY = r"(\d{4}-\d{2}-\d{2})"
_HOUR = r"([01]?\d|2[0-3]):([0-5]\d)"
_DAYS = re.compile(
    rf"\b(?:on\s+{_DAY}|since\s+{_DAY}|(yesterday|today|last\s+week|this\s+week)"
    rf"|(?:in\s+the\s+)?last\s+(\d{{1,3}})\s+days?)\b"
)
_CLOCK_AFTER = re.compile(rf"\b(?:after|since|from)\s+{_HOUR}\b")
_CLOCK_BEFORE = re.compile(rf"\b(?:before|until|till|to)\s+{_HOUR}\b")
_LONGER = re.compile(
    rf"\b(?:for\s+)?(?:over|more\s+than|longer\s+than|at\s+least|above)\s+({TIME})"
)
_WORKSPACE = re.compile(
    r"\b(?:across|in|of|from|on)\s+(?:all|any|every|each|the|my)\s+(?:of\s+the\s+)?"
    r"(?:videos?|clips?|recordings?|cameras?)\b|\bevery\s+time\b|\bshow\s+me\b"
    r"|^\s*(?:find|search(?:\s+for)?|list)\b|\b(?:which|what)\s+(?:videos?|clips?|recordings?)\b"
)
_READ_AS_TEXT = "text "  # a bare text ("GATE 7 after 20 s") is read as Ask reads "text GATE 7"


@dataclasses.dataclass(frozen=True)
class Vocabulary:
    """What the searched runs can name: classes their detectors name and their zones."""

    classes: frozenset[str]
    zones: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Reading:
    """What a search or a workspace question reads as: Ask's intent, and the filters it
    becomes, or why it cannot be searched (``problem``, with what was ``understood``)."""

    intent: Intent
    filters: SearchFilters | None
    problem: str | None = None
    understood: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def refusal(self) -> str:
        """Why, in Ask's words: ``outside_detectors``, ``off_topic`` or ``not_understood``."""
        kinds = {"unsupported": "outside_detectors", "off_topic": "off_topic"}
        return kinds.get(self.intent.kind, "not_understood")


def read_text(q: str, vocabulary: Vocabulary, today: date | None = None) -> Reading:
    """How ``q`` reads over runs that name ``vocabulary``; ``today`` anchors "yesterday"."""
    today = today or datetime.now(UTC).date()
    try:
        rest, clock = _clock_window(q, today)
    except NotUnderstood as exc:
        return Reading(Intent("not_understood"), None, exc.detail, exc.interpreted)
    rest, longer = _longer_than(rest)
    rest = _WORKSPACE.sub(" ", rest)
    understood: dict[str, Any] = {k: to_rfc3339(v) for k, v in clock.items()}
    understood |= {"min_dwell_s": longer} if longer else {}
    intent = _intent(rest, vocabulary)
    understood |= _read_of(intent)
    if intent.kind in {"off_topic", "unsupported", "not_understood"} or not rest.strip():
        return Reading(intent, None, _why(intent, rest), understood)
    if intent.qualifiers.colour or intent.qualifiers.order or intent.qualifiers.direction:
        problem = "colour, order and direction are not search filters: ask a video instead"
        return Reading(intent, None, problem, understood)
    return Reading(intent, _filters(intent, clock, longer), None, understood)


def read_query(q: str, vocabulary: Vocabulary, today: date | None = None) -> SearchFilters:
    """The filters ``q`` means (``NotUnderstood`` when it cannot be read)."""
    reading = read_text(q, vocabulary, today)
    if reading.filters is None:
        raise NotUnderstood(reading.problem or "not understood", reading.understood)
    return reading.filters


def _intent(rest: str, vocabulary: Vocabulary) -> Intent:
    known = BASE_CLASSES | vocabulary.classes
    intent = parse_question(rest, known, list(vocabulary.zones))
    if intent.kind in {"off_topic", "not_understood"}:
        # A bare text: "GATE 7 after 20 s" (off topic to Ask), or one in capitals only ("EXIT
        # 3", which Ask reads as a leaving and a stray 3): read as "text EXIT 3".
        as_text = parse_question(_READ_AS_TEXT + rest, known, list(vocabulary.zones))
        if as_text.quoted and as_text.kind not in {"off_topic", "not_understood"}:
            return as_text
    return intent


def _filters(intent: Intent, clock: dict[str, Any], longer: float | None) -> SearchFilters:
    subject = intent.subject
    classes: tuple[str, ...] = ()
    if intent.people:
        classes = ("person",)
    elif subject not in {"object", "text", "scene_change"}:
        classes = (subject,)
    events: tuple[str, ...] = ()
    if subject == "scene_change":
        events = ("scene_change",)
    elif intent.action is not None and not (intent.action == "appear" and intent.presence):
        events = (intent.action,)
    if longer is not None:
        events = ("dwell",)
    start_s, end_s = intent.window if intent.window is not None else (None, None)
    return SearchFilters(
        classes=classes,
        text=intent.quoted,
        event_types=events,
        zones=(intent.zone,) if intent.zone else (),
        min_dwell_s=longer,
        start_s=start_s,
        end_s=None if end_s == float("inf") else end_s,
        recorded_after=clock.get("recorded_after"),
        recorded_before=clock.get("recorded_before"),
        sort="relevance" if intent.quoted else "time",
    )


def _clock_window(q: str, today: date) -> tuple[str, dict[str, Any]]:
    """``q`` without its days and clock times, and the recorded-time window they name."""
    days = _DAYS.search(q)
    if days is None:
        return q, {}
    first, last = _day_range(days, today)
    rest = q[: days.start()] + " " + q[days.end() :]
    after, before = _CLOCK_AFTER.search(rest), _CLOCK_BEFORE.search(rest)
    start = datetime.combine(first, time(0), UTC)
    end = datetime.combine(last, time(0), UTC) + timedelta(days=1)
    if after is not None or before is not None:
        if first != last:
            raise NotUnderstood(
                "a clock time goes with one day ('after 22:00 on 2026-11-20'), not a range of days",
                {"recorded_after": to_rfc3339(start), "recorded_before": to_rfc3339(end)},
            )
        if after is not None:
            start = datetime.combine(first, time(int(after[1]), int(after[2])), UTC)
        if before is not None:
            end = datetime.combine(first, time(int(before[1]), int(before[2])), UTC)
        for m in sorted((m for m in (after, before) if m), key=lambda m: -m.start()):
            rest = rest[: m.start()] + " " + rest[m.end() :]
    moments = {"recorded_after": start, "recorded_before": end}
    return rest, {k: v for k, v in moments.items() if v is not None}


def _day_range(days: re.Match[str], today: date) -> tuple[date, date]:
    """The first and last day a day phrase names."""
    on, since, word, count = days.groups()
    if on or since:
        try:
            first = date.fromisoformat(on or since)
        except ValueError:
            raise NotUnderstood(f"{on or since} is not a date", {}) from None
        return first, (first if on else today)
    if count is not None:
        return today - timedelta(days=int(count)), today
    word = " ".join(word.split())
    monday = today - timedelta(days=today.weekday())
    return {
        "today": (today, today),
        "yesterday": (today - timedelta(days=1), today - timedelta(days=1)),
        "this week": (monday, today),
        "last week": (monday - timedelta(days=7), monday - timedelta(days=1)),
    }[word]


def _longer_than(q: str) -> tuple[str, float | None]:
    """``q`` without "over 5 minutes" (a least duration), and that duration in seconds."""
    found = _LONGER.search(q)
    if found is None:
        return q, None
    written = found.group(1).lower().strip()
    if ":" in written:  # mm:ss
        minutes, seconds = written.split(":")
        value = int(minutes) * 60 + float(seconds)
    else:
        number = re.match(r"(\d+(?:\.\d+)?)\s*([a-z]*)", written)
        assert number is not None  # TIME matched it
        value = float(number.group(1)) * (60 if number.group(2).startswith("m") else 1)
    return q[: found.start()] + " " + q[found.end() :], value


def _read_of(intent: Intent) -> dict[str, Any]:
    if intent.kind in {"off_topic", "unsupported"}:
        return {}
    return {k: v for k, v in intent.interpreted().items() if v not in (None, {}, "unknown")}


def _why(intent: Intent, rest: str) -> str:
    if not rest.strip():
        return "nothing to search for beyond the time: name a class, a text or an event"
    if intent.kind == "unsupported":
        return f"no run's detectors can see {intent.unsupported}"
    if intent.kind == "not_understood" and intent.unknown_word:
        return f"the search did not understand {intent.unknown_word!r}"
    return (
        "that does not read as a search of the videos: name a class (people), a text in quotes "
        '("GATE 7"), an event (entered the left zone, stopped over 5 minutes) or a time'
    )
