"""What ``GET .../media-url`` answers: where a player fetches a video."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class MediaUrlPublic(BaseModel):
    """A URL a ``<video>`` element can play without the API key."""

    kind: Literal["review", "stored", "hls"] = Field(
        description="`review`: the REVIEW COPY of the video's newest succeeded run (H.264 in "
        "MP4, which every browser plays), served with range requests by a signed URL; it is "
        "made for playing, the original stays the evidence; `stored`: the service's copy of an "
        "uploaded recording as uploaded (before a run made a review copy); `hls`: the video's "
        "own HLS playlist (played where the browser plays HLS natively).",
        examples=["review"],
    )
    url: str = Field(
        description="Relative to the API for `review` and `stored` (it carries its own token: "
        "no `Authorization` header is needed, nor sent by a `<video>`), absolute for `hls`.",
        examples=[
            "/api/media/videos/vid_01m7zbsdnaq33qybzby9qpkjxt/runs/run_01m7zc0q1g2h3j4k5m6n7p8q9r"
            "/review?token=v1.ten_..."
        ],
    )
    expires_at: str | None = Field(
        description="When a `review` or `stored` URL stops working (RFC 3339); ask again "
        "after. Null for `hls`, which is the source's own URL.",
        examples=["2026-11-27T03:00:00Z"],
    )
    content_type: str = Field(description="The media type the URL serves.", examples=["video/mp4"])
    review_copy: bool = Field(
        False,
        description="True when the URL serves a review copy (`kind` `review`): re-encoded or "
        "re-muxed for playing, so its bytes and hashes are not the original's. Evidence spans, "
        "exports and `ves verify` refer to the original (`original_sha256`).",
        examples=[True],
    )
    run_id: str | None = Field(
        None, description="The run whose review copy this is (`review` only).", examples=[None]
    )
    original_sha256: str | None = Field(
        None,
        description="The sha256 of the original recording: the one a review copy was made "
        "from, or the stored upload itself; null when unknown (`hls`).",
        examples=["9f2c4e0b7d1a35c8e6f4b2a9d0c7e1f3a5b8c2d4e6f8a0b1c3d5e7f9a2b4c6d8"],
    )
