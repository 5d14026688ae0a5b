"""The catalog's sliding-window rate limit: exact counts, honest Retry-After, shared by all."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from storage.catalog.database import Catalog
from storage.catalog.rate_limits import RateLimit, RateLimiter
from ves.errors import RateLimited

DEMO = RateLimit("demo", 3, 600.0)


def _fill(limiter: RateLimiter, rule: RateLimit, key: str, times: list[float]) -> None:
    for at in times:
        limiter.acquire(rule, key, now=at)


def _rows(catalog: Catalog) -> list[tuple[str, float]]:
    with catalog.read() as conn:
        rows = (
            conn.execute(text("SELECT bucket, at FROM rate_events ORDER BY bucket, at"))
            .mappings()
            .all()
        )
    return [(row["bucket"], row["at"]) for row in rows]


@pytest.mark.parametrize(
    ("rule", "events", "now", "retry_after_s"),
    [
        (DEMO, [0.0, 10.0, 20.0], 30.0, 570),  # the oldest leaves at 600
        (DEMO, [0.0, 10.0, 20.0], 599.2, 1),  # 0.8 s rounds up, never down to 0
        (RateLimit("demo", 1, 10.0), [0.5], 0.6, 10),  # 9.9 s rounds up
        (RateLimit("demo", 1, 10.0), [0.0], 9.999999, 1),  # at least one second
    ],
)
def test_a_full_window_refuses_until_its_oldest_event_leaves(
    catalog: Catalog, rule: RateLimit, events: list[float], now: float, retry_after_s: int
) -> None:
    limiter = RateLimiter(catalog)
    _fill(limiter, rule, "198.51.100.7", events)
    with pytest.raises(RateLimited) as refused:
        limiter.acquire(rule, "198.51.100.7", now=now)
    assert refused.value.retry_after_s == retry_after_s
    assert limiter.count(rule, "198.51.100.7", now=now) == len(events)  # refusals not recorded


def test_an_event_leaves_the_window_exactly_window_s_later(catalog: Catalog) -> None:
    limiter = RateLimiter(catalog)
    _fill(limiter, DEMO, "a", [0.0, 1.0, 2.0])
    limiter.acquire(DEMO, "a", now=600.0)  # the event at 0 just left
    with pytest.raises(RateLimited):
        limiter.acquire(DEMO, "a", now=600.5)


def test_a_lowered_limit_waits_for_enough_events_to_leave(catalog: Catalog) -> None:
    limiter = RateLimiter(catalog)
    _fill(limiter, DEMO, "a", [0.0, 1.0, 2.0])
    with pytest.raises(RateLimited) as refused:
        limiter.acquire(RateLimit("demo", 2, 600.0), "a", now=3.0)
    assert refused.value.retry_after_s == 598  # two must leave: the one at 1 s goes at 601


def test_keys_and_scopes_are_counted_apart(catalog: Catalog) -> None:
    limiter = RateLimiter(catalog)
    _fill(limiter, DEMO, "a", [0.0, 1.0, 2.0])
    limiter.acquire(DEMO, "b", now=3.0)
    limiter.acquire(RateLimit("other", 3, 600.0), "a", now=3.0)
    assert limiter.count(DEMO, "a", now=3.0) == 3
    assert limiter.count(DEMO, "b", now=3.0) == 1


def test_events_that_left_the_window_are_pruned_for_every_key_of_the_scope(
    catalog: Catalog,
) -> None:
    limiter = RateLimiter(catalog)
    other = RateLimit("other", 3, 10_000.0)
    _fill(limiter, DEMO, "a", [0.0, 1.0])
    limiter.acquire(DEMO, "b", now=2.0)
    limiter.acquire(other, "a", now=2.0)
    limiter.acquire(DEMO, "c", now=700.0)
    assert _rows(catalog) == [("demo:c", 700.0), ("other:a", 2.0)]


def test_parallel_requests_never_pass_the_limit(catalog: Catalog) -> None:
    rule = RateLimit("demo", 4, 600.0)
    start = threading.Barrier(12)
    outcomes: list[bool] = []

    def attempt() -> None:
        limiter = RateLimiter(catalog)  # each its own connections, like separate processes
        start.wait()
        try:
            limiter.acquire(rule, "a")
        except RateLimited:
            outcomes.append(False)
        else:
            outcomes.append(True)

    threads = [threading.Thread(target=attempt) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == [False] * 8 + [True] * 4
    assert len(_rows(catalog)) == 4


@pytest.mark.parametrize(
    ("scope", "limit", "window_s"), [("demo", 0, 600.0), ("demo", 3, 0.0), ("de:mo", 3, 600.0)]
)
def test_a_rule_that_cannot_work_is_refused(scope: str, limit: int, window_s: float) -> None:
    with pytest.raises(ValueError, match="rate limit"):
        RateLimit(scope, limit, window_s)
