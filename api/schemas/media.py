"""What ``GET .../media-url`` answers: where a player fetches a video's source."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class MediaUrlPublic(BaseModel):
    """A URL a ``<video>`` element can play without the API key."""

    kind: Literal["stored", "hls"] = Field(
        description="`stored`: the service's copy of an uploaded recording, served with range "
        "requests by a signed URL; `hls`: the video's own HLS playlist (played where the "
        "browser plays HLS natively).",
        examples=["stored"],
    )
    url: str = Field(
        description="Relative to the API for `stored` (it carries its own token: no "
        "`Authorization` header is needed, nor sent by a `<video>`), absolute for `hls`.",
        examples=["/api/media/videos/vid_01m7zbsdnaq33qybzby9qpkjxt/source?token=v1.ten_..."],
    )
    expires_at: str | None = Field(
        description="When a `stored` URL stops working (RFC 3339); ask again after. Null for "
        "`hls`, which is the source's own URL.",
        examples=["2026-11-27T03:00:00Z"],
    )
    content_type: str = Field(description="The media type the URL serves.", examples=["video/mp4"])
