"""The architecture page stays the map of the house (issue 45): every top-level package and
every stage folder is named in its layout and in its "where to find it" table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_layers import FOLDERS

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "concepts" / "architecture.md").read_text()
STAGES = sorted(p.name for p in (ROOT / "tasks").iterdir() if (p / "__init__.py").exists())


def section(title: str) -> str:
    """The page's text from ``## title`` to the next ``## `` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", PAGE, re.M | re.S)
    assert match, f"no section {title!r} on the architecture page"
    return match.group(1)


LAYOUT, TABLE = section("Layout"), section("Where to find it")


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_top_level_package_is_in_the_layout_and_the_table(folder: str) -> None:
    assert re.search(rf"^{folder}/", LAYOUT, re.M), f"{folder}/ is not in the layout"
    assert f"`{folder}/" in TABLE, f"{folder}/ is not in the 'where to find it' table"


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_folder_is_in_the_layout_and_the_table(stage: str) -> None:
    assert re.search(rf"\b{stage}/", LAYOUT), f"tasks/{stage}/ is not in the layout"
    assert re.search(rf"\b{stage}\b", TABLE), f"the stage {stage} is not in the table"


def test_the_check_sees_a_missing_stage() -> None:
    assert not re.search(r"\bteleport/", LAYOUT) and STAGES and "activity" in STAGES
