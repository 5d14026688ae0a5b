"""Request and response models of operation 7 (ask)."""

from __future__ import annotations

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
