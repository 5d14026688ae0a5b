"""HLS sources against known playlists and a real HTTP server: parsing, variant choice, fetching.

The fetched file is checked against TRUTH: it is byte for byte the concatenation of the segments
the playlist names (so its sha256 is known), and it decodes to the scene's frame count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import av
import pytest

from synthetic import GroundTruth, SceneSpec, ground_truth, lobby_scene
from tasks.decode.hls import (
    HlsLimits,
    MediaPlaylist,
    Segment,
    Variant,
    choose_variant,
    fetch_hls,
    parse_master,
    parse_media,
)
from testkit.hls import write_hls
from testkit.media_server import MediaServer
from ves.errors import LimitExceeded, SourceInvalid, SourceRejected, SourceUnreachable

BASE = "https://media.example.com/live/master.m3u8"
METADATA = "http://169.254.169.254/latest/meta-data/segment.ts"
SEGMENTS = ("segment_000.ts", "segment_001.ts", "segment_002.ts")


def limits(
    *,
    max_duration_s: float = 600.0,
    max_bytes: int = 1 << 30,
    max_width: int = 3840,
    max_height: int = 2160,
) -> HlsLimits:
    """Bounds of a fetch from the local test server (private addresses allowed)."""
    return HlsLimits(max_duration_s, max_bytes, max_width, max_height, 3.0, True)


def media_playlist(
    names: tuple[str, ...],
    *,
    sequence: int = 0,
    target_s: int = 2,
    ended: bool = True,
    extra: str = "",
) -> str:
    """A media playlist of 2 s segments named ``names``."""
    lines = ["#EXTM3U", f"#EXT-X-TARGETDURATION:{target_s}", f"#EXT-X-MEDIA-SEQUENCE:{sequence}"]
    lines += [extra] if extra else []
    for name in names:
        lines += ["#EXTINF:2.000000,", name]
    lines += ["#EXT-X-ENDLIST"] if ended else []
    return "\n".join(lines) + "\n"


# --- parse_master -----------------------------------------------------------------------------

MASTER = """#EXTM3U
#EXT-X-VERSION:4
#EXT-X-STREAM-INF:BANDWIDTH=200000,CODECS="avc1.42e00a,mp4a.40.2",RESOLUTION=320x180
low/index.m3u8
#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,URI="low/iframes.m3u8"

#EXT-X-STREAM-INF:RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",BANDWIDTH=1000000
# a comment between the tag and its URI
/abs/hi.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=5000000,NAME="odd, name=with commas"
https://cdn.example.com/x.m3u8
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            MASTER,
            [
                Variant("https://media.example.com/live/low/index.m3u8", 200_000, (320, 180)),
                Variant("https://media.example.com/abs/hi.m3u8", 1_000_000, (1280, 720)),
                Variant("https://cdn.example.com/x.m3u8", 5_000_000, None),
            ],
            id="variants",
        ),
        pytest.param(media_playlist(SEGMENTS), [], id="media-playlist-has-no-variants"),
        pytest.param("", [], id="empty"),
    ],
)
def test_parse_master(text: str, expected: list[Variant]) -> None:
    assert parse_master(text, BASE) == expected


# --- parse_media ------------------------------------------------------------------------------

