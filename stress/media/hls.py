"""The HLS files of the hostile media corpus: playlists that a local HTTP server serves.

A run fetches these as an ``hls`` source (the service parses the playlist and fetches every
segment itself), so they test the playlist reader's bounds: a playlist that names itself, and one
listing 10,000 segments of which only those within the duration bound exist on the server (a
fetch past the bound would meet a 404 and fail the run).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from stress.media import corpus
from testkit.hls import write_hls

_SEGMENT_S = 2


def vod(folder: Path) -> Path:
    """The base clip as an HLS VOD playlist of 2 s segments."""
    return write_hls(corpus.BASE, folder / "vod")


def loop_master(folder: Path) -> Path:
    """A master playlist whose only variant is the master itself."""
    path = folder / "loop" / "master.m3u8"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=500000,RESOLUTION=320x240\nmaster.m3u8\n")
    return path


def loop_segment(folder: Path) -> Path:
    """A media playlist whose every segment is the playlist itself."""
    path = folder / "self" / "index.m3u8"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:2"]
    lines += ["#EXTINF:2.0,\nindex.m3u8"] * 5
    path.write_text("\n".join([*lines, "#EXT-X-ENDLIST"]) + "\n")
    return path


def ten_thousand(folder: Path) -> Path:
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
