"""HLS sources: parse playlists and fetch their segments ourselves into one local file.

FFmpeg could read a playlist itself, but then it would follow whatever segment URLs the playlist
names, past our SSRF guard. So the service parses the playlist, checks and downloads every segment
with the guarded client, and concatenates them (MPEG-TS, or fMP4 after its init segment) into one
local file that PyAV decodes. Live playlists are followed until they end or the duration bound is
reached.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urljoin

from ves.errors import LimitExceeded, SourceInvalid
from ves.netguard import Downloaded, open_source


@dataclass(frozen=True)
class Variant:
    """One rendition of a master playlist."""

    uri: str
    bandwidth: int
    resolution: tuple[int, int] | None


@dataclass(frozen=True)
class Segment:
    uri: str
    duration_s: float
    sequence: int


@dataclass(frozen=True)
class MediaPlaylist:
    segments: tuple[Segment, ...]
    target_duration_s: float
    ended: bool
    init_uri: str | None = None


@dataclass(frozen=True)
class HlsLimits:
    """Bounds of one fetch."""

    max_duration_s: float
    max_bytes: int
    max_width: int
    max_height: int
    timeout_s: float
    allow_private: bool


def _attributes(line: str) -> dict[str, str]:
    """``#TAG:A=1,B="x,y"`` -> ``{"A": "1", "B": "x,y"}`` (quoted commas kept)."""
    body = line.split(":", 1)[1] if ":" in line else ""
    attrs, key, value, quoted = {}, "", "", False
    reading_key = True
    for char in body + ",":
        if char == '"':
            quoted = not quoted
        elif char == "=" and reading_key and not quoted:
            reading_key = False
        elif char == "," and not quoted:
            attrs[key.strip()] = value.strip()
            key, value, reading_key = "", "", True
        elif reading_key:
            key += char
        else:
            value += char
    return attrs


def parse_master(text: str, base_url: str) -> list[Variant]:
    """The variants of a master playlist (empty for a media playlist)."""
    variants, pending = [], None
    for line in (raw.strip() for raw in text.splitlines()):
        if line.startswith("#EXT-X-STREAM-INF"):
            pending = _attributes(line)
        elif line and not line.startswith("#") and pending is not None:
            size = pending.get("RESOLUTION", "")
            width, _, height = size.partition("x")
            resolution = (int(width), int(height)) if width.isdigit() and height.isdigit() else None
            bandwidth = int(pending.get("BANDWIDTH", "0") or 0)
            variants.append(Variant(urljoin(base_url, line), bandwidth, resolution))
            pending = None
    return variants


def parse_media(text: str, base_url: str) -> MediaPlaylist:
    """Segments, target duration, end marker and init segment of a media playlist.

    Raises:
        SourceInvalid: not a playlist, or encrypted segments (not supported).
    """
    if not text.lstrip("\ufeff \r\n").startswith("#EXTM3U"):
        raise SourceInvalid("the HLS URL does not serve a playlist (no #EXTM3U header)")
    segments, duration, sequence, target, init = [], None, 0, 6.0, None
    for line in (raw.strip() for raw in text.splitlines()):
        if line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
            sequence = int(line.split(":", 1)[1])
        elif line.startswith("#EXT-X-TARGETDURATION:"):
            target = float(line.split(":", 1)[1])
        elif line.startswith("#EXT-X-KEY") and _attributes(line).get("METHOD", "NONE") != "NONE":
            raise SourceInvalid("encrypted HLS streams are not supported")
        elif line.startswith("#EXT-X-MAP"):
            init = urljoin(base_url, _attributes(line).get("URI", ""))
        elif line.startswith("#EXTINF:"):
            duration = float(line.split(":", 1)[1].split(",")[0])
        elif line and not line.startswith("#") and duration is not None:
            segments.append(Segment(urljoin(base_url, line), duration, sequence))
            sequence, duration = sequence + 1, None
    return MediaPlaylist(tuple(segments), target, "#EXT-X-ENDLIST" in text, init)


def choose_variant(variants: list[Variant], limits: HlsLimits) -> Variant:
    """The richest variant within the resolution bounds (the smallest if none fits)."""

    def fits(v: Variant) -> bool:
        return v.resolution is None or (
            v.resolution[0] <= limits.max_width and v.resolution[1] <= limits.max_height
        )

    fitting = [v for v in variants if fits(v)]
    if fitting:
        return max(fitting, key=lambda v: v.bandwidth)
    return min(variants, key=lambda v: v.bandwidth)


class _Sink:
    """The local file segments are appended to, with its hash and byte budget."""

    def __init__(self, out: BinaryIO, max_bytes: int) -> None:
        self.out, self.max_bytes = out, max_bytes
        self.digest, self.size = hashlib.sha256(), 0

    def append(self, url: str, limits: HlsLimits) -> None:
        with open_source(url, allow_private=limits.allow_private, timeout_s=limits.timeout_s) as r:
            for chunk in r.iter_bytes(1 << 16):
                self.size += len(chunk)
                if self.size > self.max_bytes:
                    raise LimitExceeded(f"the stream is larger than {self.max_bytes} bytes")
                self.digest.update(chunk)
                self.out.write(chunk)


def _read_text(url: str, limits: HlsLimits) -> str:
    with open_source(url, allow_private=limits.allow_private, timeout_s=limits.timeout_s) as r:
        body = r.read()
    if len(body) > 4 * 1024 * 1024:
        raise SourceInvalid("the HLS playlist is implausibly large")
    return body.decode("utf-8", errors="replace")


def _media_url(url: str, limits: HlsLimits) -> str:
    """Follow a master playlist to the media playlist of the chosen variant."""
    variants = parse_master(_read_text(url, limits), url)
    return choose_variant(variants, limits).uri if variants else url


def fetch_hls(
    url: str, dest: Path, limits: HlsLimits, *, sleep: Callable[[float], None] = time.sleep
) -> Downloaded:
    """Download the stream behind ``url`` into ``dest`` (up to ``limits.max_duration_s``)."""
    media_url = _media_url(url, limits)
    seen: set[int] = set()
    fetched_s, started = 0.0, time.monotonic()
    with dest.open("wb") as out:
        sink = _Sink(out, limits.max_bytes)
        playlist = parse_media(_read_text(media_url, limits), media_url)
        if playlist.init_uri:
            sink.append(playlist.init_uri, limits)
        while True:
            for segment in playlist.segments:
                if segment.sequence in seen or fetched_s >= limits.max_duration_s:
                    continue
                sink.append(segment.uri, limits)
                seen.add(segment.sequence)
                fetched_s += segment.duration_s
            waited = time.monotonic() - started
            if playlist.ended or fetched_s >= limits.max_duration_s:
                break
            if waited > limits.max_duration_s + 6 * playlist.target_duration_s:
                break  # a live stream that stopped growing: keep what arrived
            sleep(playlist.target_duration_s / 2)
            playlist = parse_media(_read_text(media_url, limits), media_url)
    if not seen:
        raise SourceInvalid("the HLS playlist lists no segments")
    return Downloaded(dest, sink.digest.hexdigest(), sink.size)
