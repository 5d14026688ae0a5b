"""HLS sources: parse playlists and fetch their segments ourselves into one local file.

FFmpeg could read a playlist itself, but then it would follow whatever segment URLs the playlist
names, past our SSRF guard. So the service parses the playlist, checks and downloads every segment
with the guarded client, and concatenates them (MPEG-TS, or fMP4 after its init segment) into one
local file that PyAV decodes. Live playlists are followed until they end or the duration bound is
reached.

``#EXT-X-PROGRAM-DATE-TIME`` (RFC 8216 4.3.2.6) gives the wall-clock moment of the next segment;
the segments after it continue by their EXTINF durations. The moment of the first segment a run
reads is the clock time of the run's time 0 (the decode stage records it as the video's
``recorded_at`` when the client gave none).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urljoin

from tasks.decode.reload import ReloadClock
from ves.errors import LimitExceeded, SourceInvalid
from ves.netguard import Downloaded, open_source

logger = logging.getLogger(__name__)


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
    byte_range: tuple[int, int] | None = None  # (offset, length) within ``uri``
    discontinuity: bool = False  # ``#EXT-X-DISCONTINUITY`` before it: timestamps may restart
    # When its first moment was recorded: its ``#EXT-X-PROGRAM-DATE-TIME``, or the last one
    # before it plus the durations since (None: the playlist names no moment before it).
    program_date_time: datetime | None = None


@dataclass(frozen=True)
class MediaPlaylist:
    segments: tuple[Segment, ...]
    target_duration_s: float
    ended: bool
    init_uri: str | None = None


@dataclass(frozen=True)
class HlsDownload(Downloaded):
    """An HLS stream fetched to one local file, and the moment its time 0 was recorded."""

    started_at: datetime | None = None  # the first fetched segment's program date-time


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


def _number(text: str, kind: type[int] | type[float], what: str) -> float:
    """A number of a playlist tag; ``SourceInvalid`` when it is not one."""
    try:
        return kind(text.strip())
    except ValueError as exc:
        raise SourceInvalid(f"the HLS playlist has a malformed {what}: {text!r}") from exc


def _program_date_time(text: str) -> datetime | None:
    """The moment of an ``#EXT-X-PROGRAM-DATE-TIME`` value (ISO 8601 with its offset).

    A value that is no such moment, or has no offset (its zone unknown), is ignored and logged:
    a playlist's clock is a hint for search, not a reason to refuse the stream.
    """
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        logger.warning("ignored a malformed #EXT-X-PROGRAM-DATE-TIME: %r", text[:64])
        return None
    return moment


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
            bandwidth = int(_number(pending.get("BANDWIDTH", "0") or "0", int, "BANDWIDTH"))
            variants.append(Variant(urljoin(base_url, line), bandwidth, resolution))
            pending = None
    return variants


def parse_media(text: str, base_url: str) -> MediaPlaylist:
    """Segments, target duration, end marker and init segment of a media playlist.

    Raises:
        SourceInvalid: not a playlist, a master playlist, malformed numbers, or encrypted
            segments (not supported).
    """
    if not text.lstrip("\ufeff \r\n").startswith("#EXTM3U"):
        raise SourceInvalid("the HLS URL does not serve a playlist (no #EXTM3U header)")
    if "#EXT-X-STREAM-INF" in text:
        # A master where its media playlist should be: following it again could loop forever
        # (a variant naming its own master), and one level of variants is all HLS defines.
        raise SourceInvalid("the HLS variant playlist is a master playlist again (a loop?)")
    state = _MediaState()
    for line in (raw.strip() for raw in text.splitlines()):
        state.read(line, base_url)
    return MediaPlaylist(tuple(state.segments), state.target, "#EXT-X-ENDLIST" in text, state.init)


class _MediaState:
    """What has been read of a media playlist so far (tags apply to the next URI)."""

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.sequence, self.target = 0, 6.0
        self.duration: float | None = None
        self.init: str | None = None
        self.byte_range: tuple[int, int] | None = None
        self.range_end = 0
        self.discontinuity = False
        self.clock: datetime | None = None  # the next segment's program date-time

    def read(self, line: str, base_url: str) -> None:
        tag, _, value = line.partition(":")
        if tag == "#EXT-X-MEDIA-SEQUENCE":
            self.sequence = int(_number(value, int, "media sequence"))
        elif tag == "#EXT-X-TARGETDURATION":
            self.target = float(_number(value, float, "target duration"))
        elif tag == "#EXT-X-KEY" and _attributes(line).get("METHOD", "NONE") != "NONE":
            raise SourceInvalid("encrypted HLS streams are not supported")
        elif tag == "#EXT-X-MAP":
            self.init = urljoin(base_url, _attributes(line).get("URI", ""))
        elif tag == "#EXTINF":
            self.duration = float(_number(value.split(",")[0], float, "segment duration"))
        elif tag == "#EXT-X-BYTERANGE":
            self.byte_range = self._range(value)
        elif tag == "#EXT-X-DISCONTINUITY":
            self.discontinuity = True
        elif tag == "#EXT-X-PROGRAM-DATE-TIME":
            self.clock = _program_date_time(value) or self.clock
        elif line and not line.startswith("#") and self.duration is not None:
            self._segment(urljoin(base_url, line), self.duration)

    def _segment(self, uri: str, duration: float) -> None:
        """A segment's URI: the tags read since the previous one apply to it."""
        at, range_, cut = self.clock, self.byte_range, self.discontinuity
        self.segments.append(Segment(uri, duration, self.sequence, range_, cut, at))
        self.sequence, self.duration, self.byte_range = self.sequence + 1, None, None
        self.discontinuity = False
        self.clock = at + timedelta(seconds=duration) if at is not None else None

    def _range(self, value: str) -> tuple[int, int]:
        """``length[@offset]``; without an offset the range follows the previous one."""
        length_text, _, offset_text = value.partition("@")
        length = int(_number(length_text, int, "byte range"))
        offset = int(_number(offset_text, int, "byte range")) if offset_text else self.range_end
        self.range_end = offset + length
        return offset, length


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

    def append(
        self, url: str, limits: HlsLimits, byte_range: tuple[int, int] | None = None
    ) -> None:
        headers = None
        if byte_range is not None:
            headers = {"Range": f"bytes={byte_range[0]}-{byte_range[0] + byte_range[1] - 1}"}
        with open_source(
            url, allow_private=limits.allow_private, timeout_s=limits.timeout_s, headers=headers
        ) as opened:
            for chunk in opened.response.iter_bytes(1 << 16):
                self.size += len(chunk)
                if self.size > self.max_bytes:
                    raise LimitExceeded(f"the stream is larger than {self.max_bytes} bytes")
                self.digest.update(chunk)
                self.out.write(chunk)


