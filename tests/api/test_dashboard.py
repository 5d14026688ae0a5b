"""The dashboard is served without a key, locked down by CSP, and its assets load."""

from __future__ import annotations

import httpx

from api.routes.dashboard import STATIC_DIR


def test_the_page_and_its_assets_are_served(anon: httpx.Client) -> None:
    page = anon.get("/dashboard")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    for asset in ("dashboard.js", "dashboard.css"):
        assert anon.get(f"/dashboard/static/{asset}").status_code == 200
        assert f"/dashboard/static/{asset}" in page.text


def test_the_script_never_writes_user_values_as_html() -> None:
    script = (STATIC_DIR / "dashboard.js").read_text()
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "document.write" not in script
    assert "localStorage" not in script  # the key stays in this tab's sessionStorage
