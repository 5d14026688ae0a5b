"""Every page under docs/ is in the site's navigation (``mkdocs.yml``), and every page the
navigation names exists: a page left out is a page nobody finds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def nav_pages(entries: list[Any]) -> list[str]:
    """The Markdown files a ``nav`` (nested lists of ``{title: page or list}``) names."""
    pages = []
    for entry in entries:
        items = entry.values() if isinstance(entry, dict) else [entry]
        for item in items:
            pages += nav_pages(item) if isinstance(item, list) else [item]
    return pages


def site_config() -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return config


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    nav = nav_pages(site_config()["nav"])
    on_disk = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(nav) - set(on_disk)) == [], "nav entries without a page"
    assert sorted(set(on_disk) - set(nav)) == [], "pages missing from mkdocs.yml's nav"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_the_build_fetches_nothing() -> None:
    """No network at build time: no web fonts, no plugin that downloads (social cards)."""
    config = site_config()
    assert config["theme"]["font"] is False
    assert [p if isinstance(p, str) else next(iter(p)) for p in config["plugins"]] == ["search"]
