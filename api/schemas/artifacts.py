"""Response models of a run's artifacts (operations 4 to 6), checked against the Parquet
schemas in ``storage.artifacts.schemas`` by a test, so the API and the files cannot drift apart."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from typing_extensions import TypedDict

from storage.catalog.review_notes import Verdict

_NAME_DOC = (
    "The object's name as people read it, the same in every answer (computed once, in "
    "`storage.artifacts.names`): `person N` numbered per identity in order of first appearance "
    "(every appearance of one person shares N), `face N`, the text that was read (quoted) or "
    "`text N`, `<colour> object` (with ` N` where two things share it) or `object N` without "
    "a colour."
)


class ObjectPublic(BaseModel):
    object_id: str
    name: str = Field(description=_NAME_DOC, examples=["person 3", "red object", '"GATE 7"'])
    class_: str = Field(alias="class", serialization_alias="class")
    confidence: float
    first_seen_s: float
    last_seen_s: float
    zones: list[str]
    attributes: dict[str, Any]
    evidence_ids: list[str]
    detections: int
    colour: str | None = Field(
        default=None, description="Measured dominant colour (null for texts, older runs)."
    )
    colour_confidence: float | None = None
    identity_id: str | None = Field(
        default=None,
        description="The thing this object is an appearance of: the objects of one thing that "
        "left the picture and came back share it, so distinct identity ids count different "
        "things and objects count appearances (null for texts, faces and older runs).",
        examples=["idn_01jd3k8w2n6qz4b7xv0c9mrt5h"],
    )
    appearance: int | None = Field(
        default=None,
        description="Which appearance of its identity this object is, 1 for the first in time.",
        examples=[2],
    )
    appearances: int | None = Field(
        default=None,
        description="How many appearances (objects) its identity has in the run.",
        examples=[3],
    )

    model_config = ConfigDict(populate_by_name=True)


class ZonePublic(BaseModel):
    zone_id: str
    name: str
    polygon: list[list[float]]


class EventPublic(BaseModel):
    event_id: str
    type: str
    t_s: float
    end_s: float | None
    object_id: str | None
    zone_id: str | None
    confidence: float
    evidence_ids: list[str]


class RelationPublic(BaseModel):
    subject_id: str
    predicate: str
    object_id: str
    start_s: float
    end_s: float


class SceneGraph(BaseModel):
    """The world state: objects, zones, events and relations, each citing its evidence."""

    video_id: str
    run_id: str
    objects: list[ObjectPublic]
    zones: list[ZonePublic]
    events: list[EventPublic]
    relations: list[RelationPublic]


class RefreshMarker(BaseModel):
    t_s: float
    reason: str
    score: float


class TimelineEntry(BaseModel):
    t_s: float
    event_id: str
    type: str
    object_id: str | None
    object_name: str | None = Field(
        default=None,
        description="The name of the event's object (its scene graph `name`); null for scene "
        "events.",
        examples=["person 3"],
    )
    zone_id: str | None
    confidence: float
    label: str


class StillStretch(BaseModel):
    """A stretch the activity gate judged still (keyframes matched, packets at the stream's
    idle level) and did not decode: nothing happens there."""

    start_s: float
    end_s: float
    reason: str


class Timeline(BaseModel):
    """Events by time, the points where the world state was rebuilt, and the still stretches."""

    video_id: str
    run_id: str
    duration_s: float
    events: list[TimelineEntry]
    refresh_markers: list[RefreshMarker]
    still: list[StillStretch] = Field(
        default_factory=list,
        description="Stretches judged still and not decoded (runs with `skip_still`); empty "
        "otherwise.",
    )


class EvidenceFrame(BaseModel):
    t_s: float
    bbox: list[float] | None
    thumbnail_url: str
    sha256: str


class ReviewNoteJson(TypedDict):
    """A review note as answered (the serializer's return type, hence its documented schema):
    people's notes have ``verdict`` and ``supersedes``, the service's own have neither."""

    note_id: str
    author: str
    text: str
    created_at: str
    verdict: NotRequired[Verdict]
    supersedes: NotRequired[str | None]


class ReviewNote(BaseModel):
    """A note on a span: the service's own (``author`` "system", written by the run, no
    ``verdict``) or a person's (``author`` "key:<key_id>", with ``verdict`` and ``supersedes``,
    the note it replaces)."""

    note_id: str
    author: str = Field(examples=["system", "key:key_01m7zbsdnaq33qybzby9qpkjxt"])
    text: str
    created_at: str
    verdict: Verdict | None = None
    supersedes: str | None = None

    @model_serializer(mode="wrap")
    def _without_person_fields(self, handler: SerializerFunctionWrapHandler) -> ReviewNoteJson:
        """A system note is answered exactly as its run published it (its hash covers it)."""
        data: ReviewNoteJson = handler(self)
        if self.verdict is None:
            data.pop("verdict", None)
            data.pop("supersedes", None)
        return data


class EvidenceSpan(BaseModel):
    """A traceable span; ``sha256`` is that of its canonical JSON without ``sha256`` (as
    served, people's notes included); ``published_sha256`` is the hash its run published."""

    evidence_id: str
    start_s: float
    end_s: float
    object_id: str | None
    event_id: str | None
    object_name: str | None = Field(
        default=None,
        description="The name of what the span is about: its object's, or its event's object's "
        "(the scene graph's `name`); null for scene events. Added as served, like `verdict`.",
        examples=["person 3"],
    )
    confidence: float
    frames: list[EvidenceFrame]
    review_notes: list[ReviewNote]
    source_sha256: str
    verdict: Verdict | None = Field(
        description="The verdict of the span's newest review note by a person; null without one."
    )
    published_sha256: str = Field(
        description="The span's sha256 as its run published it: that of the served span without "
        "`sha256`, `published_sha256`, `verdict` and the notes that have a `verdict`."
    )
    sha256: str


class EvidenceView(BaseModel):
    video_id: str
    run_id: str
    spans: list[EvidenceSpan]


class TrackRows(BaseModel):
    """One object's tracked boxes as columns of equal length, in time order."""

    t_s: list[float] = Field(description="When each box is shown in the video.")
    bbox: list[list[float]] = Field(
        description="Each box, normalised [x1, y1, x2, y2] (0..1 of the frame's width, height)."
    )
    estimated: list[bool] = Field(
        description="Whether the box was filled in rather than seen by a detector there "
        "(`tracks.parquet` `estimated`): draw it as a guess, e.g. dashed."
    )


class TrackedObject(BaseModel):
    object_id: str
    name: str = Field(description=_NAME_DOC)
    class_: str = Field(alias="class", serialization_alias="class")
    identity_id: str | None = Field(
        description="The identity whose appearance it is (null for texts and faces)."
    )
    rows: TrackRows

    model_config = ConfigDict(populate_by_name=True)


class Tracks(BaseModel):
    """The tracked boxes of a run, per object, to draw over the playing video: a player shows
    the box at a time by interpolating linearly between an object's two rows around it (boxes
    are kept at the run's sampled frames only)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "video_id": "vid_01m7zbsdnaq33qybzby9qpkjxt",
                    "run_id": "run_01m7zbsdnepf3bap3vrzhkr8he",
                    "start_s": 0.0,
                    "end_s": 2.5,
                    "objects": [
                        {
                            "object_id": "obj_stcqh1",
                            "name": "person 1",
                            "class": "person",
                            "identity_id": "idn_01jd3k8w2n6qz4b7xv0c9mrt5h",
                            "rows": {
                                "t_s": [2.0, 2.2, 2.4],
                                "bbox": [
                                    [0.1, 0.2, 0.16, 0.5],
                                    [0.11, 0.2, 0.17, 0.5],
                                    [0.12, 0.21, 0.18, 0.51],
                                ],
                                "estimated": [False, True, False],
                            },
                        }
                    ],
                }
            ]
        }
    )

    video_id: str
    run_id: str
    start_s: float = Field(description="The window's start (0 unless `start_s` was asked).")
    end_s: float | None = Field(description="The window's end; null: to the end of the video.")
    objects: list[TrackedObject] = Field(
        description="Objects with at least one box in the window, by first appearance."
    )


class CostFallback(BaseModel):
    used: bool
    reason: str | None


class SkippedSpan(BaseModel):
    """A stretch whose frames the activity gate did not decode (judged still)."""

    start_s: float
    end_s: float
    reason: str


class CostFrames(BaseModel):
    decoded: int
    sampled: int
    analysed: int = Field(
        description="Sampled frames the detectors looked at: every sampled frame but the held ones."
    )
    held: int = Field(
        0,
        description="Sampled times in still stretches: the last decoded frame stood for them, "
        "and its detections were carried to them without running any detector.",
    )
    skipped: int = Field(0, description="Frames the activity gate did not decode.")
    skipped_spans: list[SkippedSpan] = Field(
        default_factory=list, description="Where frames were held, and why (the gate's)."
    )


class CostActivityGate(BaseModel):
    """Whether the run skipped still stretches (`skip_still`), or why it decoded everything."""

    model_config = ConfigDict(extra="allow")

    used: bool
    cue: str | None = Field(
        None, description="What stillness was judged from: `packets` (default) or `keyframes`."
    )
    why: str | None = Field(None, description="Why the run used that cue.")
    sure_event_s: float | None = Field(
        None,
        description="Keyframe mode: the shortest event the gate is sure to see (the longest "
        "GOP); a shorter one between two keyframes can be missed.",
    )
    fallback: str | None = Field(None, description="Why the gate decoded everything.")
    map_s: float | None = Field(None, description="Seconds the activity map took.")
    still_fraction: float | None = Field(None, description="Share of the video judged still.")


class CostRetention(BaseModel):
    days: int
    expires_at: str


class CostAmount(BaseModel):
    units: float
    unit: str
    amount: float
    currency: str


class CostTruncation(BaseModel):
    """Why a run processed less than its video (docs/how-to/estimates.md)."""

    reason: Literal["max_cost", "max_compute_s", "max_duration_s"]
    at_s: float = Field(description="Seconds processed: the artifacts cover [0, at_s).")
    cap: float | None = Field(description="The cap or bound that stopped it.")


class CostReviewCopy(BaseModel):
    """The run's review copy (``review.mp4``: the video as every browser plays it, for
    watching; the original stays the evidence): how it was made and why, and what it took."""

    mode: Literal["copy", "transcode", "none"] = Field(
        description="`copy`: H.264 a browser plays, its packets copied into MP4 (the source's "
        "size and keyframes); `transcode`: encoded again as H.264, 720p at most, a keyframe "
        "every 2 s; `none`: no copy (an HLS source or live window plays its own playlist, or "
        "the copy failed: `reason`)."
    )
    reason: str
    seconds: float = Field(description="Compute the copy took (also in `stages.review_copy`).")
    bytes: int
    width: int | None
    height: int | None
    source_codec: str | None = Field(description="The original's video codec (`hevc`, ...).")
    source_sha256: str | None = Field(description="The original's sha256: the evidence's.")


class CostReport(BaseModel):
    """A run's ``cost.json``, served as the run wrote it (fields a later release adds are kept,
    hence ``extra="allow"``); ``detectors`` maps each detector plugin to what it looked at
    (``frames``, ``boxes``, ``seconds``)."""

    model_config = ConfigDict(extra="allow")

    video_id: str
    run_id: str
    detector_mode: str | None = None
    fallback: CostFallback | None = None
    detectors: dict[str, dict[str, Any]] = Field(default_factory=dict)
    duration_s: float
    processed_s: float
    truncated: bool
    truncation: CostTruncation | None = None
    caps: dict[str, float | None] | None = None
    stages: dict[str, float]
    frames: CostFrames
    activity_gate: CostActivityGate | None = None
    review_copy: CostReviewCopy | None = Field(
        None, description="Null in runs made before review copies."
    )
    retention: CostRetention
    cost: CostAmount
