"""Entry point for uvicorn: ``uvicorn api.main:app --factory`` builds the app from the env."""

from __future__ import annotations

from fastapi import FastAPI

from api.app import create_app
from ves.settings import Settings


def app() -> FastAPI:
    """The API configured from ``VES_*`` environment variables."""
    return create_app(Settings())