VOD = """#EXTM3U
#EXT-X-VERSION:3
#EXT-X-TARGETDURATION:4
#EXT-X-MEDIA-SEQUENCE:7
#EXTINF:4.0,
a.ts
#EXTINF:3.5,title, with a comma
sub/b.ts
#EXT-X-KEY:METHOD=NONE
#EXTINF:2.25,
https://cdn.example.com/c.ts
#EXT-X-ENDLIST
"""
LIVE = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.0,\nlive0.ts\n#EXTINF:6.0,\nlive1.ts\n"
FMP4 = """\ufeff#EXTM3U
#EXT-X-TARGETDURATION:2
#EXT-X-MEDIA-SEQUENCE:3
#EXT-X-MAP:URI="init,v1.mp4",BYTERANGE="720@0"
#EXTINF:2.0,
seg3.m4s
#EXT-X-ENDLIST
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            VOD,
            MediaPlaylist(
                (
                    Segment("https://media.example.com/live/a.ts", 4.0, 7),
                    Segment("https://media.example.com/live/sub/b.ts", 3.5, 8),
                    Segment("https://cdn.example.com/c.ts", 2.25, 9),
                ),
                target_duration_s=4.0,
                ended=True,
            ),
            id="vod",
        ),
        pytest.param(
            LIVE,
            MediaPlaylist(
                (
                    Segment("https://media.example.com/live/live0.ts", 6.0, 0),
                    Segment("https://media.example.com/live/live1.ts", 6.0, 1),
                ),
                target_duration_s=6.0,
                ended=False,
            ),
            id="live-without-media-sequence",
        ),
        pytest.param(
            FMP4,
            MediaPlaylist(
                (Segment("https://media.example.com/live/seg3.m4s", 2.0, 3),),
                target_duration_s=2.0,
                ended=True,
                init_uri="https://media.example.com/live/init,v1.mp4",
            ),
            id="fmp4-init-map-with-quoted-comma-and-bom",
        ),
    ],
)
def test_parse_media(text: str, expected: MediaPlaylist) -> None:
    assert parse_media(text, BASE) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI="k.bin"\n#EXTINF:2,\na.ts\n', "encrypted"),
        ('#EXTM3U\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI="k,1.bin"\n', "encrypted"),
        ("<html><body>Not here</body></html>\n", "no #EXTM3U"),
        ("", "no #EXTM3U"),
        ("#EXTINF:2.0,\na.ts\n#EXTM3U\n", "no #EXTM3U"),
        (MASTER, "master playlist again"),
    ],
    ids=["aes-128", "sample-aes", "html", "empty", "header-not-first", "master"],
)
def test_parse_media_refuses(text: str, message: str) -> None:
    with pytest.raises(SourceInvalid, match=message):
        parse_media(text, BASE)


@pytest.mark.parametrize(
    "text",
    [
        "#EXTM3U\n#EXTINF:abc,\na.ts\n",
        "#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:x\n",
        "#EXTM3U\n#EXT-X-TARGETDURATION:\n",
    ],
    ids=["extinf", "media-sequence", "target-duration"],
)
def test_malformed_numbers_are_source_invalid(text: str) -> None:
    with pytest.raises(SourceInvalid):
        parse_media(text, BASE)


def test_malformed_bandwidth_is_source_invalid() -> None:
    with pytest.raises(SourceInvalid):
        parse_master("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1.5e6\nv.m3u8\n", BASE)


# --- choose_variant ---------------------------------------------------------------------------

UHD = Variant("uhd.m3u8", 9_000_000, (3840, 2160))
FHD = Variant("fhd.m3u8", 5_000_000, (1920, 1080))
HD = Variant("hd.m3u8", 3_000_000, (1280, 720))
UNSIZED = Variant("unsized.m3u8", 4_000_000, None)
SD = Variant("sd.m3u8", 800_000, (640, 360))


@pytest.mark.parametrize(
    ("variants", "bounds", "expected"),
    [
        ([UHD, FHD, HD, SD], (3840, 2160), UHD),
        ([UHD, FHD, HD, SD], (1920, 1080), FHD),  # exactly at the bounds fits
        ([SD, HD, FHD, UHD], (1919, 1080), HD),  # order does not matter
        ([UHD, FHD, HD, SD], (1920, 1079), HD),  # height alone can rule a variant out
        ([UHD, HD, UNSIZED], (1280, 720), UNSIZED),  # an unknown size counts as fitting
        ([UHD, FHD, HD], (320, 240), HD),  # nothing fits: the smallest bandwidth
        ([FHD], (320, 240), FHD),
    ],
)
def test_choose_variant(
    variants: list[Variant], bounds: tuple[int, int], expected: Variant
) -> None:
    chosen = choose_variant(variants, limits(max_width=bounds[0], max_height=bounds[1]))
    assert chosen == expected


# --- fetch_hls against a real server ----------------------------------------------------------


@dataclass(frozen=True)
class Stream:
    """A written HLS VOD stream: its folder, truth, and the bytes of each segment."""

    root: Path
    truth: GroundTruth
    segments: tuple[bytes, ...]

    def joined(self, *indexes: int) -> bytes:
        return b"".join(self.segments[i] for i in indexes)


@pytest.fixture(scope="module")
def stream(tmp_path_factory: pytest.TempPathFactory) -> Stream:
    """6 s at 10 fps with a 2 s GOP: exactly three 2 s segments."""
    root = tmp_path_factory.mktemp("hls")
    spec = SceneSpec(duration_s=6.0, objects=lobby_scene().objects[:1])
    write_hls(spec, root)
    assert sorted(p.name for p in root.glob("*.ts")) == list(SEGMENTS)
    return Stream(root, ground_truth(spec), tuple((root / n).read_bytes() for n in SEGMENTS))


@pytest.fixture
def server(stream: Stream) -> Iterator[MediaServer]:
    with MediaServer(stream.root) as srv:
        yield srv


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def gets(srv: MediaServer, path: str) -> int:
    """How many times the server was asked for ``path``."""
    return sum(1 for r in srv.requests if r.method == "GET" and r.path == path)


def test_fetch_vod_gives_the_concatenated_segments(
    server: MediaServer, stream: Stream, tmp_path: Path
) -> None:
    fetched = fetch_hls(server.url("index.m3u8"), tmp_path / "source.ts", limits())
    expected = stream.joined(0, 1, 2)
    assert fetched.path.read_bytes() == expected
    assert (fetched.sha256, fetched.size) == (sha256(expected), len(expected))
    with av.open(str(fetched.path)) as container:
        video = container.streams.video[0]
        frames = sum(1 for _ in container.decode(video))
        duration_s = (container.duration or 0) / av.time_base
    assert frames == stream.truth.frame_count == 60
    assert duration_s == pytest.approx(stream.truth.duration_s, abs=0.15)
    assert [gets(server, f"/{n}") for n in SEGMENTS] == [1, 1, 1]


def test_fetch_follows_the_master_to_the_richest_fitting_variant(
    server: MediaServer, stream: Stream, tmp_path: Path
) -> None:
    master = (
        "#EXTM3U\n"
        "#EXT-X-STREAM-INF:BANDWIDTH=90000000,RESOLUTION=7680x4320\nhuge/index.m3u8\n"
        '#EXT-X-STREAM-INF:BANDWIDTH=500000,CODECS="avc1.64000d,mp4a.40.2",RESOLUTION=320x240\n'
        "index.m3u8\n"
        "#EXT-X-STREAM-INF:BANDWIDTH=100000,RESOLUTION=160x120\nlow/index.m3u8\n"
    )
    url = server.add_route("master.m3u8", body=master.encode())
    fetched = fetch_hls(url, tmp_path / "source.ts", limits())
    assert fetched.sha256 == sha256(stream.joined(0, 1, 2))
    assert gets(server, "/huge/index.m3u8") == gets(server, "/low/index.m3u8") == 0


def test_relative_uris_resolve_against_the_redirected_playlist(
    server: MediaServer, stream: Stream, tmp_path: Path
) -> None:
    url = server.add_route("short/link.m3u8", status=302, headers={"Location": "/index.m3u8"})
    fetched = fetch_hls(url, tmp_path / "source.ts", limits())
    assert fetched.sha256 == sha256(stream.joined(0, 1, 2))


@pytest.mark.parametrize(
    ("playlist", "redirect"),
    [
        pytest.param(media_playlist(("segment_000.ts", METADATA)), False, id="second-segment"),
        pytest.param(media_playlist((METADATA,)), False, id="only-segment"),
        pytest.param(
            media_playlist(SEGMENTS, extra=f'#EXT-X-MAP:URI="{METADATA}"'), False, id="init-map"
        ),
        pytest.param(media_playlist(("segment_000.ts", "hop.ts")), True, id="redirected-segment"),
    ],
)
def test_segments_are_checked_against_the_ssrf_policy(
    server: MediaServer, tmp_path: Path, playlist: str, redirect: bool
) -> None:
    if redirect:
        server.add_route("hop.ts", status=302, headers={"Location": METADATA})
    url = server.add_route("evil.m3u8", body=playlist.encode())
    with pytest.raises(SourceRejected, match=r"169\.254\.169\.254"):
        fetch_hls(url, tmp_path / "source.ts", limits())


def test_a_live_playlist_is_followed_until_it_ends(
    server: MediaServer, stream: Stream, tmp_path: Path
) -> None:
    """A sliding window: 0-1, then 1-2, then 2 and the end marker; each segment fetched once."""
    windows = [
        media_playlist(SEGMENTS[1:], sequence=1, ended=False),
        media_playlist(SEGMENTS[2:], sequence=2, ended=True),
    ]
    url = server.add_route("live.m3u8", body=media_playlist(SEGMENTS[:2], ended=False).encode())
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        server.add_route("live.m3u8", body=windows.pop(0).encode())

    fetched = fetch_hls(url, tmp_path / "source.ts", limits(), sleep=sleep)
    assert fetched.sha256 == sha256(stream.joined(0, 1, 2))
    assert slept == [1.0, 1.0]  # half the target duration between reloads
    assert [gets(server, f"/{n}") for n in SEGMENTS] == [1, 1, 1]


def test_a_live_playlist_stops_at_the_duration_bound(
    server: MediaServer, stream: Stream, tmp_path: Path
) -> None:
    url = server.add_route("live.m3u8", body=media_playlist(SEGMENTS, ended=False).encode())
    slept: list[float] = []
    fetched = fetch_hls(url, tmp_path / "source.ts", limits(max_duration_s=3.0), sleep=slept.append)
    assert fetched.sha256 == sha256(stream.joined(0, 1))  # 2 s < 3 s: one more, then stop
    assert slept == []
    assert gets(server, "/segment_002.ts") == 0


@dataclass
class FakeClock:
    """A monotonic clock that only moves when ``sleep`` is called."""

    now: float = 1000.0
    slept: list[float] = field(default_factory=list)

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_a_live_playlist_that_stops_growing_ends_with_what_arrived(
    server: MediaServer, stream: Stream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A playlist that does not grow for 3 target durations (6 s) ends the fetch."""
    clock = FakeClock()
    url = server.add_route("live.m3u8", body=media_playlist(SEGMENTS[:1], ended=False).encode())
    fetched = fetch_hls(url, tmp_path / "source.ts", limits(max_duration_s=3.0), sleep=clock.sleep)
    assert fetched.sha256 == sha256(stream.joined(0))
    assert clock.slept == [1.0] * 7  # polled every target / 2 until 7 s > 3 * 2 s of stall
    assert gets(server, "/live.m3u8") == 1 + 1 + 7  # master check, first load, reloads
    assert gets(server, "/segment_000.ts") == 1


