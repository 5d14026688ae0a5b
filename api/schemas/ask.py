"""Request and response models of operation 7 (ask)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from api.schemas.videos import not_blank


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=1, max_length=500, examples=["When did the first object appear?"]
    )

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return not_blank(value, "question")


class CitationPublic(BaseModel):
    evidence_id: str
    start_s: float
    end_s: float


class CoveragePublic(BaseModel):
    duration_s: float = Field(description="Seconds of video the run processed.")
    frames_analysed: int
    detector_mode: str
    judged_still_s: float = Field(
        0.0,
        description="Seconds the activity gate judged still from their keyframes and packet "
        "sizes and did not decode (`cost.json` `frames.skipped_spans`); 0 without the gate.",
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
        "exists, between, change, list, order, colour, summary; or why it was refused "
        "(not_understood, unsupported, off_topic)."
    )
    subject: str = Field(description="object, text, scene_change or a detector's class name.")
    qualifiers: dict[str, str] = Field(
        description="What narrows the subject: colour, order (longest, shortest, biggest, "
        "smallest, fastest, slowest), direction (left, right), zone, action (appear, "
        "disappear, enter_zone, exit_zone, dwell), text, relative_window (after_cut, "
        "before_cut, last)."
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
