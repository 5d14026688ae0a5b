"""Request and response models of exports (signed evidence bundles of a video's run)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from api.schemas.videos import RunError
from storage.catalog.exports import Export

_EXPORT_EXAMPLE: dict[str, JsonValue] = {
    "export_id": "exp_01m8a3k1r2w9c4x7b5n6q8t0vz",
    "video_id": "vid_01m7zbsdn3j6xb0wq8d2y5f4ke",
    "run_id": "run_01m7zbsdnepf3bap3vrzhkr8he",
    "state": "succeeded",
    "selection": {"evidence_ids": ["ev_01m7zbsdnj1ww6bq0c0c9d3bx2"]},
    "created_at": "2026-11-25T10:00:00.000Z",
    "finished_at": "2026-11-25T10:00:04.210Z",
    "expired_at": None,
    "error": None,
    "bundle": {
        "bytes": 412877,
        "sha256": "3b1f0c2d4e5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e",
        "signing_key_id": "ed25519:4a1c9e0b7d2f3a65",
        "download_url": "/api/product/videos/vid_01m7zbsdn3j6xb0wq8d2y5f4ke/exports/"
        "exp_01m8a3k1r2w9c4x7b5n6q8t0vz/bundle",
    },
}


class ExportCreate(BaseModel):
    """What to export: spans by id, or those overlapping a time range, or (empty) every span."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"evidence_ids": ["ev_01m7zbsdnj1ww6bq0c0c9d3bx2"], "redact": ["faces"]}],
            # "evidence_ids or a time range, not both" (``_one_way``), said to clients.
            "if": {"required": ["evidence_ids"], "properties": {"evidence_ids": {"type": "array"}}},
            "then": {"properties": {"start_s": {"type": "null"}, "end_s": {"type": "null"}}},
        },
    )

    evidence_ids: list[str] | None = Field(
        None,
        min_length=1,
        max_length=500,
        description="The spans to export (ids of the evidence view); others are left out.",
    )
    start_s: float | None = Field(
        None,
        ge=0,
        strict=True,  # JSON numbers only: no false or "2"
        description="Spans ending before this are left out; clips start no earlier (a span "
        "reaching before it is cut to it, and the manifest says so).",
    )
    end_s: float | None = Field(
        None,
        ge=0,
        strict=True,  # JSON numbers only: no false or "2"
        description="Spans starting after this are left out; clips end no later.",
    )
    redact: list[Literal["faces", "text"]] | None = Field(
        None,
        max_length=2,
        description="Pixelate faces (found on every exported frame) and/or the run's text "
        "objects (while shown) in the bundle's thumbnails and clips; the manifest keeps the "
        "unredacted originals' hashes and every region pixelated.",
    )

    @model_validator(mode="after")
    def _one_way(self) -> ExportCreate:
        if self.evidence_ids and (self.start_s is not None or self.end_s is not None):
            raise ValueError("give evidence_ids or a time range, not both")
        if self.start_s is not None and self.end_s is not None and self.end_s < self.start_s:
            raise ValueError("end_s is before start_s")
        return self


class BundlePublic(BaseModel):
    bytes: int
    sha256: str = Field(description="Of the zip as downloaded.")
    signing_key_id: str = Field(description="Its key at `GET /api/public/signing-keys`.")
    download_url: str


class ExportPublic(BaseModel):
    """An export and where it stands; `bundle` once it succeeded."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXPORT_EXAMPLE]})

    export_id: str
    video_id: str
    run_id: str = Field(description="The run exported: the video's newest succeeded run then.")
    state: str = Field(description="`queued`, `running`, `succeeded` or `failed`.")
    selection: dict[str, Any]
    created_at: str
    finished_at: str | None
    expired_at: str | None = Field(
        None,
        description="When the bundle was deleted with its run's artifacts (plan retention); "
        "`bundle` is then null.",
    )
    error: RunError | None
    bundle: BundlePublic | None

    @classmethod
    def of(cls, export: Export) -> ExportPublic:
        url = f"/api/product/videos/{export.video_id}/exports/{export.export_id}/bundle"
        bundle = None
        kept = export.state == "succeeded" and export.expired_at is None
        if kept and export.bundle_sha256 and export.signing_key_id:
            bundle = BundlePublic(
                bytes=export.bundle_bytes or 0,
                sha256=export.bundle_sha256,
                signing_key_id=export.signing_key_id,
                download_url=url,
            )
        error = None
        if export.error_code:
            error = RunError(code=export.error_code, message=export.error_message or "")
        return cls(
            export_id=export.export_id,
            video_id=export.video_id,
            run_id=export.run_id,
            state=export.state,
            selection=export.params,
            created_at=export.created_at,
            finished_at=export.finished_at,
            expired_at=export.expired_at,
            error=error,
            bundle=bundle,
        )
