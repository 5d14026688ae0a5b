"""The cheap read of a source before any run: its container header, for estimates.

A dry run of a URL or HLS video reads what the container declares instead of assuming the plan's
bound: for a progressive file (MP4, MOV, MKV, ...) PyAV opens it through a ``RangedFile``, so
the demuxer fetches the head by byte ranges (and, for an MP4 written without ``faststart``, the
index at the end); for HLS the playlists (a VOD's length is the sum of its ``#EXTINF``; a live
playlist has no end) and the head of the first segment. Everything is SSRF-guarded, within
``HeaderLimits`` (bytes and seconds), and never fails: a header that cannot be read comes back
with a ``reason`` and a sentence saying why, and the estimate falls back to the bound.

PyAV errors met while reading a header are caught here, every kind of them, and become a reason.
"""

from __future__ import annotations

import itertools
import statistics
import time
from dataclasses import dataclass, replace
from typing import Literal

import av
import av.container

from tasks.decode.hls import HlsLimits, media_playlist, media_url
from tasks.decode.ranged import RangedFile, ReadBounds
from ves.errors import LimitExceeded, SourceInvalid, SourceRejected, SourceUnreachable, VesError

HeaderReason = Literal[
    "unreachable", "refused", "not_video", "too_large", "timeout", "no_duration", "live"
]
SEGMENT_SHARE = 4  # the first HLS segment's head is read within a quarter of the byte budget
# Containers whose header declares the length (an MP4's ``mvhd``, an MKV's ``Info``). Any other
# (MPEG-TS, raw streams) only has the timestamps read so far, so its length is trusted only when
# the whole file was read: over a prefix FFmpeg guesses it (544 s for a 600 s MPEG-TS).
_DECLARING = {"mov", "mp4", "matroska", "webm", "avi", "flv", "asf"}
_MAX_KEYFRAMES = 2000
# Every kind PyAV raises on hostile bytes: FFmpegError (InvalidData, DecoderNotFound, Argument,
# ...), IndexError, UnicodeDecodeError (a ValueError), MemoryError, OverflowError, and OSError
# (also what a callback of ``RangedFile`` raised, re-raised by PyAV after the call).
_PYAV_ERRORS = (
    av.error.FFmpegError,
    IndexError,
    ValueError,
    MemoryError,
    OverflowError,
    OSError,
    RuntimeError,
)  # keyframe times looked at for the cadence (an hour of 2 s GOPs)


@dataclass(frozen=True)
class HeaderLimits:
    """Bounds of one header read: bytes over the network, seconds in all, the address policy."""

    max_bytes: int
    timeout_s: float
    allow_private: bool
    max_width: int = 1 << 16  # the picture bounds an HLS variant is chosen within, as a run does
    max_height: int = 1 << 16


@dataclass(frozen=True)
class SourceHeader:
    """What a source's header says (None: not declared or not read), and what reading it took.

    ``reason`` is None when the length was read; else why not, and ``detail`` says it in words.
    """

    duration_s: float | None = None
    found: Literal["header", "playlist"] | None = None
    size_bytes: int | None = None
    bitrate_bps: float | None = None
    fps: float | None = None
    width: int | None = None
    height: int | None = None
    keyframe_interval_s: float | None = None
    live: bool = False
    bytes_read: int = 0
    read_s: float = 0.0
    reason: HeaderReason | None = None
    detail: str | None = None


def read_header(url: str, kind: str, limits: HeaderLimits) -> SourceHeader:
    """The header of the source at ``url`` (``kind`` ``hls`` or ``url``), within ``limits``."""
    started = time.monotonic()
    bounds = ReadBounds(limits.max_bytes, started + limits.timeout_s, limits.allow_private)
    try:
        if kind == "hls":
            header = _read_playlist(url, bounds, limits)
        else:
            header = _read_progressive(url, bounds)
    except VesError as exc:
        header = _unread(exc, bounds)
    return replace(header, read_s=round(time.monotonic() - started, 3))


def _unread(exc: VesError, bounds: ReadBounds) -> SourceHeader:
    return SourceHeader(reason=_reason_of(exc, bounds), detail=exc.detail)


def _reason_of(exc: VesError, bounds: ReadBounds) -> HeaderReason:
    if isinstance(exc, SourceRejected):
        return "refused"
    if isinstance(exc, SourceUnreachable):
        return "timeout" if bounds.expired() else "unreachable"
    if isinstance(exc, LimitExceeded):
        return "too_large"
    return "not_video"


def _read_progressive(url: str, bounds: ReadBounds) -> SourceHeader:
    with RangedFile(url, bounds) as source:
        try:
            header = _probe(source, bounds)
        except VesError as exc:  # what was read to find that out still counts
            header = _unread(exc, bounds)
        return replace(header, size_bytes=source.size, bytes_read=source.fetched)


def _probe(source: RangedFile, bounds: ReadBounds) -> SourceHeader:
    """Open ``source`` with PyAV and read what its container declares."""
    try:
        with av.open(source, mode="r", options={"probesize": "65536"}) as container:
            return _declared(container, source)
    except VesError:
        raise
    except _PYAV_ERRORS as exc:
        if source.exhausted:
            raise LimitExceeded(
                f"the header is not within the first {bounds.max_bytes} bytes read"
            ) from exc
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise SourceInvalid(f"the source is not a readable video ({why})") from exc


