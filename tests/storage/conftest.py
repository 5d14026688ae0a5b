"""The catalog-level tests run on both engines: each test once on SQLite, once on PostgreSQL."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """None (the SQLite file in the data folder), then a fresh PostgreSQL database."""
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return None
