"""The video page's player in real headless Chromium: an uploaded recording, processed for
real, plays from the time of whatever is clicked (a timeline mark, an evidence span, a search
hit, a #video=...&t=... link), and the evidence list stays compact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.media_server import MediaServer
from tests.api.browser import open_page, row_of, sign_in
from tests.api.helpers import upload_recording, wait_done

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
TITLE = "Lobby upload"
FRAME_S = 0.1  # the lobby clip's 10 fps
# This page (33 spans, 1280x900) measured 12,362 px tall with every span open (its thumbnails
# and note form each; the evidence list alone 7,393 px) before the list was compact, and 4,240
# px (the list 1,448 px: a 40 px line per span and the one open) after. The bounds leave room
# for other fonts and a few more spans, and stay far below the old page.
MAX_PAGE_PX = 5000
MAX_EVIDENCE_PX = 2000
HLS = "application/vnd.apple.mpegurl"


@pytest.fixture
def page() -> Iterator[Any]:
    yield from open_page()


@pytest.fixture
def processed_upload(processing: Any, lobby_root: Path) -> tuple[Any, str]:
    """(a client of acme, the id of the uploaded lobby recording, processed to success)."""
    client = processing("acme")
    video_id = upload_recording(client, (lobby_root / "lobby.mp4").read_bytes(), TITLE)
    assert client.post(f"/api/product/videos/{video_id}/execute").status_code == 202
    assert wait_done(client, video_id)["state"] == "succeeded"
    return client, video_id


@pytest.fixture
def signed_in(page: Any, processed_upload: tuple[Any, str]) -> tuple[str, str]:
    """The dashboard signed in as acme: (the API's base URL, the processed video's id)."""
    client, video_id = processed_upload
    base = str(client.base_url).rstrip("/")
    sign_in(page, base, client.headers["Authorization"][7:])
    return base, video_id


def _watch_seeks(page: Any) -> None:
    """Record the player's time at every ``seeked`` from now on (in ``window.seeks``)."""
    page.wait_for_function("() => document.getElementById('player').readyState >= 1")
    page.evaluate(
        "() => { const v = document.getElementById('player'); window.seeks = [];"
        " v.addEventListener('seeked', () => window.seeks.push(v.currentTime)); }"
    )


def _expect_seek(page: Any, t: float) -> None:
    """The player seeked to ``t`` (within two frames) and plays from there."""
    page.wait_for_function(
        "t => window.seeks.some(s => Math.abs(s - t) <= 2 * 0.1)", arg=t, timeout=10_000
    )
    page.wait_for_function(
        "t => { const v = document.getElementById('player');"
        " return !v.paused && v.currentTime > t - 0.2; }",
        arg=t,
        timeout=10_000,
    )


def _click_event_mark(page: Any) -> float:
    """Click a timeline mark past the first second; its time (that of what was hit)."""
    marks = page.locator("#timeline-chart .event")
    for i in range(marks.count()):
        if float(marks.nth(i).get_attribute("data-t")) <= 1.0:
            continue
        marks.nth(i).scroll_into_view_if_needed()
        box = marks.nth(i).bounding_box()
        if box:
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            hit = page.evaluate(
                "([x, y]) => document.elementFromPoint(x, y).closest('[data-t]').dataset.t",
                [x, y],
            )
            page.mouse.click(x, y)
            return float(hit)
    raise AssertionError("no timeline mark past 1 s")


def test_what_is_clicked_plays_the_video_from_its_time(
    page: Any, signed_in: tuple[str, str]
) -> None:
    row_of(page, TITLE).locator("td").first.click()
    page.wait_for_selector("#evidence li.span")
    page.locator("#audit-head").filter(has_text="Chain head").wait_for()  # the page is drawn
    _watch_seeks(page)
    assert page.locator("#player").get_attribute("src").startswith("/api/media/videos/")

    _expect_seek(page, _click_event_mark(page))

    spans = page.locator("#evidence li.span")
    chosen = spans.nth(min(4, spans.count() - 1))
    chosen.locator(".span-time").click()
    _expect_seek(page, float(chosen.get_attribute("data-start-s")))
    assert "highlight" in (chosen.get_attribute("class") or "")
    assert page.locator("#evidence .note-form").count() == 1  # one form, the chosen span's
    assert chosen.locator(".note-form").count() == 1
    height = page.evaluate("() => document.documentElement.scrollHeight")
    listed = page.locator("#evidence").evaluate("e => e.getBoundingClientRect().height")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "player.png"), full_page=True)
    assert height < MAX_PAGE_PX and listed < MAX_EVIDENCE_PX, (height, listed, spans.count())


