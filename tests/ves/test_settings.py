from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from ves.settings import (
    SETTINGS_GROUPS,
    AskSettings,
    LimitSettings,
    ProcessingSettings,
    ServiceSettings,
    Settings,
    SettingsGroup,
    SourceSettings,
    StorageSettings,
    WebhookSettings,
)


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


def _declared_by(cls: type[SettingsGroup]) -> set[str]:
    """The fields ``cls`` itself declares (not those it inherits)."""
    return set(vars(cls).get("__annotations__", {})) & set(cls.model_fields)


def test_every_field_is_declared_by_exactly_one_group() -> None:
    """The configuration reference groups fields by the class that declares them: each field is
    declared once, by a group of ``SETTINGS_GROUPS``, and every group is one of Settings' bases."""
    groups = [cls for _, cls, _ in SETTINGS_GROUPS]
    assert set(groups) == set(Settings.__bases__)
    declared = [name for cls in groups for name in _declared_by(cls)]
    assert sorted(declared) == sorted(Settings.model_fields), "a field in no group, or in two"
    assert not _declared_by(Settings), "declare each field in its group, not on Settings"
    assert all(title and purpose for title, _, purpose in SETTINGS_GROUPS)


@pytest.mark.parametrize(
    ("group", "env", "value", "field", "expected"),
    [
        (ServiceSettings, "VES_PREFECT_PORT", "4300", "prefect_port", 4300),
        (ServiceSettings, "VES_LOG_LEVEL", "DEBUG", "log_level", "debug"),
        (StorageSettings, "VES_DATA_DIR", "/tmp/ves-y", "data_dir", Path("/tmp/ves-y")),
        (StorageSettings, "AWS_REGION", "eu-west-1", "s3_region", "eu-west-1"),
        (SourceSettings, "VES_MAX_SOURCE_BYTES", "1000", "max_source_bytes", 1000),
        (ProcessingSettings, "VES_SAMPLE_FPS", "2.5", "sample_fps", 2.5),
        (ProcessingSettings, "VES_TASK_RUNNER", "dask", "task_runner", "dask"),
        (LimitSettings, "VES_MAX_QUEUED_RUNS", "7", "max_queued_runs", 7),
        (LimitSettings, "VES_COST_MODEL_RUNS", "50", "cost_model_runs", 50),
        (WebhookSettings, "VES_WEBHOOK_RETRY_MAX_S", "60", "webhook_retry_max_s", 60.0),
        (AskSettings, "VES_ASK_LLM_MODEL", "local", "ask_llm_model", "local"),
    ],
)
def test_each_group_reads_the_same_environment_names(
    monkeypatch: pytest.MonkeyPatch,
    group: type[SettingsGroup],
    env: str,
    value: str,
    field: str,
    expected: object,
) -> None:
    monkeypatch.setenv(env, value)
    assert field in _declared_by(group), f"{field} is not declared by {group.__name__}"
    assert getattr(Settings(), field) == expected
    assert getattr(group(), field) == expected  # a group alone reads the same name
