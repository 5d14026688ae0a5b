"""``#EXT-X-PROGRAM-DATE-TIME``: the clock time of an HLS run's time 0, against known playlists.

A segment's moment is its own tag's, or the last tag's plus the EXTINF durations since (RFC 8216
4.3.2.6); a malformed tag is ignored and logged. The fetched file's time 0 is the first segment
fetched, so ``started_at`` and the decoded source's ``recorded_at`` are that segment's moment.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from tasks.context import SourceRef
from tasks.decode.hls import HlsLimits, fetch_hls, parse_media
from tasks.decode.stage import decode_source
from testkit.hls import write_dated_hls
from testkit.media_server import MediaServer
from ves.settings import Settings

LIMITS = HlsLimits(600.0, 1 << 30, 3840, 2160, 3.0, True)
# 23:00 in Paris (+01:00) is 22:00 UTC: the moment, not its spelling, is kept.
STARTED = datetime(2026, 11, 20, 23, 0, 0, 500_000, tzinfo=timezone(timedelta(hours=1)))
STARTED_UTC = "2026-11-20T22:00:00.500Z"


def _playlist(*lines: str) -> str:
    return "\n".join(["#EXTM3U", "#EXT-X-TARGETDURATION:2", *lines, "#EXT-X-ENDLIST"]) + "\n"


def _moments(text: str) -> list[datetime | None]:
    return [s.program_date_time for s in parse_media(text, "http://h/x.m3u8").segments]


def at(hh: int, mm: int, ss: float) -> datetime:
    return datetime(2026, 11, 20, hh, mm, tzinfo=UTC) + timedelta(seconds=ss)


# --- parse_media ------------------------------------------------------------------------------


def test_segments_after_a_tag_continue_by_their_durations() -> None:
    text = _playlist(
        "#EXTINF:2.0,",
        "a.ts",  # before any tag: no moment
        "#EXT-X-PROGRAM-DATE-TIME:2026-11-20T22:00:00Z",
        "#EXTINF:2.5,",
        "b.ts",
        "#EXTINF:1.5,",
        "c.ts",
        "#EXT-X-DISCONTINUITY",
        "#EXT-X-PROGRAM-DATE-TIME:2026-11-20T22:10:00.250+00:00",  # a new tag resets the clock
        "#EXTINF:2.0,",
        "d.ts",
        "#EXTINF:2.0,",
        "e.ts",
    )
    assert _moments(text) == [
        None,
        at(22, 0, 0),
        at(22, 0, 2.5),
        at(22, 10, 0.25),
        at(22, 10, 2.25),
    ]


@pytest.mark.parametrize(
    "value",
    ["yesterday", "2026-11-20T25:00:00Z", "2026-11-20T22:00:00", "", "2026-13-01T00:00:00Z"],
    ids=["words", "hour-25", "no-offset", "empty", "month-13"],
)
def test_a_malformed_tag_is_ignored_and_logged(
    value: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Ignored as if absent: the clock before it goes on; the playlist still parses."""
    text = _playlist(
        f"#EXT-X-PROGRAM-DATE-TIME:{value}",
        "#EXTINF:2.0,",
        "a.ts",
        "#EXT-X-PROGRAM-DATE-TIME:2026-11-20T22:00:00Z",
        "#EXTINF:2.0,",
        "b.ts",
        f"#EXT-X-PROGRAM-DATE-TIME:{value}",
        "#EXTINF:2.0,",
        "c.ts",
    )
    with caplog.at_level(logging.WARNING, logger="tasks.decode.hls"):
        assert _moments(text) == [None, at(22, 0, 0), at(22, 0, 2)]
    assert [r.getMessage() for r in caplog.records].count(
        f"ignored a malformed #EXT-X-PROGRAM-DATE-TIME: {value!r}"
    ) == 2


# --- fetch_hls and decode_source over a real server -------------------------------------------


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dated_hls(tmp_path_factory.mktemp("pdt"), STARTED)


@pytest.fixture
def server(media: Path) -> Iterator[MediaServer]:
    with MediaServer(media) as srv:
        yield srv


def test_the_first_fetched_segment_gives_started_at(server: MediaServer, tmp_path: Path) -> None:
    fetched = fetch_hls(server.url("dated/index.m3u8"), tmp_path / "a.ts", LIMITS)
    assert fetched.started_at == STARTED
    plain = fetch_hls(server.url("plain/index.m3u8"), tmp_path / "b.ts", LIMITS)
    assert plain.started_at is None


def test_a_sliding_playlist_s_first_listed_segment_is_time_0(
    server: MediaServer, tmp_path: Path
) -> None:
    """Segment 0 slid out, the tag names segment 1: the fetched file starts there, and so does
    its clock (a bound of 2 s fetches that one segment only)."""
    moment = STARTED + timedelta(seconds=2)
    text = _playlist(
        "#EXT-X-MEDIA-SEQUENCE:1",
        f"#EXT-X-PROGRAM-DATE-TIME:{moment.isoformat()}",
        "#EXTINF:2.0,",
        "segment_001.ts",
        "#EXTINF:2.0,",
        "segment_002.ts",
    )
    url = server.add_route("dated/slid.m3u8", body=text.encode())
    bounded = HlsLimits(2.0, 1 << 30, 3840, 2160, 3.0, True)
    fetched = fetch_hls(url, tmp_path / "slid.ts", bounded)
    assert fetched.started_at == moment
    assert [r.path for r in server.requests if r.path.endswith(".ts")] == ["/dated/segment_001.ts"]


@pytest.mark.parametrize(("folder", "expected"), [("dated", STARTED_UTC), ("plain", None)])
def test_decode_source_says_when_time_0_was_recorded(
    server: MediaServer, tmp_path: Path, folder: str, expected: str | None
) -> None:
    settings = Settings(data_dir=tmp_path, allow_private_sources=True)
    ref = SourceRef("hls", server.url(f"{folder}/index.m3u8"), None)
    info = decode_source(ref, tmp_path, settings)
    assert info.recorded_at == expected
    assert info.duration_s == pytest.approx(6.0, abs=0.15)  # the whole stream, from its time 0
