"""Standard Webhooks signatures (https://www.standardwebhooks.com): what a receiver checks.

A delivery carries three headers: ``webhook-id`` (the delivery's id, the same on every retry, so
a receiver can drop duplicates), ``webhook-timestamp`` (Unix seconds of this attempt) and
``webhook-signature``: ``v1,`` then the base64 HMAC-SHA256 of ``"{id}.{timestamp}.{body}"`` keyed
by the secret's bytes (the base64 after ``whsec_``). Several space-separated signatures may be
sent (key rotation); a receiver accepts the delivery when one of them matches.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"  # noqa: S105 (the prefix, not a secret)
_SECRET_BYTES = 32


def new_secret() -> str:
    """A new endpoint secret: ``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(_SECRET_BYTES)).decode()


def secret_bytes(secret: str) -> bytes:
    """The key bytes of a ``whsec_`` secret."""
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def sign(secret: str, delivery_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header's value for one attempt (``v1,<base64>``)."""
    signed = f"{delivery_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_bytes(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(secret: str, delivery_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three Standard Webhooks headers of one attempt, and its content type."""
    return {
        "webhook-id": delivery_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, delivery_id, timestamp, body),
        "content-type": "application/json",
    }


def verify(secret: str, delivery_id: str, timestamp: int, body: bytes, signatures: str) -> bool:
    """Whether one of the header's signatures is this body's (compared in constant time)."""
    expected = sign(secret, delivery_id, timestamp, body)
    return any(hmac.compare_digest(expected, given) for given in signatures.split())
