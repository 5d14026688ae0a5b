"""The dashboard's search box in real headless Chromium, over the workspace of KNOWN truth that
``tests/api/test_search.py`` processes (the lobby and a gate clip of acme, the gate clip of
globex): each planted text is found in the video and at the time it was shown and nowhere else,
the moving things are those of the truth, each once, and every list is the REST search's, hit
for hit. (A click on a hit plays its video from its time: ``test_player_browser.py``.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from storage.artifacts.hits import normalize_text
from tests.api.browser import open_page, sign_in
from tests.api.test_search import TEXTS, THINGS, clips, workspace

pytestmark = [pytest.mark.browser, pytest.mark.slow]
__all__ = ["clips", "workspace"]  # the fixtures this module shares with test_search.py


@pytest.fixture
def page() -> Iterator[Any]:
    yield from open_page()


def _shown(page: Any, q: str) -> list[dict[str, Any]]:
    """The hits the search box lists for ``q``: id, video, start and what matched."""
    page.evaluate("() => document.getElementById('search-hits').replaceChildren()")
    page.fill("#search-q", q)
    page.click("#search-form button")
    page.locator("#search-hits li").first.wait_for()
    hits: list[dict[str, Any]] = page.evaluate(
        "() => [...document.querySelectorAll('#search-hits li.hit')].map(li => {"
        " const a = li.querySelector('a.hit-link');"
        " return {hit_id: li.dataset.hitId, video_id: a.dataset.videoId,"
        " start_s: Number(a.dataset.startS), what: li.children[2].textContent}; })"
    )
    return hits


def _rest(client: httpx.Client, q: str) -> list[tuple[str, str]]:
    found = client.get("/api/product/search", params={"q": q})
    assert found.status_code == 200, found.text
    return [(h["hit_id"], h["video_id"]) for h in found.json()["data"]]


def test_the_search_box_finds_every_planted_text_and_thing_and_nothing_else(
    page: Any, workspace: dict[str, Any]
) -> None:
    acme, ids = workspace["acme"], workspace["ids"]
    names = {ids["lobby"]: "lobby", ids["gate"]: "gate"}
    sign_in(page, str(acme.base_url).rstrip("/"), acme.headers["Authorization"][7:])

    for video, shown in TEXTS.items():
        for text, start, end in shown:
            hits = _shown(page, f'"{text}"')
            assert [(h["hit_id"], h["video_id"]) for h in hits] == _rest(acme, f'"{text}"')
            assert hits and {names.get(h["video_id"]) for h in hits} == {video}, (text, hits)
            for hit in hits:
                assert normalize_text(text) in normalize_text(hit["what"]), hit
                assert start - 1.0 <= hit["start_s"] <= end, (text, hit)

    found = _shown(page, "objects")
    assert [(h["hit_id"], h["video_id"]) for h in found] == _rest(acme, "objects")
    assert ids["other"] not in {h["video_id"] for h in found}
    moving = [h for h in found if not h["what"].startswith("text ")]
    for video, things in THINGS.items():
        assert sum(names[h["video_id"]] == video for h in moving) == len(things), (video, moving)