def _declared(container: av.container.InputContainer, source: RangedFile) -> SourceHeader:
    if not container.streams.video:
        raise SourceInvalid("the source has no video stream")
    stream = container.streams.video[0]
    duration = _duration_s(container, stream)
    whole = source.size is not None and source.fetched >= source.size
    if not whole and not _DECLARING & set(container.format.name.split(",")):
        duration = None
    fps = float(stream.average_rate or stream.guessed_rate or 0) or None
    size = source.size
    bitrate = size * 8 / duration if size and duration else float(container.bit_rate or 0) or None
    header = SourceHeader(
        duration_s=duration,
        found="header" if duration else None,
        bitrate_bps=round(bitrate) if bitrate else None,
        fps=fps,
        width=stream.codec_context.width or None if stream.codec_context else None,
        height=stream.codec_context.height or None if stream.codec_context else None,
        keyframe_interval_s=_keyframe_interval(container, stream, source),
    )
    if duration is None:
        return replace(
            header,
            reason="no_duration",
            detail=f"the container ({container.format.name}) does not declare its length",
        )
    return header


def _duration_s(container: av.container.InputContainer, stream: av.VideoStream) -> float | None:
    if stream.duration is not None and stream.time_base is not None and stream.duration > 0:
        return round(float(stream.duration * stream.time_base), 3)
    if container.duration is not None and container.duration > 0:
        return round(container.duration / 1_000_000, 3)
    return None


def _keyframe_interval(
    container: av.container.InputContainer, stream: av.VideoStream, source: RangedFile
) -> float | None:
    """The median seconds between keyframes: from the demuxer's index when the container has
    one in its header (an MP4's ``stss``), else from the packets within the bytes already read
    (an MKV or MPEG-TS prefix: demuxing reads no frame data the budget did not allow)."""
    if stream.time_base is None:
        return None
    entries = stream.index_entries
    if len(entries) > 1:
        times = [e.timestamp for e in entries[: _MAX_KEYFRAMES * 50] if e.is_keyframe]
    else:
        times = _keyframe_packets(container, stream, source)
    gaps = [b - a for a, b in itertools.pairwise(times) if b > a]
    if not gaps:
        return None
    return round(float(statistics.median(gaps) * stream.time_base), 3)


def _keyframe_packets(
    container: av.container.InputContainer, stream: av.VideoStream, source: RangedFile
) -> list[int]:
    times: list[int] = []
    try:
        for packet in container.demux(stream):
            if packet.is_keyframe and packet.pts is not None:
                times.append(packet.pts)
            if len(times) >= _MAX_KEYFRAMES or source.exhausted:
                break
    except _PYAV_ERRORS:
        pass  # the cadence is a bonus: what was demuxed before the error still counts
    return times


def _read_playlist(url: str, bounds: ReadBounds, header_limits: HeaderLimits) -> SourceHeader:
    """A VOD playlist's length from its ``#EXTINF``; a live one has none. The picture and the
    cadence come from the head of the first segment, when it can be read."""
    limits = HlsLimits(
        max_duration_s=0.0,
        max_bytes=bounds.max_bytes,
        max_width=header_limits.max_width,
        max_height=header_limits.max_height,
        timeout_s=bounds.remaining_s(),
        allow_private=bounds.allow_private,
    )
    media = media_url(url, limits)
    playlist = media_playlist(media, replace(limits, timeout_s=bounds.remaining_s()))
    if not playlist.segments:
        raise SourceInvalid("the HLS playlist lists no segments")
    first = playlist.segments[0]
    segment = _segment_header(first.uri, playlist.init_uri, bounds)
    if not playlist.ended:
        return replace(
            segment,
            live=True,
            reason="live",
            detail="a live playlist (no #EXT-X-ENDLIST) has no end: its length is not known",
            duration_s=None,
            found=None,
        )
    duration = round(sum(s.duration_s for s in playlist.segments), 3)
    bitrate = segment.size_bytes * 8 / first.duration_s if segment.size_bytes else None
    return replace(
        segment,
        duration_s=duration,
        found="playlist",
        reason=None,
        detail=None,
        bitrate_bps=round(bitrate) if bitrate else segment.bitrate_bps,
        size_bytes=None,
    )


def _segment_header(uri: str, init_uri: str | None, bounds: ReadBounds) -> SourceHeader:
    """The head of the first segment (picture, rate, cadence); nothing when it cannot be read:
    the playlist alone gives the length."""
    if init_uri:  # fMP4 segments need their init segment first: not read, the playlist suffices
        return SourceHeader()
    share = ReadBounds(bounds.max_bytes // SEGMENT_SHARE, bounds.deadline, bounds.allow_private)
    header = _read_progressive(uri, share)
    if header.reason not in (None, "no_duration"):  # optional: the playlist gives the length
        return SourceHeader(bytes_read=header.bytes_read)
    return header