def test_a_stalled_live_playlist_ends_after_the_bound_with_only_a_fake_sleep(
    server: MediaServer, tmp_path: Path
) -> None:
    url = server.add_route("live.m3u8", body=media_playlist(SEGMENTS[:1], ended=False).encode())
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        assert sum(slept) <= 3.0 + 6 * 2 + 2, "still polling long after the bound"

    fetch_hls(url, tmp_path / "source.ts", limits(max_duration_s=3.0), sleep=sleep)


def test_max_bytes_is_enforced_across_segments(
    server: MediaServer, stream: Stream, tmp_path: Path
) -> None:
    budget = len(stream.segments[0]) + len(stream.segments[1]) // 2
    with pytest.raises(LimitExceeded, match=str(budget)):
        fetch_hls(server.url("index.m3u8"), tmp_path / "source.ts", limits(max_bytes=budget))
    assert gets(server, "/segment_002.ts") == 0


def test_a_failed_fetch_leaves_no_file(server: MediaServer, stream: Stream, tmp_path: Path) -> None:
    dest = tmp_path / "source.ts"
    with pytest.raises(LimitExceeded):
        fetch_hls(server.url("index.m3u8"), dest, limits(max_bytes=len(stream.segments[0]) + 1))
    assert not dest.exists()


def test_byte_range_segments_are_fetched_by_range_or_refused(
    server: MediaServer, stream: Stream, tmp_path: Path
) -> None:
    whole = stream.joined(0, 1, 2)
    (stream.root / "single.ts").write_bytes(whole)
    lines = ["#EXTM3U", "#EXT-X-VERSION:4", "#EXT-X-TARGETDURATION:2"]
    offset = 0
    for segment in stream.segments:
        lines += ["#EXTINF:2.0,", f"#EXT-X-BYTERANGE:{len(segment)}@{offset}", "single.ts"]
        offset += len(segment)
    url = server.add_route("ranges.m3u8", body=("\n".join([*lines, "#EXT-X-ENDLIST"])).encode())
    try:
        fetched = fetch_hls(url, tmp_path / "source.ts", limits())
    except SourceInvalid:
        return  # refusing byte-range playlists is an acceptable fix too
    assert (fetched.size, fetched.sha256) == (len(whole), sha256(whole))


