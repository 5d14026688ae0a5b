"""The reference pages of the documentation site are what ``docs/gen_reference.py`` renders from
the code now: a change to a route, a command, a setting, a schema or an error that is not
regenerated fails here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import Field
from pydantic_settings import BaseSettings

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "docs" / "gen_reference.py"


def load_generator() -> ModuleType:
    """``docs/gen_reference.py`` as a module (``docs/`` is the site's folder, no package)."""
    spec = importlib.util.spec_from_file_location("gen_reference", GENERATOR)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_reference", module)
    spec.loader.exec_module(module)
    return module


gen = load_generator()


@pytest.mark.parametrize("name", sorted(gen.PAGES))
def test_the_committed_reference_is_what_the_code_renders(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VES_PORT", "9999")  # the shell's settings never reach a page
    monkeypatch.setenv("COLUMNS", "40")  # nor its terminal's width
    committed = (gen.REFERENCE / name).read_text(encoding="utf-8")
    assert gen.PAGES[name]() == committed, (
        f"docs/reference/{name} is stale; regenerate it with: "
        ".venv/bin/python docs/gen_reference.py"
    )


def test_pages_name_no_path_of_this_machine() -> None:
    for name in gen.PAGES:
        text = (gen.REFERENCE / name).read_text(encoding="utf-8")
        assert str(ROOT) not in text and "/tmp/" not in text, name


class _Network(BaseSettings):
    """Where the service listens."""

    host: str = Field("127.0.0.1", description="Address.")
    port: int = Field(8000, description="Port.")


class _Storage(BaseSettings):
    """Where bytes live."""

    data_dir: Path = Field(Path("./data"), description="Data folder.")
    port: int = Field(1, description="Declared again lower down: belongs to the lowest class.")


class _Composed(_Network, _Storage):
    """Every knob."""

    log_level: str = Field("info", description="Log level.")


def test_settings_are_grouped_by_the_class_that_declares_them() -> None:
    """Tomorrow's Settings is composed of group classes by inheritance: one section each."""
    groups = [(cls.__name__, names) for cls, names in gen.settings_groups(_Composed)]
    assert groups == [
        ("_Composed", ["log_level"]),
        ("_Network", ["host", "port"]),
        ("_Storage", ["data_dir"]),
    ]
