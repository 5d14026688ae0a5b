"""Reads of published runs over real HTTP with the API's read cache: validators, 304s, and what
the cache must never do (serve another tenant, an older run, or an expired one)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from api.read_cache import ReadCache, Rendered, matches
from storage.catalog.database import Catalog
from storage.catalog.retention import RetentionStore
from tests.api.helpers import expect_problem, wait_done
from ves import __version__

DOCUMENTS = ("scene-graph", "timeline", "evidence-view", "cost")


def _thumbnail_url(client: httpx.Client, video_id: str) -> str:
    spans = client.get(f"/api/product/videos/{video_id}/evidence-view").json()["spans"]
    return str(spans[0]["frames"][0]["thumbnail_url"])


def _urls(client: httpx.Client, video_id: str) -> list[str]:
    documents = [f"/api/product/videos/{video_id}/{what}" for what in DOCUMENTS]
    return [*documents, _thumbnail_url(client, video_id)]


@pytest.mark.slow
def test_reads_carry_an_etag_and_answer_if_none_match_with_304(
    executed: tuple[httpx.Client, str, dict[str, Any]],
) -> None:
    client, video_id, video = executed
    for url in _urls(client, video_id):
        first, second = client.get(url), client.get(url)
        assert first.status_code == 200 and first.content == second.content  # kept, same bytes
        etag = first.headers["etag"]
        assert etag == second.headers["etag"] and video["latest_run"]["run_id"] in etag
        assert first.headers["cache-control"].startswith("private")
        unchanged = client.get(url, headers={"If-None-Match": f'W/"other", {etag}'})
        assert unchanged.status_code == 304 and not unchanged.content
        assert unchanged.headers["etag"] == etag
        assert client.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
    graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
    assert any("class" in o for o in graph["objects"])  # rendered by alias, as the model says


@pytest.mark.slow
def test_a_made_up_thumbnail_with_a_matching_etag_is_still_404(
    executed: tuple[httpx.Client, str, dict[str, Any]],
) -> None:
    client, video_id, video = executed
    run_id = video["latest_run"]["run_id"]
    url = _thumbnail_url(client, video_id)
    made_up = url.rsplit("/", 1)[0] + "/ev_00000000000000000000000000_0.jpg"
    forged = f'"{run_id}.ev_00000000000000000000000000_0.jpg.{__version__}"'
    answer = client.get(made_up, headers={"If-None-Match": forged})
    expect_problem(answer, 404, "not_found")


@pytest.mark.slow
def test_a_new_run_of_the_video_gets_a_new_etag_and_its_own_content(
    executed: tuple[httpx.Client, str, dict[str, Any]],
) -> None:
    client, video_id, video = executed
    old_run = video["latest_run"]["run_id"]
    before = {what: client.get(f"/api/product/videos/{video_id}/{what}") for what in DOCUMENTS}
    again = client.post(f"/api/product/videos/{video_id}/execute", json={"sample_fps": 2})
    assert again.status_code == 202, again.text
    new_run = wait_done(client, video_id)["latest_run"]["run_id"]
    assert new_run != old_run
    for what, old in before.items():
        url = f"/api/product/videos/{video_id}/{what}"
        now = client.get(url, headers={"If-None-Match": old.headers["etag"]})
        assert now.status_code == 200 and now.headers["etag"] != old.headers["etag"]
        assert now.json()["run_id"] == new_run and old.json()["run_id"] == old_run
    cost = client.get(f"/api/product/videos/{video_id}/cost").json()
    assert cost["frames"]["sampled"] < before["cost"].json()["frames"]["sampled"]  # 2 fps, not 5


@pytest.mark.slow
def test_another_tenant_with_the_ids_and_etags_still_gets_404(
    executed: tuple[httpx.Client, str, dict[str, Any]], processing: Any
) -> None:
    client, video_id, _ = executed
    other = processing("other")
    for url in _urls(client, video_id):
        etag = client.get(url).headers["etag"]  # now kept for acme
        expect_problem(other.get(url), 404, "not_found")
        expect_problem(other.get(url, headers={"If-None-Match": etag}), 404, "not_found")


@pytest.mark.slow
def test_an_expired_run_is_never_served_from_the_cache(
    executed: tuple[httpx.Client, str, dict[str, Any]], catalog: Catalog
) -> None:
    client, video_id, video = executed
    urls = _urls(client, video_id)
    etags = {url: client.get(url).headers["etag"] for url in urls}  # every read kept
    # Retention's catalog step; its files are still there, which the cache must not matter.
    assert RetentionStore(catalog).expire(video["latest_run"]["run_id"], "2030-01-01T00:00:00Z")
    *documents, thumbnail = urls
    for url in documents:
        body = expect_problem(client.get(url), 409, "not_ready")
        assert "expired" in str(body["detail"])
        expect_problem(client.get(url, headers={"If-None-Match": etags[url]}), 409, "not_ready")
    expect_problem(client.get(thumbnail), 404, "not_found")
    expect_problem(
        client.get(thumbnail, headers={"If-None-Match": etags[thumbnail]}), 404, "not_found"
    )


def _rendered(size: int) -> Rendered:
    return Rendered(b"x" * size, "application/octet-stream")


def test_the_cache_drops_the_least_recently_used_beyond_its_bytes() -> None:
    cache = ReadCache(max_bytes=10)
    renders: list[str] = []

    def render(name: str, size: int) -> Rendered:
        renders.append(name)
        return _rendered(size)

    def get(name: str, size: int = 4) -> None:
        cache.get_or_render(("t", "r", "p", name), lambda: render(name, size))

    for name in ("a", "b", "a", "c", "a", "b", "huge"):
        get(name, 11 if name == "huge" else 4)
    get("huge", 11)  # larger than the whole cache: never kept
    assert renders == ["a", "b", "c", "b", "huge", "huge"]  # "b" was least recent when "c" came


def test_a_cache_of_zero_bytes_keeps_nothing() -> None:
    cache = ReadCache(max_bytes=0)
    calls = [cache.get_or_render(("t", "r", "p", "a"), lambda: _rendered(1)) for _ in range(2)]
    assert calls[0] is not calls[1]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, False),
        ('"a"', True),
        ('W/"a"', True),
        ('"b", "a"', True),
        ("*", True),
        ('"b"', False),
    ],
)
def test_if_none_match_is_compared_weakly(header: str | None, expected: bool) -> None:
    assert matches(header, '"a"') is expected
