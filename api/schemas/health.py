"""Response models of the probes: what ``/readyz`` answers, ready or not (200 or 503)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class PartCheck(BaseModel):
    """One part the service needs: its state, how long the check took and what it saw."""

    state: Literal["ok", "down"]
    latency_ms: float = Field(ge=0)
    detail: str


class Readiness(BaseModel):
    """Every part's check; ``failing`` names the parts that are down (empty when ready)."""

    status: Literal["ready", "not_ready"]
    failing: list[str]
    checks: dict[str, PartCheck]


class Liveness(BaseModel):
    """The API process answers."""

    status: Literal["ok"]
