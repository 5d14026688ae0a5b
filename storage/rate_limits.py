"""Sliding-window rate limits kept in the catalog, so every API process shares them.

Each allowed request is one row of ``rate_events`` (``bucket``, ``at`` in Unix seconds). A bucket
reads ``<scope>:<key>`` (e.g. ``demo:203.0.113.7``). Counting the bucket's recent events and
recording a new one happen in ONE ``BEGIN IMMEDIATE`` transaction: writers queue on the catalog's
write lock, so requests racing in parallel, in one process or several, can never together pass the
limit. The same transaction prunes the scope's events that left the window, so the table stays as
small as the traffic of one window.
"""

from __future__ import annotations

import math
import sqlite3
import time
from dataclasses import dataclass

from storage.catalog import Catalog
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
        with self.catalog.write() as conn:
            _prune(conn, rule, at)
            wait_s = _wait_before_next(conn, rule, key, at)
            if wait_s is None:
                conn.execute(
                    "INSERT INTO rate_events (bucket, at) VALUES (?, ?)", (rule.bucket(key), at)
                )
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
            row = conn.execute(
                "SELECT COUNT(*) FROM rate_events WHERE bucket = ? AND at > ?",
                (rule.bucket(key), at - rule.window_s),
            ).fetchone()
        return int(row[0])


def _prune(conn: sqlite3.Connection, rule: RateLimit, at: float) -> None:
    """Delete the scope's events that left the window (every key's, not only this one's).

    ``scope:`` up to ``scope;`` (';' follows ':' in ASCII) is exactly the scope's buckets, as an
    index range rather than a LIKE pattern.
    """
    conn.execute(
        "DELETE FROM rate_events WHERE bucket >= ? AND bucket < ? AND at <= ?",
        (f"{rule.scope}:", f"{rule.scope};", at - rule.window_s),
    )


def _wait_before_next(conn: sqlite3.Connection, rule: RateLimit, key: str, at: float) -> int | None:
    """None when one more event fits in the window; else whole seconds until one does."""
    times = [
        float(row[0])
        for row in conn.execute(
            "SELECT at FROM rate_events WHERE bucket = ? AND at > ? ORDER BY at",
            (rule.bucket(key), at - rule.window_s),
        )
    ]
    if len(times) < rule.limit:
        return None
    # One more fits once all but limit - 1 of them have left (usually just the oldest; more when
    # the limit was lowered while events were in the window).
    leaving = times[len(times) - rule.limit]
    return max(1, math.ceil(leaving + rule.window_s - at))
