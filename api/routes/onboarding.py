"""Operation 10: a demo workspace for a newcomer, without an account (being built)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["onboarding"])
