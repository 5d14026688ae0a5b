"""What a workspace search looks for: the structured filters, checked, and what they mean.

The REST query string, the MCP tool's arguments and a free-text query read by ``search.reader``
all become one ``SearchFilters``; ``interpreted()`` says back what was searched, and the engine
(``search.engine``) turns it into one DuckDB query over the tenant's hits.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from storage.artifacts.hits import normalize_text
from ves.clock import to_rfc3339
from ves.errors import ValidationFailed

EVENT_TYPES = (
    "appear",
    "disappear",
    "dwell",
    "enter_zone",
    "exit_zone",
    "scene_change",
    "text_seen",
)
Sort = Literal["time", "relevance"]
TextMatch = Literal["words", "substring", "exact"]
# Words people use for a class, and the class the detectors name it with.
CLASS_ALIASES = {"people": "person", "persons": "person", "faces": "face", "texts": "text"}


def _canonical_class(name: str) -> str:
    name = name.strip().lower()
    return CLASS_ALIASES.get(name, name)


@dataclass(frozen=True)
class SearchFilters:
    """One search. Every filter given must hold for a hit; none given finds every object and
    text of the runs searched.

    Attributes:
        classes: object classes (``person``, ``motion``, ``text``, a YOLO class, ...).
        text: a text read in the video, compared case- and space-insensitively; ``text_match``
            says how: ``words`` (its words in order, not inside longer ones: "GATE 7" finds
            "TO GATE 7" and "GATE7", not "GATE 77"), ``substring`` (anywhere) or ``exact`` (the
            whole text).
        event_types: find events of these types instead of objects and texts.
        zones: zone names a hit was in (an object) or is about (an event).
        min_dwell_s: dwell events at least this long (implies ``event_types=['dwell']``).
        start_s, end_s: the hit overlaps this stretch of the video (seconds).
        recorded_after, recorded_before: the hit overlaps this stretch of clock time (the
            video's ``recorded_at`` plus the hit's time); videos of unknown recorded time never
            match these.
        video_ids, title: only these videos; only videos whose title holds ``title``.
        every_run: every published run, not only each video's newest.
        sort: ``time`` (clock time where known, then video and time in it) or ``relevance``
            (exact text first, then confidence).
    """

    classes: tuple[str, ...] = ()
    text: str | None = None
    text_match: TextMatch = "words"
    event_types: tuple[str, ...] = ()
    zones: tuple[str, ...] = ()
    min_dwell_s: float | None = None
    start_s: float | None = None
    end_s: float | None = None
    recorded_after: datetime | None = None
    recorded_before: datetime | None = None
    video_ids: tuple[str, ...] = ()
    title: str | None = None
    every_run: bool = False
    sort: Sort = "time"

    def checked(self) -> SearchFilters:
        """The filters with classes and zones in canonical form, or ``ValidationFailed``."""
        unknown = [t for t in self.event_types if t not in EVENT_TYPES]
        if unknown:
            raise ValidationFailed(
                f"unknown event type {unknown[0]!r}; known: {', '.join(EVENT_TYPES)}"
            )
        event_types = self.event_types
        if self.min_dwell_s is not None:
            if self.min_dwell_s < 0:
                raise ValidationFailed("min_dwell_s must not be negative")
            if event_types and "dwell" not in event_types:
                raise ValidationFailed("min_dwell_s applies to dwell events: add event=dwell")
            event_types = ("dwell",)
        self._check_windows()
        if self.text is not None and not normalize_text(self.text):
            raise ValidationFailed("text must hold something besides spaces")
        return dataclasses.replace(
            self,
            classes=tuple(dict.fromkeys(_canonical_class(c) for c in self.classes if c.strip())),
            zones=tuple(dict.fromkeys(z.strip().lower() for z in self.zones if z.strip())),
            event_types=tuple(dict.fromkeys(event_types)),
        )

    def _check_windows(self) -> None:
        for name in ("start_s", "end_s"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValidationFailed(f"{name} must not be negative")
        if self.start_s is not None and self.end_s is not None and self.end_s < self.start_s:
            raise ValidationFailed("end_s is before start_s")
        for name in ("recorded_after", "recorded_before"):
            value = getattr(self, name)
            if value is not None and value.tzinfo is None:
                raise ValidationFailed(f"{name} needs its UTC offset (e.g. 2026-11-20T22:00:00Z)")
        after, before = self.recorded_after, self.recorded_before
        if after is not None and before is not None and before < after:
            raise ValidationFailed("recorded_before is before recorded_after")

    @property
    def needle(self) -> str | None:
        """The text as it is compared (``storage.artifacts.hits.normalize_text``)."""
        return normalize_text(self.text) if self.text is not None else None

    @property
    def words_pattern(self) -> str | None:
        """An RE2 pattern of ``text`` as whole words: its characters in order with any spaces
        between, any case, with no letter or digit right before or after."""
        if self.needle is None:
            return None
        chars = r"\s*".join(re.escape(c) for c in self.needle)
        return rf"(?i)(?:^|[^\pL\pN]){chars}(?:$|[^\pL\pN])"

    @property
    def finds(self) -> str:
        """What kind of hit this finds: ``event``, ``text`` or ``object`` (objects and texts)."""
        if self.event_types:
            return "event"
        if self.text is not None or self.classes == ("text",):
            return "text"
        return "object"

    def interpreted(self) -> dict[str, Any]:
        """The filters as searched, for the client (only those given)."""
        shown: dict[str, Any] = {
            "finds": self.finds,
            "classes": list(self.classes) or None,
            "text": self.text,
            "text_match": self.text_match if self.text else None,
            "event_types": list(self.event_types) or None,
            "zones": list(self.zones) or None,
            "min_dwell_s": self.min_dwell_s,
            "start_s": self.start_s,
            "end_s": self.end_s,
            "recorded_after": _moment(self.recorded_after),
            "recorded_before": _moment(self.recorded_before),
            "video_ids": list(self.video_ids) or None,
            "title": self.title,
            "run": "all" if self.every_run else "latest",
            "sort": self.sort,
        }
        return {k: v for k, v in shown.items() if v is not None}

    def fingerprint(self) -> str:
        """A short digest of the filters: a cursor is only good for the search it came from."""
        blob = json.dumps(self.interpreted(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def _moment(value: datetime | None) -> str | None:
    return to_rfc3339(value) if value is not None else None
