"""Questions put to the whole workspace ("Which videos show GATE 7?", "How many people were seen
across all videos yesterday?"), answered from the search's hits with Ask's guardrails.

The question is read as a search (``search.reader``); its hits are the only evidence. Two
shapes are answered: where and when something was seen (per video, each time cited), and how
many things were seen (per video and in all, each counted thing cited once). Every claim cites
evidence spans by video, run and span id, and a time is only said inside the span that backs it
(checked against the runs' evidence before it is said); a question that cannot be read, about
what no detector sees, or that nothing backs is refused with a reason, and a refusal says what
was searched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from ask.identities import APPEARANCES, counting_of
from ask.types import fmt_time
from search.engine import MAX_LIMIT, SearchEngine, SearchPage
from search.filters import SearchFilters
from search.reader import Reading, Vocabulary, read_text
from storage.artifacts.layout import run_key
from storage.catalog.search_index import vocabulary
from ves.errors import BlobNotFound, NotReady

MAX_HITS = 10_000  # a question whose evidence is larger is refused: narrow it by time or video
MAX_LISTED = 10  # videos named in an answer (the rest are counted and still cited)
_SHOWN = {"list", "exists", "when", "first", "last", "text", "unknown", "zone", "between"}
_TOLERANCE_S = 0.5  # a stated time may sit this far outside its span (rounding, sampling)


@dataclass(frozen=True)
class WorkspaceCitation:
    """An evidence span of one video's run (operation 6 of that video)."""

    video_id: str
    run_id: str
    evidence_id: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class WorkspaceClaim:
    """One sentence, the spans that carry it, and the times (in its video) it states."""

    text: str
    citations: tuple[WorkspaceCitation, ...]
    times: tuple[float, ...] = ()


@dataclass(frozen=True)
class WorkspaceAnswer:
    question: str
    answer: str
    grounded: bool
    confidence: float
    citations: tuple[WorkspaceCitation, ...]
    refusal_reason: str | None
    interpreted: dict[str, Any] | None
    searched: dict[str, int]


def ask_workspace(
    engine: SearchEngine, tenant_id: str, question: str, today: date | None = None
) -> WorkspaceAnswer:
    """The answer to ``question`` over the tenant's newest published runs."""
    classes, zones = vocabulary(engine.index.catalog, tenant_id)
    reading = read_text(question, Vocabulary(classes, tuple(sorted(zones))), today)
    nothing = {"runs": 0, "videos": 0, "read": 0}
    if reading.filters is None:
        return _refused(question, reading.refusal, reading.problem or "", reading, nothing)
    if reading.intent.kind not in _SHOWN | {"count"}:
        return _refused(question, "not_understood", _HINT, reading, nothing)
    hits, page = _all_hits(engine, tenant_id, reading.filters)
    searched = {"runs": page.runs, "videos": page.videos, "read": page.read}
    if hits is None:
        why = f"more than {MAX_HITS} things match: narrow the question by time or video"
        return _refused(question, "not_understood", why, reading, searched)
    spans = _span_times(engine, tenant_id, hits)
    if reading.intent.kind == "count":
        claims = _counted(hits, reading, question)
    else:
        claims = _where(hits, reading)
    claims = [c for c in claims if backed(c, spans)]
    if not claims:
        return _refused(question, "no_evidence", _nothing(reading, page), reading, searched)
    cited = tuple(dict.fromkeys(c for claim in claims for c in claim.citations))
    held = [h["confidence"] for h in hits if _cite(h) in cited]
    return WorkspaceAnswer(
        question=question,
        answer=" ".join(c.text for c in claims),
        grounded=True,
        confidence=sum(held) / len(held) if held else 0.0,
        citations=tuple(spans.get(_key(c), c) for c in cited),
        refusal_reason=None,
        interpreted=reading.filters.interpreted() | {"intent": reading.intent.kind},
        searched=searched,
    )


_HINT = (
    "Across the workspace I answer which videos show something and when, and how many things "
    "were seen; ask one video for orders, durations and colours."
)


def _refused(
    question: str, reason: str, why: str, reading: Reading, searched: dict[str, int]
) -> WorkspaceAnswer:
    interpreted = (
        reading.filters.interpreted() if reading.filters is not None else reading.understood
    )
    return WorkspaceAnswer(question, why, False, 0.0, (), reason, interpreted or None, searched)


def _all_hits(
    engine: SearchEngine, tenant_id: str, filters: SearchFilters
) -> tuple[list[dict[str, Any]] | None, SearchPage]:
    """Every hit (None past ``MAX_HITS``) and the first page (what was searched)."""
    first = page = engine.search(tenant_id, filters, limit=MAX_LIMIT)
    hits = list(page.hits)
    while page.next_cursor is not None:
        if len(hits) >= MAX_HITS:
            return None, first
        page = engine.search(tenant_id, filters, limit=MAX_LIMIT, cursor=page.next_cursor)
        hits += page.hits
    return hits, first


def _cite(hit: dict[str, Any]) -> WorkspaceCitation:
    """The hit's first span (its times filled in from the run's evidence by ``_span_times``)."""
    ev = hit["evidence_ids"][0]
    return WorkspaceCitation(hit["video_id"], hit["run_id"], ev, hit["start_s"], hit["end_s"])


def _key(c: WorkspaceCitation) -> tuple[str, str]:
    return c.run_id, c.evidence_id


