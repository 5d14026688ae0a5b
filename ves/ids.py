"""Opaque, prefixed, time-ordered ids (``vid_``, ``run_``, ``ten_`` ...).

The first 10 characters after the prefix encode the creation time in milliseconds (Crockford
base32), so ids sort by creation time; that makes "newest first" pagination a plain ``ORDER BY id``.
"""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case
_TIME_CHARS = 10
_RANDOM_CHARS = 16


def _encode(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        value, digit = divmod(value, 32)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


def new_id(prefix: str) -> str:
    """A new id such as ``vid_01jd3k...``: ``prefix``, an underscore, time then randomness."""
    millis = time.time_ns() // 1_000_000
    randomness = secrets.randbits(5 * _RANDOM_CHARS)
    return f"{prefix}_{_encode(millis, _TIME_CHARS)}{_encode(randomness, _RANDOM_CHARS)}"


def is_id(value: str, prefix: str) -> bool:
    """Whether ``value`` has the shape of an id made by ``new_id(prefix)``."""
    head, _, body = value.partition("_")
    return (
        head == prefix
        and len(body) == _TIME_CHARS + _RANDOM_CHARS
        and all(c in _ALPHABET for c in body)
    )
