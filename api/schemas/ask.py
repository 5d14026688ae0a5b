"""Request and response models of operation 7 (ask)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from api.schemas.videos import NOT_BLANK_PATTERN, not_blank


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=1,
        max_length=500,
        examples=["When did the first object appear?"],
        json_schema_extra={"pattern": NOT_BLANK_PATTERN},
    )

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return not_blank(value, "question")


class CitationPublic(BaseModel):
    evidence_id: str
    start_s: float
    end_s: float
    object_id: str | None = Field(
        default=None,
        description="The object the cited span is about (its own, or its event's); null for "
        "a scene event's span.",
    )
    object_name: str | None = Field(
        default=None,
        description="That object's name, as the scene graph names it (`person 3`).",
        examples=["person 3"],
    )


class CoveragePublic(BaseModel):
    duration_s: float = Field(description="Seconds of video the run processed.")
    frames_analysed: int
    detector_mode: str
    judged_still_s: float = Field(
        0.0,
        description="Seconds the activity gate judged still from their keyframes and packet "
        "sizes and did not decode (`cost.json` `frames.skipped_spans`); 0 without the gate.",
    )
    sure_event_s: float | None = Field(
        None,
        description='In keyframe mode (`skip_still: "keyframes"`), the shortest event the '
        "gate was sure to see (the longest GOP): a shorter one between two keyframes of a still "
        "stretch could have gone unseen. Null when packet sizes were read too.",
    )


class InterpretedWindow(BaseModel):
    start_s: float
    end_s: float | None = Field(description="None: to the end of the video.")


class Interpreted(BaseModel):
    """What the engine answered: every word of the question was accounted for by these."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "intent": "count",
                    "subject": "object",
                    "qualifiers": {"colour": "red", "action": "appear"},
                    "window": {"start_s": 28.0, "end_s": None},
                    "counted": "identities",
                }
            ]
        }
    )

    intent: str = Field(
        description="The question's shape: count, first, last, when, duration, zone, text, "
        "exists, between, change, list, order, colour, summary, peak (the most in view at "
        "once), together (two close together); or why it was refused "
        "(not_understood, unsupported, off_topic)."
    )
    subject: str = Field(description="object, text, scene_change or a detector's class name.")
    qualifiers: dict[str, str | float | bool] = Field(
        description="What narrows the subject: colour, order (longest, shortest, biggest, "
        "smallest, fastest, slowest), direction (left, right), zone, action (appear, "
        "disappear, enter_zone, exit_zone, dwell), text, relative_window (after_cut, "
        "before_cut, last), longer_than_s (a least length in seconds: 'longer than 10 s'), "
        "moved (true: 'walk', 'pass', 'cross' keep things that moved at least their own size), "
        "pace (the word that asked for a running pace: 'ran', 'quickly'), new (true: 'new "
        "people' keeps each thing's first appearance), place (place words "
        "read as this video, or a part of it with no zone: the answer then says it covered "
        "the whole picture)."
    )
    window: InterpretedWindow | None = Field(description="The time window asked about.")
    counted: Literal["identities", "appearances"] | None = Field(
        default=None,
        description="For a count of things: `identities` (different things: one that left and "
        "came back counts once, 'how many different people?') or `appearances` (times things "
        "came into view, 'how many times did people pass?'); absent for other questions.",
    )


class AskAnswer(BaseModel):
    question: str
    answer: str
    grounded: bool
    confidence: float = Field(ge=0, le=1)
    citations: list[CitationPublic]
    refusal_reason: str | None = Field(
        description="Why a grounded: false answer makes no claim: no_evidence, "
        "outside_detectors, off_topic or not_understood."
    )
    video_id: str
    run_id: str = Field(description="The run the answer was computed from.")
    ask_id: str = Field(description="The logged ask, kept with the run for review.")
    coverage: CoveragePublic = Field(description="What the run examined.")
    interpreted: Interpreted | None = Field(
        default=None,
        description="What was answered (intent, subject, qualifiers, window), so a client "
        "sees which question the answer is to; None when the question could not be read.",
    )


class WorkspaceCitationPublic(CitationPublic):
    video_id: str = Field(description="The video whose evidence span this is.")
    run_id: str = Field(description="The run of that video the span is from.")


class WorkspaceSearched(BaseModel):
    runs: int = Field(description="The workspace's runs searched (each video's newest).")
    videos: int
    read: int = Field(description="Runs whose hits were read (the others could not match).")


class WorkspaceAskAnswer(BaseModel):
    """An answer over every video of the workspace: operation 7's answer, with each citation
    naming its video and run, and what was searched instead of one run's coverage."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "question": "Which videos show GATE 7?",
                    "answer": '"GATE 7" was seen in 1 video: Front gate '
                    "(vid_01jd3k8m2qa7x4r5t6y7v8w9z0): 3.0 s to 9.0 s.",
                    "grounded": True,
                    "confidence": 0.93,
                    "citations": [
                        {
                            "video_id": "vid_01jd3k8m2qa7x4r5t6y7v8w9z0",
                            "run_id": "run_01jd3k9a7bq0c1d2e3f4g5h6j7",
                            "evidence_id": "ev_0001",
                            "start_s": 3.0,
                            "end_s": 9.0,
                        }
                    ],
                    "refusal_reason": None,
                    "ask_id": "ask_01jd3kb0c1d2e3f4g5h6j7k8m9",
                    "interpreted": {"finds": "text", "text": "GATE 7", "intent": "list"},
                    "searched": {"runs": 12, "videos": 12, "read": 1},
                }
            ]
        }
    )

    question: str
    answer: str
    grounded: bool
    confidence: float = Field(ge=0, le=1)
    citations: list[WorkspaceCitationPublic]
    refusal_reason: str | None = Field(
        description="Why a grounded: false answer makes no claim: no_evidence, "
        "outside_detectors, off_topic or not_understood."
    )
    ask_id: str = Field(description="The logged ask (with no video or run of its own).")
    interpreted: dict[str, Any] | None = Field(
        description="The search the question was read as (and its shape, `intent`)."
    )
    searched: WorkspaceSearched
