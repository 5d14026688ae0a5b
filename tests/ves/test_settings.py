from __future__ import annotations

import re
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


def test_every_setting_is_in_the_readmes_configuration_table() -> None:
    """Docs are part of the product: each ``VES_`` variable a user can set has a row (a row may
    name two, as ``VES_MAX_WIDTH`` / ``VES_MAX_HEIGHT``), and no row names one that is gone."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    first_cells = re.findall(r"^\| (`VES_[^|]+)\|", readme, flags=re.MULTILINE)
    documented = {name for cell in first_cells for name in re.findall(r"`(VES_\w+)`", cell)}
    settings = {f"VES_{name.upper()}" for name in Settings.model_fields}
    assert sorted(settings - documented) == [], "settings missing from the README"
    assert sorted(documented - settings) == [], "README rows for settings that do not exist"
