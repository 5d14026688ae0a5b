"""Video records: tenant scoping, newest-first cursor pages, state filter, upload completion."""

from __future__ import annotations

import pytest

from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from ves.errors import Conflict, NotFound


@pytest.fixture
def videos(catalog: Catalog) -> VideoStore:
    return VideoStore(catalog)


def _url_video(tenant_id: str, n: int) -> NewVideo:
    return NewVideo(tenant_id, f"clip {n}", "url", f"https://media.example.com/{n}.mp4")


def test_pages_walk_every_video_newest_first_exactly_once(
    tenants: TenantStore, videos: VideoStore
) -> None:
    tenant = tenants.create_tenant("acme")
    created = [videos.create(_url_video(tenant.tenant_id, n)).video_id for n in range(7)]
    seen: list[str] = []
    after = None
    while True:
        page = videos.list(tenant.tenant_id, state=None, limit=3, after=after)
        seen += [v.video_id for v in page.videos]
        if page.next_after is None:
            break
        after = page.next_after
    assert seen == created[::-1]


def test_state_filter_and_tenant_scoping(tenants: TenantStore, videos: VideoStore) -> None:
    acme = tenants.create_tenant("acme").tenant_id
    other = tenants.create_tenant("other").tenant_id
    url = videos.create(_url_video(acme, 1))
    upload = videos.create(NewVideo(acme, "up", "upload", None, {"filename": "a.mp4"}))
    videos.create(_url_video(other, 2))
    assert upload.state == "awaiting_upload" and url.state == "registered"
    listed = videos.list(acme, state="awaiting_upload", limit=10, after=None).videos
    assert [v.video_id for v in listed] == [upload.video_id]
    assert len(videos.list(acme, state=None, limit=10, after=None).videos) == 2
    with pytest.raises(NotFound):
        videos.get(other, url.video_id)


def test_an_upload_completes_once(tenants: TenantStore, videos: VideoStore) -> None:
    acme = tenants.create_tenant("acme").tenant_id
    video = videos.create(NewVideo(acme, "up", "upload", None, {"filename": "a.mp4"}))
    done = videos.complete_upload(acme, video.video_id, path="/x", sha256="ab" * 32, size=9)
    assert (done.state, done.source_sha256, done.source_bytes) == ("registered", "ab" * 32, 9)
    with pytest.raises(Conflict):
        videos.complete_upload(acme, video.video_id, path="/y", sha256="cd" * 32, size=9)


def test_recorded_at_is_noted_only_where_none_is_known(
    tenants: TenantStore, videos: VideoStore
) -> None:
    """The source's clock fills a missing ``recorded_at``; a client's own is never overwritten,
    and another tenant's video is not touched."""
    acme = tenants.create_tenant("acme").tenant_id
    other = tenants.create_tenant("other").tenant_id
    unknown = videos.create(_url_video(acme, 1))
    given = "2026-11-20T21:00:00.000Z"
    known = videos.create(NewVideo(acme, "k", "hls", "https://m.example/k.m3u8", None, given))
    at = "2026-11-20T22:00:00.000Z"
    assert not videos.note_recorded_at(other, unknown.video_id, at)
    assert videos.note_recorded_at(acme, unknown.video_id, at)
    assert not videos.note_recorded_at(acme, unknown.video_id, "2026-11-20T23:00:00.000Z")
    assert not videos.note_recorded_at(acme, known.video_id, at)
    assert videos.get(acme, unknown.video_id).recorded_at == at
    assert videos.get(acme, known.video_id).recorded_at == given
