"""Request and response models of the video routes (``VideoCreate`` in, ``VideoPublic`` out)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from storage.catalog.records import Run, Video
from ves.clock import to_rfc3339

SourceTypeField = Literal["url", "hls", "upload"]

_EXAMPLE_VIDEO_ID = "vid_01jd3k8m2qa7x4r5t6y7v8w9z0"
# The two shapes VideoCreate takes (``_source_is_complete``): a URL, or an upload.
_SOURCE_SHAPES: list[Any] = [
    {
        "title": "A URL or HLS playlist",
        "required": ["url"],
        "properties": {
            "url": {"type": "string"},
            "source_type": {"enum": ["url", "hls", None]},
            "upload": {"type": "null"},
        },
    },
    {
        "title": "An upload",
        "required": ["upload"],
        "properties": {"upload": {"type": "object"}, "source_type": {"enum": ["upload", None]}},
    },
]


def _char_class(refused: Callable[[str], bool]) -> str:
    """The characters ``refused`` holds as the inside of a regex character class: BMP ones as
    ``\\uXXXX`` escapes, the few beyond it as themselves (the same in ECMA 262 and Python)."""
    runs: list[tuple[int, int]] = []
    for cp in (cp for cp in range(0x110000) if refused(chr(cp))):
        if runs and runs[-1][1] == cp - 1:
            runs[-1] = (runs[-1][0], cp)
        else:
            runs.append((cp, cp))

    def one(cp: int) -> str:
        return f"\\u{cp:04X}" if cp <= 0xFFFF else chr(cp)

    return "".join(one(a) if a == b else f"{one(a)}-{one(b)}" for a, b in runs)


# What ``no_control_chars`` refuses (Unicode Cc and Cf) and what ``not_blank`` strips (Python's
# white space, which ECMA 262's \s is not: it lacks U+001C-U+001F and U+0085).
_CONTROL = _char_class(lambda c: unicodedata.category(c) in {"Cc", "Cf"})
BLANK = _char_class(str.isspace)
# Said to clients by the schema (the validators below stay the judges): no control or format
# characters, and (a line of text) something besides white space.
NO_CONTROL_PATTERN = f"^[^{_CONTROL}]*$"
PLAIN_LINE_PATTERN = f"^[^{_CONTROL}]*[^{_CONTROL}{BLANK}][^{_CONTROL}]*$"
NOT_BLANK_PATTERN = f"[^{BLANK}]"
# What ves.netguard.check_url reads as a URL: http(s), a host. Said to clients only (the server's
# own checks keep their problems: a `file:` URL is still `source_rejected`); which hosts resolve,
# and to which addresses, no schema can say.
HTTP_URL_PATTERN = (
    rf"^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@:\[\]{BLANK}]+(:[0-9]{{1,4}})?([/?#][^{BLANK}]*)?$"
)


def no_control_chars(value: str, field: str) -> str:
    if any(unicodedata.category(c) in {"Cc", "Cf"} for c in value):
        raise ValueError(f"{field} must not contain control characters")
    return value


def not_blank(value: str, field: str) -> str:
    """``value`` without surrounding white space; a ``ValueError`` when nothing is left."""
    if not value.strip():
        raise ValueError(f"{field} must not be blank")
    return value.strip()


class UploadSpec(BaseModel):
    """What a client declares about a recording it will upload."""

    model_config = ConfigDict(extra="forbid")

    filename: str = Field(
        min_length=1,
        max_length=255,
        examples=["lobby-2026-11-20.mp4"],
        json_schema_extra={"pattern": NO_CONTROL_PATTERN},
    )
    size_bytes: int = Field(gt=0, examples=[48_213_004])
    content_type: str = Field(
        pattern=r"^(video/[A-Za-z0-9.+-]+|application/(octet-stream|vnd\.apple\.mpegurl|x-mpegurl))$",
        examples=["video/mp4"],
    )
    sha256: str | None = Field(None, pattern=r"^[0-9a-fA-F]{64}$")
    recorded_at: datetime | None = None

    @field_validator("size_bytes", mode="before")
    @classmethod
    def _json_integer(cls, value: object) -> object:
        """A JSON integer (``48213004``, or ``48213004.0``, the same number): no true or "5"."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("size_bytes must be a JSON integer")
        return value

    @field_validator("filename")
    @classmethod
    def _plain_filename(cls, value: str) -> str:
        return no_control_chars(value, "filename")

    @field_validator("recorded_at", mode="before")
    @classmethod
    def _rfc3339_text(cls, value: object) -> object:
        return rfc3339_only(value)


def rfc3339_only(value: object) -> object:
    """A date-time as the schema says (RFC 3339 text, with its offset): pydantic alone would
    also take a number of seconds (found by stress/fuzz/run.py) or a time with no zone, which
    cannot be placed on the clock."""
    if value is None or isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValueError("recorded_at must be an RFC 3339 date-time string")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError("recorded_at must be an RFC 3339 date-time string") from None
    if moment.tzinfo is None:
        raise ValueError("recorded_at needs its UTC offset (e.g. 2026-11-20T22:00:00Z)")
    return value


