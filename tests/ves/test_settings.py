from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from ves.settings import Settings


def test_defaults_are_safe() -> None:
    settings = Settings()
    assert (settings.host, settings.port) == ("127.0.0.1", 8000)
    assert settings.data_dir == Path("./data")
    assert settings.allow_private_sources is False
    assert settings.prefect_port == 4200


def test_environment_with_prefix_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VES_PORT", "9100")
    monkeypatch.setenv("VES_ALLOW_PRIVATE_SOURCES", "true")
    monkeypatch.setenv("VES_DATA_DIR", "/tmp/ves-x")
    settings = Settings()
    assert settings.port == 9100
    assert settings.allow_private_sources is True
    assert settings.catalog_path == Path("/tmp/ves-x/catalog.sqlite3")


@pytest.mark.parametrize(
    "overrides",
    [{"port": 0}, {"log_level": "loud"}, {"max_body_bytes": 10, "max_upload_bytes": 5}],
)
def test_unsafe_values_are_refused(overrides: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Settings(**overrides)  # type: ignore[arg-type]


def test_base_url_never_advertises_the_wildcard_address() -> None:
    assert Settings(host="0.0.0.0", port=8080).base_url == "http://127.0.0.1:8080"
    assert Settings(public_url="https://ves.example.com/").base_url == "https://ves.example.com"


def test_every_setting_says_what_it_does() -> None:
    """Docs are part of the product: the configuration reference (docs/reference/configuration.md,
    rendered from these fields by docs/gen_reference.py) has a meaning for every variable."""
    undocumented = [name for name, f in Settings.model_fields.items() if not f.description]
    assert undocumented == [], "settings without a description"
