"""The dashboard's screenshots in the docs (docs/how-to/dashboard.md), and the page heights it
quotes: the whole service as ``make run`` starts it, the synthetic lobby and the street clip
(``vtest.avi``) uploaded and processed, each video's page opened in headless Chromium.

Writes ``docs/assets/dashboard/`` (views as PNG, whole pages as JPEG) and prints each page's height
(``document.documentElement.scrollHeight`` at a 1280x900 viewport).

Command: ``.venv/bin/python benchmarks/dashboard_shots.py`` (``--no-street`` skips the street
clip, about two minutes of processing on two cores).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synthetic import lobby_scene, write_video
from testkit.service import register_upload, serving, wait_video
from testkit.vtest import vtest_path

OUT = Path(__file__).resolve().parents[1] / "docs" / "assets" / "dashboard"
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1280, "height": 900}


def _open(page: Any, url: str, key: str, title: str) -> None:
    """Sign in and open the page of the video titled ``title``, drawn to its audit trail."""
    page.goto(f"{url}/dashboard")  # a fresh page; the tab keeps the key once signed in
    page.wait_for_selector("#workspace:not([hidden]), #sign-in:not([hidden])")
    if page.locator("#key").is_visible():
        page.fill("#key", key)
        page.click("#sign-in-form button")
    page.wait_for_selector("#workspace:not([hidden])")
    page.locator("#videos tr").filter(has=page.get_by_text(title, exact=True)).locator(
        "td"
    ).first.click()
    page.wait_for_selector("#evidence li.span")
    page.locator("#audit-head").filter(has_text="Chain head").wait_for()


def _lobby_views(page: Any) -> None:
    """The player with its boxes (the red walker selected by its lane), the timeline, the
    evidence grouped and filtered, and the ids shown."""
    page.wait_for_function("() => document.getElementById('boxes').dataset.objects > 0")
    page.wait_for_function("() => document.getElementById('player').readyState >= 2")
    page.locator("#timeline-chart g.row[data-name='red object'] text.label").click()
    page.evaluate(
        "() => { const v = document.getElementById('player'); v.pause(); v.currentTime = 4.5; }"
    )
    page.wait_for_function(
        "() => Math.abs(Number(document.getElementById('boxes').dataset.t) - 4.5) < 1e-3"
    )
    page.locator("#stage").screenshot(path=str(OUT / "boxes.png"))
    page.locator("#timeline").screenshot(path=str(OUT / "timeline.png"))
    page.select_option("#ev-class", "motion")
    page.locator("#evidence li.group.selected").wait_for()
    evidence = page.locator("#ev-filters, #ev-summary, #evidence")
    evidence.first.scroll_into_view_if_needed()
    box = _union([evidence.nth(i).bounding_box() for i in range(evidence.count())])
    page.screenshot(path=str(OUT / "evidence.png"), clip=box)
    page.click("#ev-clear")


def _union(boxes: list[dict[str, float]]) -> dict[str, float]:
    x1 = min(b["x"] for b in boxes)
    y1 = min(b["y"] for b in boxes)
    x2 = max(b["x"] + b["width"] for b in boxes)
    y2 = max(b["y"] + b["height"] for b in boxes)
    return {"x": x1, "y": y1, "width": x2 - x1, "height": y2 - y1}


def _whole(page: Any, name: str) -> int:
    """A full-page screenshot; the page's height in CSS px."""
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(OUT / name), full_page=True, type="jpeg", quality=70)
    height: int = page.evaluate("() => document.documentElement.scrollHeight")
    return height


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-street", action="store_true", help="skip the street clip")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        _shoot(data, Path(tmp), street=not args.no_street)
    print(f"screenshots in {OUT}")


def _shoot(data: Path, tmp: Path, *, street: bool) -> None:
    """Serve, upload and process the videos, and take every screenshot."""
    from playwright.sync_api import sync_playwright

    with serving(data) as service:
        client = service.client("docs")
        key = client.headers["Authorization"].removeprefix("Bearer ")
        lobby = tmp / "lobby.mp4"
        write_video(lobby_scene(), lobby)
        videos = {"Lobby": register_upload(client, lobby, "Lobby")}
        if street:
            videos["Street"] = register_upload(client, vtest_path(), "Street")
        for video_id in videos.values():
            client.post(f"/api/product/videos/{video_id}/execute").raise_for_status()
            wait_video(client, video_id, {"succeeded"}, timeout_s=900)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            page = browser.new_context(viewport=VIEWPORT).new_page()
            _open(page, service.url, key, "Lobby")
            _lobby_views(page)
            print(f"lobby page: {_whole(page, 'lobby-page.jpg')} px tall")
            if "Street" in videos:
                _open(page, service.url, key, "Street")
                print(f"street page: {_whole(page, 'street-page.jpg')} px tall")
            browser.close()


if __name__ == "__main__":
    main()
