"""The HLS cases of the hostile media corpus: playlists served by a local HTTP server.

A run fetches these as an ``hls`` source (the service parses the playlist and fetches every
segment itself), so they test the playlist reader's bounds: a playlist that names itself, and one
listing 10,000 segments of which only those within the duration bound exist on the server (a
fetch past the bound would meet a 404 and fail the run).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from stress import media_corpus as corpus
from stress.media_cases import SUCCEEDS, Case
from tests.fixtures.hls import write_hls

_SEGMENT_S = 2


def _vod(folder: Path) -> Path:
    return write_hls(corpus.BASE, folder / "vod")


def _loop_master(folder: Path) -> Path:
    """A master playlist whose only variant is the master itself."""
    path = folder / "loop" / "master.m3u8"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=500000,RESOLUTION=320x240\nmaster.m3u8\n")
    return path


def _loop_segment(folder: Path) -> Path:
    """A media playlist whose every segment is the playlist itself."""
    path = folder / "self" / "index.m3u8"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:2"]
    lines += ["#EXTINF:2.0,\nindex.m3u8"] * 5
    path.write_text("\n".join([*lines, "#EXT-X-ENDLIST"]) + "\n")
    return path


def _ten_thousand(folder: Path) -> Path:
    """10,000 segments of 2 s listed; only the first 40 (80 s) exist."""
    root = folder / "many"
    spec = replace(corpus.BASE, duration_s=40.0 * _SEGMENT_S)
    write_hls(spec, root, segment_s=_SEGMENT_S)
    (root / "index.m3u8").unlink()
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", f"#EXT-X-TARGETDURATION:{_SEGMENT_S}"]
    for index in range(10_000):
        lines += [f"#EXTINF:{_SEGMENT_S}.0,", f"segment_{index:03d}.ts"]
    path = root / "many.m3u8"
    path.write_text("\n".join([*lines, "#EXT-X-ENDLIST"]) + "\n")
    return path


HLS_CASES: tuple[Case, ...] = (
    Case(
        "hls_vod", "HLS VOD of the base clip (3 segments)", (SUCCEEDS,), _vod, hls=True, quick=True
    ),
    Case(
        "hls_loop_master",
        "HLS master playlist whose variant is itself",
        ("source_invalid",),
        _loop_master,
        hls=True,
        quick=True,
    ),
    Case(
        "hls_loop_segment",
        "HLS media playlist whose segments are itself",
        ("source_invalid",),
        _loop_segment,
        hls=True,
    ),
    Case(
        "hls_10k_segments",
        "HLS playlist of 10,000 x 2 s segments (run bound max_duration_s=60)",
        (SUCCEEDS,),
        _ten_thousand,
        hls=True,
        options={"max_duration_s": 60},
        time_s=30.0,
    ),
)
