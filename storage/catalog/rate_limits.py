"""Sliding-window rate limits kept in the catalog, so every API process shares them.

Each allowed request is one row of ``rate_events`` (``bucket``, ``at`` in Unix seconds). A bucket
reads ``<scope>:<key>`` (e.g. ``demo:203.0.113.7``). Counting the bucket's recent events and
recording a new one happen in ONE write transaction, so requests racing in parallel, in one
process or several, can never together pass the limit. The same transaction prunes the scope's
events that left the window, so the table stays as small as the traffic of one window.

On SQLite the write lock serialises the transactions. On PostgreSQL they take an advisory lock
on the scope (``Catalog.write(lock=scope)``): a lock on the bucket alone would serialise the
count, but two buckets' prunes could then delete the same old rows in different orders and
deadlock. Rate-limited traffic is small (the demo's sign-ups), so one queue per scope is cheap.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, select

from storage.catalog.database import Catalog
from storage.catalog.tables import rate_events
from ves.errors import RateLimited


@dataclass(frozen=True)
class RateLimit:
    """At most ``limit`` events per ``window_s`` seconds in each bucket of ``scope``."""

    scope: str
    limit: int
    window_s: float

    def __post_init__(self) -> None:
        if self.limit < 1 or self.window_s <= 0:
            raise ValueError(f"a rate limit needs limit >= 1 and window_s > 0, not {self}")
        if ":" in self.scope:
            raise ValueError(f"a rate limit's scope must not contain ':' ({self.scope!r})")

    def bucket(self, key: str) -> str:
        """The bucket of ``key`` (a client address, say) in this scope."""
        return f"{self.scope}:{key}"


class RateLimiter:
    """Check-and-record of rate-limited events in the catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def acquire(self, rule: RateLimit, key: str, *, now: float | None = None) -> None:
        """Record one event for ``key`` if its window has room.

        Args:
            rule: the limit and its window.
            key: what is limited (e.g. the client address).
            now: the time in Unix seconds (tests pass it; wall-clock time by default, because
                several processes must agree on it).

        Raises:
            RateLimited: the window is full; ``retry_after_s`` is the whole seconds (at least 1)
                until enough events leave it for one more to fit.
        """
        at = time.time() if now is None else now
        with self.catalog.write(lock=f"rate:{rule.scope}") as conn:
            _prune(conn, rule, at)
            wait_s = _wait_before_next(conn, rule, key, at)
            if wait_s is None:
                conn.execute(rate_events.insert().values(bucket=rule.bucket(key), at=float(at)))
        if wait_s is not None:  # raised after the commit, so the pruning is kept
            raise RateLimited(
                f"at most {rule.limit} requests per {rule.window_s:g} s from one client; "
                f"retry in {wait_s} s",
                retry_after_s=wait_s,
            )

    def count(self, rule: RateLimit, key: str, *, now: float | None = None) -> int:
        """The events of ``key`` still inside the window."""
        at = time.time() if now is None else now
        with self.catalog.read() as conn:
            count = conn.execute(
                select(func.count()).where(*_in_window(rule, key, at))
            ).scalar_one()
        return int(count)


def _in_window(rule: RateLimit, key: str, at: float) -> tuple[Any, ...]:
    """The conditions of ``key``'s events still inside the window at ``at``."""
    return (rate_events.c.bucket == rule.bucket(key), rate_events.c.at > at - rule.window_s)


def _prune(conn: Connection, rule: RateLimit, at: float) -> None:
    """Delete the scope's events that left the window (every key's, not only this one's).

    ``scope:`` up to ``scope;`` (';' follows ':' in ASCII) is exactly the scope's buckets, as an
    index range rather than a LIKE pattern.
    """
    bucket = rate_events.c.bucket
    conn.execute(
        delete(rate_events).where(
            bucket >= f"{rule.scope}:",
            bucket < f"{rule.scope};",
            rate_events.c.at <= at - rule.window_s,
        )
    )


def _wait_before_next(conn: Connection, rule: RateLimit, key: str, at: float) -> int | None:
    """None when one more event fits in the window; else whole seconds until one does."""
    query = select(rate_events.c.at).where(*_in_window(rule, key, at)).order_by(rate_events.c.at)
    times = [float(value) for value in conn.execute(query).scalars()]
    if len(times) < rule.limit:
        return None
    # One more fits once all but limit - 1 of them have left (usually just the oldest; more when
    # the limit was lowered while events were in the window).
    leaving = times[len(times) - rule.limit]
    return max(1, math.ceil(leaving + rule.window_s - at))
