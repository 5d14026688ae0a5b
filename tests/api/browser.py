"""What the Chromium tests of the dashboard share: the browser, signing in, a video's row."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

CHROMIUM = "/usr/bin/chromium"


def open_page() -> Iterator[Any]:
    """A page of headless Chromium (1280x900), closed with its browser afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        yield context.new_page()
        context.close()
        browser.close()


def sign_in(page: Any, base_url: str, key: str) -> None:
    page.goto(f"{base_url}/dashboard")
    page.fill("#key", key)
    page.click("#sign-in-form button")
    page.wait_for_selector("#workspace:not([hidden])")


def row_of(page: Any, title: str) -> Any:
    """The listing's row of the video titled ``title``."""
    return page.locator("#videos tr").filter(has=page.get_by_text(title, exact=True))
