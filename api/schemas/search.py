"""Response models of the workspace search (``GET /api/product/search``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ves.clock import to_rfc3339

HitKind = Literal["object", "text", "event"]


class SearchHit(BaseModel):
    """One thing found: an object, a text read in the video, or an event, in one video's run,
    with the evidence spans to cite it by (as Ask cites) and a thumbnail."""

    model_config = ConfigDict(
        populate_by_name=True,
        json_schema_extra={
            "examples": [
                {
                    "hit_id": "obj_0001",
                    "kind": "text",
                    "video_id": "vid_01jd3k8m2qa7x4r5t6y7v8w9z0",
                    "title": "Front gate",
                    "run_id": "run_01jd3k9a7bq0c1d2e3f4g5h6j7",
                    "object_id": "obj_0001",
                    "object_name": '"GATE 7"',
                    "event_id": None,
                    "class": "text",
                    "text": "GATE 7",
                    "event_type": None,
                    "zones": [],
                    "confidence": 0.93,
                    "start_s": 3.0,
                    "end_s": 9.0,
                    "recorded_start": "2026-11-20T22:03:03.000Z",
                    "evidence_ids": ["ev_0001"],
                    "thumbnail_url": "/api/product/videos/vid_01jd3k8m2qa7x4r5t6y7v8w9z0/runs/"
                    "run_01jd3k9a7bq0c1d2e3f4g5h6j7/thumbs/ev_0001_0.jpg",
                }
            ]
        },
    )

    hit_id: str = Field(description="The object's or the event's id, unique in its run.")
    kind: HitKind
    video_id: str
    title: str = Field(description="The video's title.")
    run_id: str = Field(description="The run it was found in (the video's newest by default).")
    object_id: str | None = Field(description="The object (scene graph), if any.")
    object_name: str | None = Field(
        default=None,
        description="The object's name, as the scene graph names it (`person 3`, "
        "`red object`, the text read); null without an object.",
    )
    event_id: str | None = Field(description="The event, for event hits.")
    class_: str | None = Field(
        alias="class", description="The object's class (for an event, its object's)."
    )
    text: str | None = Field(description="What was read, for texts and text_seen events.")
    event_type: str | None = Field(description="The event's type, for event hits.")
    zones: list[str] = Field(description="Zone names: where an object was; an event's zone.")
    confidence: float = Field(ge=0, le=1)
    start_s: float = Field(description="Where it starts in the video (seek the player here).")
    end_s: float
    recorded_start: str | None = Field(
        description="start_s on the clock (the video's recorded_at + start_s), when known."
    )
    evidence_ids: list[str] = Field(description="The evidence spans backing it (cite these).")
    thumbnail_url: str | None = Field(description="Its first span's first thumbnail.")

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> SearchHit:
        thumb = row.pop("thumbnail")
        moment: datetime | None = row.pop("recorded_start")
        url = None
        if thumb:
            name = thumb.rsplit("/", 1)[-1]
            url = f"/api/product/videos/{row['video_id']}/runs/{row['run_id']}/thumbs/{name}"
        return cls.model_validate(
            row
            | {
                "thumbnail_url": url,
                "recorded_start": to_rfc3339(moment) if moment else None,
                "confidence": round(float(row["confidence"]), 3),
            }
        )


class Searched(BaseModel):
    runs: int = Field(description="The workspace's runs searched (after video and title).")
    videos: int = Field(description="The videos those runs are of.")
    read: int = Field(
        description="Runs whose hits were read; the others were ruled out by the catalog's "
        "index of what each run holds or by the page's order: in time order runs are read "
        "earliest recorded first, by relevance without a text the most confident first, and "
        "runs that cannot place a hit on this page are not opened."
    )


class SearchResults(BaseModel):
    """One page of hits; pass ``next_cursor`` as ``?cursor=`` (with the same query) for more."""

    data: list[SearchHit]
    next_cursor: str | None
    interpreted: dict[str, Any] = Field(
        description="The filters searched: what `q` was read as, or the filters given.",
        examples=[
            {
                "finds": "text",
                "text": "GATE 7",
                "text_match": "substring",
                "start_s": 20.0,
                "run": "latest",
                "sort": "relevance",
            }
        ],
    )
    searched: Searched