_MAX_PLAYLIST_BYTES = 4 * 1024 * 1024


def _read_text(url: str, limits: HlsLimits) -> tuple[str, str]:
    """A playlist's text and the URL it was finally served from (relative URIs resolve there)."""
    body = bytearray()
    with open_source(url, allow_private=limits.allow_private, timeout_s=limits.timeout_s) as o:
        for chunk in o.response.iter_bytes():
            body.extend(chunk)
            if len(body) > _MAX_PLAYLIST_BYTES:
                raise SourceInvalid("the HLS playlist is implausibly large")
        final_url = o.url
    return body.decode("utf-8", errors="replace"), final_url


def media_url(url: str, limits: HlsLimits) -> str:
    """Follow a master playlist to the URL of the chosen variant's media playlist (``url``
    itself when it is a media playlist); read through the SSRF guard."""
    text, final_url = _read_text(url, limits)
    variants = parse_master(text, final_url)
    return choose_variant(variants, limits).uri if variants else final_url


def media_playlist(url: str, limits: HlsLimits) -> MediaPlaylist:
    """Read and parse the media playlist at ``url`` (through the SSRF guard); a live stream's
    is read again at every reload."""
    text, final_url = _read_text(url, limits)
    return parse_media(text, final_url)


def fetch_hls(
    url: str,
    dest: Path,
    limits: HlsLimits,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> HlsDownload:
    """Download the stream behind ``url`` into ``dest`` (up to ``limits.max_duration_s``).

    A live playlist is followed until it ends, stops growing for three target durations, or the
    wall-clock bound passes; what arrived is kept. Nothing is left at ``dest`` on failure. The
    result's ``started_at`` is the first fetched segment's program date-time, if the playlist
    gives one: the file's time 0 is that segment's start.
    """
    try:
        return _fetch_into(url, dest, limits, sleep, ReloadClock())
    except BaseException:
        dest.unlink(missing_ok=True)
        raise


def _fetch_into(
    url: str, dest: Path, limits: HlsLimits, sleep: Callable[[float], None], live: ReloadClock
) -> HlsDownload:
    playlist_url = media_url(url, limits)
    seen: set[int] = set()
    fetched_s = 0.0
    started_at: datetime | None = None
    with dest.open("wb") as out:
        sink = _Sink(out, limits.max_bytes)
        playlist = media_playlist(playlist_url, limits)
        if playlist.init_uri:
            sink.append(playlist.init_uri, limits)
        while True:
            for segment in playlist.segments:
                if segment.sequence in seen or fetched_s >= limits.max_duration_s:
                    continue
                if not seen:
                    started_at = segment.program_date_time
                sink.append(segment.uri, limits, segment.byte_range)
                seen.add(segment.sequence)
                fetched_s += segment.duration_s
                live.grew()
            if playlist.ended or fetched_s >= limits.max_duration_s:
                break
            if _expired(live, playlist.target_duration_s, limits):
                break  # a live stream that stopped growing: keep what arrived
            sleep(playlist.target_duration_s / 2)
            live.waited(playlist.target_duration_s / 2)
            playlist = media_playlist(playlist_url, limits)
    if not seen:
        raise SourceInvalid("the HLS playlist lists no segments")
    return HlsDownload(dest, sink.digest.hexdigest(), sink.size, started_at)


def _expired(clock: ReloadClock, target_s: float, limits: HlsLimits) -> bool:
    """When to stop following a live playlist: it stopped growing for more than three target
    durations, or the total wait passed the duration bound plus six target durations."""
    too_long = clock.waited_s > limits.max_duration_s + 6 * target_s
    return clock.stalled(target_s, strictly=True) or too_long