def _span_times(
    engine: SearchEngine, tenant_id: str, hits: Sequence[dict[str, Any]]
) -> dict[tuple[str, str], WorkspaceCitation]:
    """The cited spans as the runs' evidence has them (a span a run lacks is left out)."""
    runs = {(h["video_id"], h["run_id"]) for h in hits if h["evidence_ids"]}
    found: dict[tuple[str, str], WorkspaceCitation] = {}
    for video_id, run_id in sorted(runs):
        key = f"{run_key(tenant_id, video_id, run_id)}/evidence.parquet"
        try:
            table = engine.store.read_parquet(key, columns=["evidence_id", "start_s", "end_s"])
        except (BlobNotFound, NotReady):
            continue
        for span in table.to_pylist():
            cite = WorkspaceCitation(
                video_id, run_id, span["evidence_id"], span["start_s"], span["end_s"]
            )
            found[_key(cite)] = cite
    return found


def backed(claim: WorkspaceClaim, spans: dict[tuple[str, str], WorkspaceCitation]) -> bool:
    """Every citation is a span of its run and every time said falls inside one of them."""
    held = [spans.get(_key(c)) for c in claim.citations]
    if not held or any(s is None for s in held):
        return False
    return all(
        any(s.start_s - _TOLERANCE_S <= t <= s.end_s + _TOLERANCE_S for s in held if s)
        for t in claim.times
    )


_DOING = {
    "appear": "coming into view",
    "disappear": "leaving view",
    "enter_zone": "entering a zone",
    "exit_zone": "leaving a zone",
    "dwell": "stopped",
    "scene_change": "a scene change",
    "text_seen": "a text shown",
}


def _what(reading: Reading, *, doing: bool = True) -> str:
    """What the question is about, in words: a text, a class, what it did."""
    filters = reading.filters
    assert filters is not None
    if filters.text:
        return f'"{filters.text}"'
    names = {"person": "people", "motion": "moving things", "face": "faces"}
    who = " or ".join(names.get(c, c) for c in filters.classes)
    did = " or ".join(_DOING.get(t, t) for t in filters.event_types) if doing else ""
    if who and did and "scene_change" not in filters.event_types:
        return f"{who} {did}"
    return who or did or "something"


def _by_video(hits: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for hit in hits:
        grouped.setdefault(hit["video_id"], []).append(hit)
    return grouped


def _where(hits: Sequence[dict[str, Any]], reading: Reading) -> list[WorkspaceClaim]:
    """Per video: its title and when, each time cited by its hit's span."""
    grouped = _by_video(hits)
    videos = "video" if len(grouped) == 1 else "videos"
    claims = [
        WorkspaceClaim(
            f"{_what(reading)} was seen in {len(grouped)} {videos}:",
            tuple(_cite(h) for h in hits),
        )
    ]
    for shown, found in enumerate(grouped.values()):
        if shown == MAX_LISTED:
            rest = list(grouped.values())[MAX_LISTED:]
            more = tuple(_cite(h) for hs in rest for h in hs)
            claims.append(WorkspaceClaim(f"and {len(rest)} more videos.", more))
            break
        times = "; ".join(f"{fmt_time(h['start_s'])} to {fmt_time(h['end_s'])}" for h in found[:5])
        extra = f" and {len(found) - 5} more times" if len(found) > 5 else ""
        said = tuple(t for h in found[:5] for t in (h["start_s"], h["end_s"]))
        claims.append(
            WorkspaceClaim(
                f"{found[0]['title']} ({found[0]['video_id']}): {times}{extra}.",
                tuple(_cite(h) for h in found),
                said,
            )
        )
    return claims


def _counted(
    hits: Sequence[dict[str, Any]], reading: Reading, question: str
) -> list[WorkspaceClaim]:
    """How many things per video and in all: identities (a thing seen again counts once in
    its video) unless the question asks how many times; one cited span per counted thing."""
    appearances = counting_of(question.lower()) == APPEARANCES
    if reading.filters is not None and reading.filters.finds == "object":
        hits = [h for h in hits if h["kind"] == "object"]  # "how many objects": not texts
    per_video: list[tuple[dict[str, Any], list[WorkspaceCitation]]] = []
    for found in _by_video(hits).values():
        firsts: dict[str, dict[str, Any]] = {}
        for hit in sorted(found, key=lambda h: (h["start_s"], h["hit_id"])):
            who = hit["hit_id"] if appearances else (hit.get("identity_id") or hit["hit_id"])
            firsts.setdefault(who, hit)
        per_video.append((found[0], [_cite(h) for h in firsts.values()]))
    total = sum(len(c) for _, c in per_video)
    what = _what(reading, doing=not appearances)
    verb = "was" if total == 1 else "were"
    if appearances:
        head = f"{what} came into view {total} {'time' if total == 1 else 'times'}"
    elif what == "something":
        head = f"{total} {'thing' if total == 1 else 'things'} {verb} seen"
    else:
        head = f"{total} {'person' if what == 'people' and total == 1 else what} {verb} seen"
    listed = ", ".join(f"{first['title']} {len(c)}" for first, c in per_video[:MAX_LISTED])
    more = f" and {len(per_video) - MAX_LISTED} more" if len(per_video) > MAX_LISTED else ""
    videos = "video" if len(per_video) == 1 else "videos"
    every = tuple(c for _, cites in per_video for c in cites)
    return [WorkspaceClaim(f"{head} across {len(per_video)} {videos}: {listed}{more}.", every)]


def _nothing(reading: Reading, page: SearchPage) -> str:
    return (
        f"Nothing matches {_what(reading)} in the workspace: searched the newest runs of "
        f"{page.videos} videos ({page.read} could hold it and were read)."
    )