def test_an_oversized_playlist_is_refused_without_reading_it_all(
    server: MediaServer, tmp_path: Path
) -> None:
    mib = 1024 * 1024
    body = b"#EXTM3U\n" + b"#" * (8 * mib)
    url = server.add_route("huge.m3u8", body=body, abort_after=6 * mib)
    with pytest.raises(SourceInvalid, match="implausibly large"):
        fetch_hls(url, tmp_path / "source.ts", limits())


def test_a_segment_cut_off_mid_body_is_unreachable(
    server: MediaServer, stream: Stream, tmp_path: Path
) -> None:
    half = len(stream.segments[1]) // 2
    server.add_route(SEGMENTS[1], body=stream.segments[1], abort_after=half)
    with pytest.raises(SourceUnreachable, match="complete message body"):
        fetch_hls(server.url("index.m3u8"), tmp_path / "source.ts", limits())


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (media_playlist(()), "no segments"),
        ("<html>oops</html>", "no #EXTM3U"),
    ],
    ids=["no-segments", "not-a-playlist"],
)
def test_unusable_playlists_over_http(
    server: MediaServer, tmp_path: Path, body: str, error: str
) -> None:
    url = server.add_route("bad.m3u8", body=body.encode())
    with pytest.raises(SourceInvalid, match=error):
        fetch_hls(url, tmp_path / "source.ts", limits())


def test_a_master_whose_variant_is_itself_fails_at_once(
    server: MediaServer, tmp_path: Path
) -> None:
    """No polling of a "live" playlist that is a master: two requests, then a clear error."""
    master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=500000,RESOLUTION=320x240\nloop.m3u8\n"
    url = server.add_route("loop.m3u8", body=master.encode())
    slept: list[float] = []
    with pytest.raises(SourceInvalid, match="master playlist again"):
        fetch_hls(url, tmp_path / "source.ts", limits(), sleep=slept.append)
    assert slept == [] and gets(server, "/loop.m3u8") == 2