def test_a_link_with_a_time_and_a_search_hit_play_from_their_time(
    page: Any, signed_in: tuple[str, str]
) -> None:
    base, video_id = signed_in
    page.goto(f"{base}/dashboard#video={video_id}&t=7.5")  # the tab keeps its key
    _watch_seeks(page)
    page.evaluate("() => { window.seeks = [document.getElementById('player').currentTime]; }")
    _expect_seek(page, 7.5)
    assert page.locator("#detail-title").text_content() == TITLE

    page.fill("#search-q", '"EXIT 3"')  # quoted: unquoted, 'exit' reads as the exit event
    page.click("#search-form button")
    hit = page.locator("#search-hits a.hit-link").first
    hit.wait_for()
    assert hit.get_attribute("data-video-id") == video_id
    thumb = page.locator("#search-hits img").first
    assert thumb.evaluate("i => i.decode().then(() => i.naturalWidth)") > 0
    start = float(hit.get_attribute("data-start-s"))
    assert 3.5 <= start <= 9.0  # EXIT 3 is shown from 4 s to 9 s
    hit.click()
    _expect_seek(page, start)

    page.fill("#search-q", "did a helicopter land")
    page.click("#search-form button")
    page.locator("#search-error").filter(has_text="helicopter").wait_for()
    assert page.locator("#search-interpreted").text_content().startswith("understood: ")
    assert page.locator("#search-hits li").count() == 0


def test_a_url_source_says_why_and_an_hls_source_plays_where_it_can(
    page: Any, client: Any, media: MediaServer
) -> None:
    """A URL source's bytes are not kept, and the page says so; an HLS source plays from its
    playlist where the browser plays HLS itself, else the page says that."""
    for title, url in (
        ("Gate URL", media.url("clip.mp4")),
        ("Dock HLS", media.url("hls/index.m3u8")),
    ):
        added = client.post("/api/videos/add", json={"url": url, "title": title})
        assert added.status_code == 201, added.text
    sign_in(page, str(client.base_url).rstrip("/"), client.headers["Authorization"][7:])
    row_of(page, "Gate URL").locator("td").first.click()
    page.locator("#player-note").filter(has_text="not kept").wait_for()
    assert page.locator("#player").is_hidden()
    row_of(page, "Dock HLS").locator("td").first.click()
    playlist = media.url("hls/index.m3u8")
    if page.evaluate(f"() => document.createElement('video').canPlayType('{HLS}')"):
        # Chromium plays HLS itself since 2025 (156 here answers 'maybe'): the playlist plays.
        page.wait_for_function("() => document.getElementById('player').readyState >= 1")
        assert page.locator("#player").get_attribute("src") == playlist
        assert page.evaluate("() => document.getElementById('player').duration") == 2.0
    else:
        page.locator("#player-note").filter(has_text="cannot play HLS").wait_for()
        assert page.locator("#player-note code").text_content() == playlist


# seekTo plays from the new time; the viewer pauses before that playback has begun (the
# play() promise is still pending, and the pause rejects it with an AbortError).
_PAUSE_DURING_PLAY_START = """async () => {
  const { seekTo } = await import('/dashboard/static/player.js');
  const v = document.getElementById('player');
  seekTo(3.0);
  v.pause();
  await new Promise((done) => setTimeout(done, 1500));
  return { paused: v.paused, muted: v.muted, t: v.currentTime };
}"""


def test_a_pause_while_playback_is_starting_stands(page: Any, signed_in: tuple[str, str]) -> None:
    """A pause given while a click's playback is still starting is the viewer's and stands: the
    player neither plays on 1.5 s later nor mutes itself (a retry meant for a browser's refusal
    of sound without a gesture once overrode it, and the boxes' tests saw the video run on)."""
    row_of(page, TITLE).locator("td").first.click()
    page.wait_for_function("() => document.getElementById('player').readyState >= 2")
    state = page.evaluate(_PAUSE_DURING_PLAY_START)
    assert state["paused"] and not state["muted"], state
    assert abs(state["t"] - 3.0) <= FRAME_S, state