class VideoCreate(BaseModel):
    """Register a video from a URL, an HLS playlist, or a recording to upload."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"url": "https://media.example.com/lobby.mp4", "title": "Lobby camera"},
                {"url": "https://media.example.com/live/index.m3u8", "title": "Dock stream"},
                {
                    "title": "Night shift",
                    "source_type": "upload",
                    "upload": {
                        "filename": "night.mp4",
                        "size_bytes": 48213004,
                        "content_type": "video/mp4",
                    },
                },
            ],
            "oneOf": _SOURCE_SHAPES,
        },
    )

    url: str | None = Field(
        None, min_length=1, max_length=2048, json_schema_extra={"pattern": HTTP_URL_PATTERN}
    )
    title: str = Field(
        min_length=1, max_length=200, json_schema_extra={"pattern": PLAIN_LINE_PATTERN}
    )
    source_type: SourceTypeField | None = Field(
        None, description="Defaults to `hls` for a `.m3u8` URL, else `url`."
    )
    upload: UploadSpec | None = None
    recorded_at: datetime | None = Field(
        None,
        description="When the video's first frame was recorded (RFC 3339 with its offset), so "
        "`GET /api/product/search` can find things by clock time (`recorded_after`). For an "
        "upload it may be given here or as `upload.recorded_at`. For HLS without it, the "
        "playlist's `#EXT-X-PROGRAM-DATE-TIME` is used, if it has one.",
        examples=["2026-11-20T21:30:00Z"],
    )

    @field_validator("recorded_at", mode="before")
    @classmethod
    def _rfc3339_text(cls, value: object) -> object:
        return rfc3339_only(value)

    def recorded_time(self) -> str | None:
        """When the video's time 0 was recorded, as UTC RFC 3339 (from either field)."""
        moment = self.recorded_at or (self.upload.recorded_at if self.upload else None)
        return to_rfc3339(moment) if moment is not None else None

    @field_validator("title")
    @classmethod
    def _clean_title(cls, value: str) -> str:
        value = no_control_chars(value.strip(), "title")
        if not value:
            raise ValueError("title must not be blank")
        return value

    @model_validator(mode="after")
    def _source_is_complete(self) -> VideoCreate:
        kind = self.resolved_source_type()
        if kind == "upload" and self.upload is None:
            raise ValueError("source_type 'upload' needs an 'upload' object")
        if kind != "upload" and self.url is None:
            raise ValueError("'url' is required unless source_type is 'upload'")
        if kind != "upload" and self.upload is not None:
            raise ValueError("'upload' is only allowed with source_type 'upload'")
        return self

    def resolved_source_type(self) -> SourceTypeField:
        """The declared type, or the one the URL implies (a ``.m3u8`` path means HLS)."""
        if self.source_type == "upload" or (self.source_type is None and self.upload):
            return "upload"
        path = (self.url or "").split("?")[0].split("#")[0].lower()
        return "hls" if path.endswith(".m3u8") else (self.source_type or "url")


class RunError(BaseModel):
    """Why a run failed, in words a user can act on."""

    code: str
    message: str


class RunPublic(BaseModel):
    """The newest run of a video, as seen in listings."""

    run_id: str
    state: str
    stage: str | None
    progress: float = Field(ge=0, le=1)
    started_at: str | None
    finished_at: str | None
    error: RunError | None
    queue_position: int | None = Field(
        None,
        ge=1,
        description="While `queued`: the run's place in its workspace's line (1 = next). Beyond "
        "the plan's `concurrent_runs` a run waits here until one of the workspace's runs ends.",
    )

    @classmethod
    def from_run(cls, run: Run) -> RunPublic:
        error = (
            RunError(code=run.error_code, message=run.error_message or "")
            if run.error_code
            else None
        )
        return cls(
            run_id=run.run_id,
            state=run.state,
            stage=run.stage,
            progress=run.progress,
            started_at=run.started_at,
            finished_at=run.finished_at,
            error=error,
            queue_position=run.queue_position if run.state == "queued" else None,
        )


class SourcePublic(BaseModel):
    type: SourceTypeField
    url: str | None


class VideoPublic(BaseModel):
    """A video record as clients see it."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "video_id": _EXAMPLE_VIDEO_ID,
                    "title": "Lobby camera",
                    "source": {"type": "url", "url": "https://media.example.com/lobby.mp4"},
                    "state": "registered",
                    "created_at": "2026-11-21T12:00:00.000Z",
                    "updated_at": "2026-11-21T12:00:00.000Z",
                    "source_sha256": None,
                    "upload": None,
                    "upload_url": None,
                    "latest_run": None,
                }
            ]
        }
    )

    video_id: str
    title: str
    source: SourcePublic
    state: str
    created_at: str
    updated_at: str
    source_sha256: str | None
    recorded_at: str | None = Field(
        None,
        description="When its first frame was recorded (RFC 3339, UTC), if known: as given at "
        "registration, or else an HLS playlist's `#EXT-X-PROGRAM-DATE-TIME` of the first "
        "segment processed.",
    )
    upload: dict[str, Any] | None = None
    upload_url: str | None = Field(
        None, description="For uploads awaiting their bytes: PUT them here with the same key."
    )
    latest_run: RunPublic | None = None

    @classmethod
    def from_video(cls, video: Video) -> VideoPublic:
        awaiting = video.state == "awaiting_upload"
        return cls(
            video_id=video.video_id,
            title=video.title,
            source=SourcePublic(type=video.source_type, url=video.source_url),
            state=video.state,
            created_at=video.created_at,
            updated_at=video.updated_at,
            source_sha256=video.source_sha256,
            recorded_at=video.recorded_at,
            upload=video.upload,
            upload_url=f"/api/videos/{video.video_id}/content" if awaiting else None,
            latest_run=RunPublic.from_run(video.latest_run) if video.latest_run else None,
        )


class VideosPublic(BaseModel):
    """One page of videos, newest first; pass ``next_cursor`` as ``?cursor=`` for the next."""

    data: list[VideoPublic]
    next_cursor: str | None
