"""Response models of a video's audit trail (``GET .../audit``; ``storage.catalog.audit``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from storage.catalog.audit import AuditPage, AuditRecord, ChainHead

RECORD_EXAMPLE: dict[str, Any] = {
    "seq": 42,
    "record_id": "aud_01m7zbsdnaq33qybzby9qpkjxt",
    "tenant_id": "ten_01m7zbsdn0k4y3c1b6bq3gz9vd",
    "key_id": "key_01m7zbsdn1d6w2x8m4c0t5r7qa",
    "action": "GET /api/product/videos/{video_id}/scene-graph",
    "video_id": "vid_01m7zbsdnaq33qybzby9qpkjxt",
    "ids": {"run_id": "run_01m7zbsdnepf3bap3vrzhkr8he"},
    "outcome": 200,
    "client": "203.0.113.7",
    "at": "2026-11-25T10:00:00.000Z",
    "prev_hash": "5f1c0b3c9e0b8f7a5d4e3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d",
    "hash": "9a2f4c6e8b0d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a",
}


class AuditRecordPublic(BaseModel):
    """One access to the video: who, what, when, from where, and its links in the chain."""

    model_config = {"json_schema_extra": {"examples": [RECORD_EXAMPLE]}}

    seq: int = Field(description="Place in the workspace's chain (1, 2, ... without gaps).")
    record_id: str
    tenant_id: str
    key_id: str = Field(description="The API key's id, or `system` for the service itself.")
    action: str = Field(description="Method and route template, or `mcp:<tool>`.")
    video_id: str | None
    ids: dict[str, Any] = Field(description="Other ids touched: run, evidence cited, ask ...")
    outcome: int = Field(description="The HTTP status answered.")
    client: str | None = Field(description="The client's address.")
    at: str = Field(description="When (RFC 3339 UTC).")
    prev_hash: str = Field(description="`hash` of the chain's previous record (`seq - 1`).")
    hash: str = Field(
        description="sha256 of `prev_hash` followed by the canonical JSON (sorted keys, no "
        "whitespace) of every other field."
    )

    @classmethod
    def from_record(cls, record: AuditRecord) -> AuditRecordPublic:
        return cls.model_validate(record.as_dict())


class ChainHeadPublic(BaseModel):
    """The newest record of the workspace's chain: note it to detect a later truncation."""

    seq: int
    hash: str

    @classmethod
    def from_head(cls, head: ChainHead) -> ChainHeadPublic:
        return cls(seq=head.seq, hash=head.hash)


class AuditRecordsPublic(BaseModel):
    """One page of a video's audit records, newest first, and the chain's head."""

    data: list[AuditRecordPublic]
    next_cursor: str | None
    chain_head: ChainHeadPublic

    @classmethod
    def from_page(cls, page: AuditPage, next_cursor: str | None) -> AuditRecordsPublic:
        records = [AuditRecordPublic.from_record(r) for r in page.records]
        return cls(
            data=records, next_cursor=next_cursor, chain_head=ChainHeadPublic.from_head(page.head)
        )
