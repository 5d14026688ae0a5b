"""An HLS video's clock through the real ``process-video`` flow: the playlist's program date-time
of its first segment becomes the video's ``recorded_at`` (unless the client gave one), so a search
by clock time finds its hits at ``recorded_at + start_s``.

The stream is a synthetic scene (known truth) written as HLS with a known
``#EXT-X-PROGRAM-DATE-TIME``, served over real HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flows.process_video import ProcessVideoParams, process_video
from search.engine import SearchEngine
from search.filters import SearchFilters
from storage.artifacts.blobs import open_blob_store
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from testkit.hls import write_dated_hls
from testkit.media_server import MediaServer
from tests.fixtures.settings_env import export_settings
from ves.settings import Settings

pytestmark = pytest.mark.slow

STARTED = datetime(2026, 11, 20, 22, 0, 5, tzinfo=UTC)  # "after 22:00 on 2026-11-20"
CLIENT = "2026-11-19T08:00:00.000Z"


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dated_hls(tmp_path_factory.mktemp("hls-clock"), STARTED)


@pytest.fixture
def server(media: Path) -> Iterator[MediaServer]:
    with MediaServer(media) as srv:
        yield srv


def _process(
    catalog: Catalog,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    given: str | None,
) -> tuple[str, str]:
    """Register the HLS video (with the client's ``recorded_at``, if any) and process it."""
    export_settings(monkeypatch, settings)
    monkeypatch.setenv("VES_ALLOW_PRIVATE_SOURCES", "true")
    tenants = TenantStore(catalog)
    tenant = tenants.find_tenant("acme") or tenants.create_tenant("acme")
    new = NewVideo(tenant.tenant_id, "hls", "hls", url, None, given)
    video = VideoStore(catalog).create(new)
    run = RunStore(catalog).create(tenant.tenant_id, video.video_id, {})
    process_video(ProcessVideoParams(run_id=run.run_id))
    assert RunStore(catalog).get(run.run_id).state == "succeeded"
    return tenant.tenant_id, video.video_id


@pytest.mark.parametrize(
    ("folder", "given", "expected"),
    [
        ("dated", None, "2026-11-20T22:00:05.000Z"),  # the playlist's clock
        ("dated", CLIENT, CLIENT),  # the client's own value wins
        ("plain", None, None),  # no tag: unknown, as before
    ],
    ids=["from-playlist", "client-wins", "no-tag"],
)
def test_the_first_segment_s_program_date_time_is_recorded_at(
    catalog: Catalog,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    server: MediaServer,
    folder: str,
    given: str | None,
    expected: str | None,
) -> None:
    url = server.url(f"{folder}/index.m3u8")
    tenant_id, video_id = _process(catalog, settings, monkeypatch, url, given)
    assert VideoStore(catalog).get(tenant_id, video_id).recorded_at == expected


def test_a_search_by_clock_time_finds_the_hls_video_s_hits(
    catalog: Catalog, settings: Settings, monkeypatch: pytest.MonkeyPatch, server: MediaServer
) -> None:
    """ "After 22:00 on 2026-11-20" finds the hits, each at the playlist's clock + its time."""
    tenant_id, video_id = _process(
        catalog, settings, monkeypatch, server.url("dated/index.m3u8"), None
    )
    engine = SearchEngine(catalog, open_blob_store(settings))
    after = datetime(2026, 11, 20, 22, 0, tzinfo=UTC)
    hits = engine.search(tenant_id, SearchFilters(recorded_after=after), limit=200).hits
    assert hits and {h["video_id"] for h in hits} == {video_id}
    for hit in hits:
        assert hit["recorded_start"] == STARTED + timedelta(seconds=hit["start_s"])
    later = SearchFilters(recorded_after=STARTED + timedelta(minutes=1))
    assert engine.search(tenant_id, later).hits == []
