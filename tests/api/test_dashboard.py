"""The dashboard is served without a key, locked down by CSP, and its assets load."""

from __future__ import annotations

import re

import httpx
import pytest

from api.routes.dashboard import STATIC_DIR

MODULES = (
    "dashboard.js",
    "api.js",
    "svg.js",
    "timeline.js",
    "video.js",
    "notes.js",
    "billing.js",
    "audit.js",
    "exports.js",
    "evidence.js",
    "player.js",
    "search.js",
    "boxes.js",
    "selection.js",
)


def test_the_page_and_its_assets_are_served(anon: httpx.Client) -> None:
    page = anon.get("/dashboard")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert "unsafe-inline" not in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    for asset in ("dashboard.js", "dashboard.css"):
        assert anon.get(f"/dashboard/static/{asset}").status_code == 200
        assert f"/dashboard/static/{asset}" in page.text
    for module in MODULES:
        served = anon.get(f"/dashboard/static/{module}")
        assert served.status_code == 200
        assert "javascript" in served.headers["content-type"]


def test_the_page_has_no_inline_script_or_style() -> None:
    page = (STATIC_DIR / "dashboard.html").read_text()
    assert "<style" not in page and " style=" not in page
    assert re.search(r"\son[a-z]+=", page) is None  # no inline event handlers
    assert '<script type="module" src="/dashboard/static/dashboard.js"></script>' in page


@pytest.mark.parametrize("module", MODULES)
def test_the_scripts_never_write_user_values_as_html(module: str) -> None:
    script = (STATIC_DIR / module).read_text()
    assert "innerHTML" not in script and "outerHTML" not in script
    assert "insertAdjacentHTML" not in script and "DOMParser" not in script
    assert "document.write" not in script and "eval(" not in script
    assert "localStorage" not in script  # the key stays in this tab's sessionStorage
