"""Signed media URLs: how a browser's ``<video src>`` fetches a stored source without the API key.

A ``<video>`` element cannot send ``Authorization: Bearer``, and an API key must never sit in a
URL (it would end up in logs and history). So an authenticated call hands out a token that
grants one thing: reading one video's stored source, for the tenant that asked, until it
expires. The token is ``v1.<tenant_id>.<expires>.<mac>``: ``expires`` in Unix seconds, ``mac``
the unpadded base64url HMAC-SHA256 of ``v1``, the tenant, the video and ``expires``, keyed by a
secret derived from the service's signing key (``SigningKey.derive_secret``), which every
machine of a deployment already shares. The video id is not in the token but in the path it is
checked against, so a token cannot be moved to another video.

A token grants one ``scope`` of the video: its stored source (``SOURCE``, whose MAC is the one
above) or one run's review copy (``review_scope``: the run id joins the MAC), so that a source
URL does not open a review copy, nor one run's review URL another run's copy.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass

from ves.errors import Forbidden

PURPOSE = "media-url v1"
"""What ``SigningKey.derive_secret`` derives the HMAC key for."""
_VERSION = "v1"
SOURCE = "source"
"""The scope of a stored source's URL (its MAC is the one tokens had before scopes)."""


def review_scope(run_id: str) -> str:
    """The scope of a URL of ``run_id``'s review copy."""
    return f"review {run_id}"


@dataclass(frozen=True)
class MediaGrant:
    """What a valid token grants: ``tenant_id``'s read of the video until ``expires`` (Unix s)."""

    tenant_id: str
    expires: int


def _mac(secret: bytes, tenant_id: str, video_id: str, expires: int, scope: str) -> str:
    message = f"{_VERSION}\n{tenant_id}\n{video_id}\n{expires}"
    if scope != SOURCE:
        message += f"\n{scope}"
    digest = hmac.new(secret, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def sign_media_token(
    secret: bytes, tenant_id: str, video_id: str, expires: int, scope: str = SOURCE
) -> str:
    """The token that lets ``tenant_id`` read ``scope`` of ``video_id`` until ``expires``."""
    mac = _mac(secret, tenant_id, video_id, expires, scope)
    return f"{_VERSION}.{tenant_id}.{expires}.{mac}"


def check_media_token(
    secret: bytes, token: str, video_id: str, now: float, scope: str = SOURCE
) -> MediaGrant:
    """The grant ``token`` carries for ``scope`` of ``video_id`` at ``now`` (Unix s).

    Raises:
        Forbidden: a token that does not parse, whose MAC is not this video's and scope's, or
            expired.
    """
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != _VERSION or not parts[2].isdigit():
        raise Forbidden("the media token is not one this service made")
    _, tenant_id, expires_text, mac = parts
    expires = int(expires_text)
    if not hmac.compare_digest(mac, _mac(secret, tenant_id, video_id, expires, scope)):
        raise Forbidden("the media token is not valid for this video")
    if expires <= now:
        raise Forbidden("the media URL expired; ask for a new one (GET .../media-url)")
    return MediaGrant(tenant_id, expires)
