"""Following a live HLS playlist: the live edge, windows without gap or overlap, the ends.

The stream is a real local live server (``testkit.live_hls``) whose segments appear when
the follower waits: its ``sleep`` shows the next segment instead of sleeping, so every window is
exact and nothing is timed.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from synthetic import lobby_scene
from tasks.decode.hls import HlsLimits, parse_media
from tasks.decode.live import LiveFollower, live_edge
from testkit.live_hls import LiveHls

LIMITS = HlsLimits(600.0, 1 << 30, 4096, 4096, 10.0, allow_private=True)


@pytest.fixture(scope="module")
def scene_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("live")


@pytest.fixture
def stream(tmp_path: Path) -> Iterator[LiveHls]:
    # Segments appear only when the follower waits (interval far beyond any test).
    live = LiveHls(lobby_scene(), tmp_path / "hls", history=4, keep=6, interval_s=3600.0)
    live.start()
    yield live
    live.stop()


def _follower(live: LiveHls, stop: list[bool] | None = None, lead_s: float = 2.0) -> LiveFollower:
    asked = stop if stop is not None else [False]

    def sleep(_seconds: float) -> None:
        if live.shown < len(live.segments):
            live._show(live.shown + 1)

    return LiveFollower(live.url, LIMITS, sleep=sleep, stopped=lambda: asked[0], lead_s=lead_s)


def test_the_live_edge_is_three_target_durations_from_the_end() -> None:
    text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:40\n" + "".join(
        f"#EXTINF:2.0,\ns{n}.ts\n" for n in range(40, 50)
    )
    playlist = parse_media(text, "http://h/live.m3u8")
    assert [s.sequence for s in playlist.segments][:2] == [40, 41]
    assert not playlist.ended
    edge = live_edge(playlist)
    assert playlist.segments[edge].sequence == 47  # 47, 48, 49: 6 s = three target durations
    short = parse_media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n", "http://h/x")
    assert live_edge(short) == 0


def test_a_discontinuity_is_read_on_the_segment_after_it() -> None:
    text = (
        "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:7\n#EXTINF:2,\na.ts\n"
        "#EXT-X-DISCONTINUITY\n#EXTINF:2,\nb.ts\n#EXTINF:2,\nc.ts\n"
    )
    segments = parse_media(text, "http://h/x").segments
    assert [(s.sequence, s.discontinuity) for s in segments] == [
        (7, False),
        (8, True),
        (9, False),
    ]


def test_windows_start_at_the_edge_and_follow_without_gap_or_overlap(
    stream: LiveHls, tmp_path: Path
) -> None:
    follower = _follower(stream)
    first = follower.window(tmp_path / "w0.ts", 4.0, 600.0)
    # Four segments listed (0..3): the edge is segment 1, not the history's start.
    assert (first.first_sequence, first.next_sequence, first.segments) == (1, 3, 2)
    assert first.start_s == 0.0 and first.lead_s == 0.0
    assert first.duration_s == pytest.approx(sum(stream.durations[1:3]))
    second = follower.window(tmp_path / "w1.ts", 6.0, 600.0)
    assert (second.first_sequence, second.next_sequence, second.segments) == (3, 6, 3)
    assert second.start_s == pytest.approx(first.duration_s)
    assert second.lead_s == pytest.approx(stream.durations[2])  # the last segment of window 1
    lead = (stream.root / stream.segments[2]).read_bytes()
    own = b"".join((stream.root / stream.segments[n]).read_bytes() for n in (3, 4, 5))
    assert second.path.read_bytes() == lead + own
    assert second.ended is None and not second.stopped


def test_each_window_starts_at_its_first_own_segment_s_program_date_time(tmp_path: Path) -> None:
    """The first window's is the session's time 0: the live edge's moment, not the history's;
    the lead-in does not move a later window's."""
    started = datetime(2026, 11, 20, 22, 0, tzinfo=UTC)
    hls = tmp_path / "hls"
    live = LiveHls(lobby_scene(), hls, history=4, keep=6, interval_s=3600.0, started_at=started)
    live.start()
    try:
        follower = _follower(live)
        first = follower.window(tmp_path / "w0.ts", 4.0, 600.0)  # segments 1, 2 (the edge: 1)
        second = follower.window(tmp_path / "w1.ts", 6.0, 600.0)  # 3, 4, 5 after a lead-in
    finally:
        live.stop()
    assert first.started_at == live.moment_of(1) > started
    assert second.started_at == live.moment_of(3)
    assert (second.started_at - first.started_at).total_seconds() == pytest.approx(second.start_s)


