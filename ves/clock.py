"""Wall-clock time as RFC 3339 UTC strings (``*_at`` fields)."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


def to_rfc3339(moment: datetime) -> str:
    """``2026-11-21T12:00:00.123Z``: millisecond precision, always UTC."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_rfc3339() -> str:
    """The current time as an RFC 3339 UTC string."""
    return to_rfc3339(utc_now())


def from_rfc3339(text: str) -> datetime:
    """The moment an RFC 3339 string (as ``to_rfc3339`` writes it) names."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
