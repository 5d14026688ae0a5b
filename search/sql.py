"""The one SQL a search runs: the filters as a WHERE clause over hits, the sort, the page.

Kept as SQL text with parameters (never values pasted in), so the query a search ran can be read
and compared with what an analyst writes in ``ves sql`` over the ``hits`` view.
"""

from __future__ import annotations

from typing import Any

from search.filters import SearchFilters

# Clock time where the video's recorded time is known (those first), then the video's own time.
_TIME_ORDER = (
    "m.recorded_epoch IS NULL, m.recorded_epoch + h.start_s, h.video_id, h.run_id, h.start_s, "
    "h.hit_id"
)


def where_clause(filters: SearchFilters) -> tuple[list[str], dict[str, Any]]:
    """The conditions ``filters`` put on a hit ``h`` (and its run's ``m``), with parameters."""
    terms: list[str] = []
    params: dict[str, Any] = {}
    finds = filters.finds
    if finds == "event":
        terms.append("h.kind = 'event' AND list_contains($event_types, h.event_type)")
        params["event_types"] = list(filters.event_types)
    elif finds == "text":
        terms.append("h.kind = 'text'")
    else:
        terms.append("h.kind IN ('object', 'text')")
    if filters.classes:
        terms.append("list_contains($classes, h.class)")
        params["classes"] = list(filters.classes)
    if filters.needle is not None:
        terms.append(_text_term(filters, params))
    if filters.zones:
        terms.append("list_has_any(h.zones, $zones)")
        params["zones"] = list(filters.zones)
    if filters.min_dwell_s is not None:
        terms.append("h.end_s - h.start_s >= $min_dwell_s")
        params["min_dwell_s"] = filters.min_dwell_s
    if filters.start_s is not None:
        terms.append("h.end_s >= $start_s")
        params["start_s"] = filters.start_s
    if filters.end_s is not None:
        terms.append("h.start_s <= $end_s")
        params["end_s"] = filters.end_s
    if filters.recorded_after is not None:
        terms.append("m.recorded_epoch + h.end_s >= $after")
        params["after"] = filters.recorded_after.timestamp()
    if filters.recorded_before is not None:
        terms.append("m.recorded_epoch + h.start_s <= $before")
        params["before"] = filters.recorded_before.timestamp()
    return terms, params


def _text_term(filters: SearchFilters, params: dict[str, Any]) -> str:
    """The condition on the hit's text, as ``text_match`` says (its parameters added)."""
    params["needle"] = filters.needle
    if filters.text_match == "exact":
        return "h.text_norm = $needle"
    if filters.text_match == "substring":
        return "contains(h.text_norm, $needle)"
    params["words"] = filters.words_pattern
    return "regexp_matches(h.text, $words)"


def order_clause(filters: SearchFilters) -> str:
    """Time order, or relevance (a text matched whole first, then confidence) then time."""
    if filters.sort == "time":
        return _TIME_ORDER
    exact_first = "h.text_norm = $needle DESC NULLS LAST, " if filters.needle is not None else ""
    return f"{exact_first}h.confidence DESC, {_TIME_ORDER}"


def keyed(source: str) -> str:
    """The rows of ``source`` whose video, run and hit ids are in ``keys`` (a first read's)."""
    return f"SELECT s.* FROM ({source}) AS s SEMI JOIN keys USING (video_id, run_id, hit_id)"  # noqa: S608


def hits_query(
    source: str, filters: SearchFilters, count: int, offset: int, *, keys_only: bool = False
) -> tuple[str, dict[str, Any]]:
    """The search over ``source`` (a query giving hits rows with ``video_id`` and ``run_id``)
    joined with ``meta`` (each run's title and recorded time): ``count`` rows from ``offset``,
    whole or (``keys_only``) only their video, run and hit ids (so only the columns the
    filters and the order name are read)."""
    terms, params = where_clause(filters)
    shown = (
        "h.video_id, h.run_id, h.hit_id"
        if keys_only
        else "h.* EXCLUDE (video_id, run_id), h.video_id, h.run_id, m.title, m.recorded_epoch"
    )
    # Values are parameters; ``source`` and the terms are this module's own text.
    sql = (
        f"SELECT {shown} "  # noqa: S608
        f"FROM ({source}) AS h JOIN meta AS m ON m.video_id = h.video_id AND m.run_id = h.run_id "
        f"WHERE {' AND '.join(terms)} ORDER BY {order_clause(filters)} "
        "LIMIT $count OFFSET $offset"
    )
    named = params | {"count": count, "offset": offset}
    return sql, {k: v for k, v in named.items() if f"${k}" in sql}  # DuckDB refuses unused ones