def test_the_lead_in_is_the_last_segments_that_make_lead_s(stream: LiveHls, tmp_path: Path) -> None:
    follower = _follower(stream, lead_s=5.0)
    follower.window(tmp_path / "w0.ts", 4.0, 600.0)  # segments 1, 2
    second = follower.window(tmp_path / "w1.ts", 6.0, 600.0)  # 3, 4, 5
    assert second.lead_s == pytest.approx(sum(stream.durations[1:3]))  # all there was: 4 s
    third = follower.window(tmp_path / "w2.ts", 2.0, 600.0)  # 6
    assert third.lead_s == pytest.approx(sum(stream.durations[3:6]))  # 3, 4, 5: 6 s >= 5 s
    lead = b"".join((stream.root / stream.segments[n]).read_bytes() for n in (3, 4, 5))
    assert third.path.read_bytes() == lead + (stream.root / stream.segments[6]).read_bytes()


def test_a_stream_that_ends_or_stalls_ends_the_window(stream: LiveHls, tmp_path: Path) -> None:
    follower = _follower(stream)
    follower.window(tmp_path / "w0.ts", 4.0, 600.0)
    stream.end()
    ended = follower.window(tmp_path / "w1.ts", 60.0, 600.0)
    assert ended.ended == "ended" and ended.segments == 1  # segment 3, then the ENDLIST

    stalled = LiveFollower(stream.url, LIMITS, sleep=lambda _s: None, stopped=lambda: False)
    stream.ended = False
    stream._show(stream.shown)  # the ENDLIST gone: live again, but nothing new ever comes
    window = stalled.window(tmp_path / "w2.ts", 60.0, 600.0)
    assert window.ended == "stalled"


def test_a_stop_closes_the_window_with_what_it_has(stream: LiveHls, tmp_path: Path) -> None:
    asked = [False]
    follower = _follower(stream, asked)
    follower.window(tmp_path / "w0.ts", 4.0, 600.0)  # segments 1 and 2; 3 is listed already
    waits = follower.sleep

    def stop_while_waiting(seconds: float) -> None:
        waits(seconds)  # segment 4 appears meanwhile, and the stop comes
        asked[0] = True

    follower.sleep = stop_while_waiting
    window = follower.window(tmp_path / "w1.ts", 60.0, 600.0)
    assert window.stopped and window.segments == 1 and window.next_sequence == 4
    # A stop asked before a window begins closes it at once, empty: segment 4 stays unread.
    empty = follower.window(tmp_path / "w2.ts", 60.0, 600.0)
    assert empty.stopped and empty.segments == 0 and empty.next_sequence == 4


def test_the_hard_bound_is_never_passed(stream: LiveHls, tmp_path: Path) -> None:
    follower = _follower(stream)
    window = follower.window(tmp_path / "w0.ts", 60.0, 5.0)
    assert window.duration_s <= 5.0 and window.segments == 2


def test_segments_that_slid_out_unfetched_drop_the_lead_in(stream: LiveHls, tmp_path: Path) -> None:
    follower = _follower(stream)
    follower.window(tmp_path / "w0.ts", 4.0, 600.0)  # segments 1, 2; next is 3
    for _ in range(6):  # the stream runs on while nobody reads it: segment 3 slides out
        stream._show(stream.shown + 1)
    window = follower.window(tmp_path / "w1.ts", 2.0, 600.0)
    assert window.first_sequence == stream.shown - stream.keep
    assert window.lead_s == 0.0
