"""Live HLS: follow a playlist without ``#EXT-X-ENDLIST`` from its live edge, window by window.

``LiveFollower`` keeps the place in the stream (the next media sequence number) across windows:
each window starts exactly where the previous one stopped, with no gap and no overlap. The first
window starts at the live edge as RFC 8216 (6.3.3) has a client start: at the last segment that
begins at least three target durations before the end of the playlist, not at the start of the
history the playlist still lists. The playlist is reloaded every target duration (6.3.4) through
the same SSRF-guarded client as every source, and every segment is checked and fetched by it too.

A window ends when it holds its length of media, when a stop is asked, when the stream ends
(``#EXT-X-ENDLIST``) or stalls (no new segment for three target durations), at a discontinuity
(timestamps restart: the next window begins there), or when the next segment would pass the
hard bound (the plan's processed seconds left, the run's duration bound).

Each window is written to its own file: the init segment (fMP4), then the last segments of the
previous window again, at least ``lead_s`` of them (the lead-in, kept in memory, so the motion
background and the text readings are warm at the border, exactly as a chunk's lead-in:
``VES_CHUNK_LEAD_S``), then the window's own segments. A window's ``started_at`` is its first own
segment's ``#EXT-X-PROGRAM-DATE-TIME`` (when the playlist gives one): the first window's is the
clock time of the session's time 0.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from tasks.decode.hls import HlsLimits, MediaPlaylist, Segment, media_playlist, media_url
from tasks.decode.reload import ReloadClock
from ves.errors import LimitExceeded
from ves.netguard import open_source

EDGE_TARGETS = 3  # start this many target durations from the end of the playlist


@dataclass(frozen=True)
class WindowBytes:
    """One window of a live stream, fetched into a local file."""

    path: Path
    start_s: float  # session time (from the first window's start) of the window's own media
    duration_s: float  # seconds of the window's own segments (their EXTINF durations)
    lead_s: float  # seconds of lead-in at the start of the file (0: none)
    first_sequence: int
    next_sequence: int  # where the next window starts
    segments: int
    sha256: str
    size: int
    ended: str | None = None  # "ended" (ENDLIST), "stalled"; None: the stream goes on
    stopped: bool = False  # a stop closed the window
    started_at: datetime | None = None  # program date-time of the window's first own segment


def live_edge(playlist: MediaPlaylist) -> int:
    """Index of the segment a live session starts at (RFC 8216 6.3.3)."""
    from_end = 0.0
    for index in range(len(playlist.segments) - 1, -1, -1):
        from_end += playlist.segments[index].duration_s
        if from_end >= EDGE_TARGETS * playlist.target_duration_s - 1e-6:
            return index
    return 0


class LiveFollower:
    """The place in one live stream, and the window fetches that advance it."""

    def __init__(
        self,
        url: str,
        limits: HlsLimits,
        *,
        sleep: Callable[[float], None],
        stopped: Callable[[], bool],
        lead_s: float = 5.0,
    ) -> None:
        self.url, self.limits, self.lead_s = url, limits, lead_s
        self.sleep, self.stopped = sleep, stopped
        self.media_url: str | None = None
        self.next_sequence: int | None = None
        self.session_s = 0.0
        self.lead: list[tuple[bytes, float]] | None = None  # (bytes, seconds) per segment
        self.init: bytes | None = None

    def playlist(self) -> MediaPlaylist:
        """The stream's media playlist, read again (the variant is chosen once per session)."""
        if self.media_url is None:
            self.media_url = media_url(self.url, self.limits)
        return media_playlist(self.media_url, self.limits)

    def window(self, dest: Path, length_s: float, hard_s: float) -> WindowBytes:
        """Fetch the next window (about ``length_s``, never past ``hard_s``) into ``dest``."""
        playlist = self.playlist()
        if self.next_sequence is None:
            self.next_sequence = (
                playlist.segments[live_edge(playlist)].sequence if (playlist.segments) else 0
            )
        if playlist.init_uri and self.init is None:
            self.init = self._get(playlist.init_uri, None)
        fill = _Fill(self, min(length_s, hard_s), hard_s)
        fill.run(playlist)
        return self._write(dest, fill)

    def _write(self, dest: Path, fill: _Fill) -> WindowBytes:
        lead = fill.lead or []
        parts = [self.init or b"", *(body for body, _ in lead), *fill.parts]
        digest = hashlib.sha256()
        with dest.open("wb") as out:
            for part in parts:
                digest.update(part)
                out.write(part)
        start = self.session_s
        self.session_s += fill.fetched_s
        if fill.parts:
            self.lead = _last([*lead, *zip(fill.parts, fill.durations, strict=True)], self.lead_s)
        assert self.next_sequence is not None
        return WindowBytes(
            dest,
            start,
            fill.fetched_s,
            sum(seconds for _, seconds in lead),
            fill.first,
            self.next_sequence,
            len(fill.parts),
            digest.hexdigest(),
            sum(len(p) for p in parts),
            fill.ended,
            fill.stopped,
            fill.started_at,
        )

    def _get(self, uri: str, byte_range: tuple[int, int] | None) -> bytes:
        headers = None
        if byte_range is not None:
            headers = {"Range": f"bytes={byte_range[0]}-{byte_range[0] + byte_range[1] - 1}"}
        body = bytearray()
        limits = self.limits
        with open_source(
            uri, allow_private=limits.allow_private, timeout_s=limits.timeout_s, headers=headers
        ) as opened:
            for chunk in opened.response.iter_bytes(1 << 16):
                body.extend(chunk)
                if len(body) > limits.max_bytes:
                    raise LimitExceeded(f"a segment is larger than {limits.max_bytes} bytes")
        return bytes(body)


class _Fill:
    """The segments of one window as they arrive (reloading the playlist between them)."""

    def __init__(self, follower: LiveFollower, length_s: float, hard_s: float) -> None:
        self.follower, self.length_s, self.hard_s = follower, length_s, hard_s
        self.parts: list[bytes] = []
        self.durations: list[float] = []
        self.fetched_s, self.bytes = 0.0, 0
        assert follower.next_sequence is not None
        self.first = follower.next_sequence
        self.lead = follower.lead
        self.started_at: datetime | None = None
        self.ended: str | None = None
        self.stopped = False
        self.closed = False

    def run(self, playlist: MediaPlaylist) -> None:
        clock = ReloadClock()
        if self.follower.stopped():  # asked before the window began: it closes empty
            self.stopped = True
            return
        while True:
            if self._take(playlist.segments):
                clock.grew()
            if self.closed:
                return
            if playlist.ended:
                self.ended = "ended"
                return
            if clock.stalled(playlist.target_duration_s):
                self.ended = "stalled"
                return
            if self.follower.stopped():
                self.stopped = True
                return
            self.follower.sleep(playlist.target_duration_s)
            clock.waited(playlist.target_duration_s)
            if self.follower.stopped():
                self.stopped = True
                return
            playlist = self.follower.playlist()

    def _take(self, segments: tuple[Segment, ...]) -> bool:
        """Fetch the new segments that fit; True when at least one was new."""
        follower, grew = self.follower, False
        assert follower.next_sequence is not None
        fresh = [s for s in segments if s.sequence >= follower.next_sequence]
        if fresh and fresh[0].sequence > follower.next_sequence:
            # The playlist slid past segments never fetched: what they held is lost; their
            # timestamps do not continue ours, as after a discontinuity.
            fresh[0] = replace(fresh[0], discontinuity=True)
        for segment in fresh:
            if segment.discontinuity and (self.parts or self.lead):
                if self.parts:
                    self.closed = True  # the next window begins at the discontinuity
                    return grew
                self.lead = None  # the previous window's last segment is not a lead-in
            if self.fetched_s + segment.duration_s > self.hard_s + 1e-6:
                self.closed = True
                return grew
            self._fetch(segment)
            grew = True
            if self.fetched_s >= self.length_s - 1e-6:
                self.closed = True
                return grew
        return grew

    def _fetch(self, segment: Segment) -> None:
        follower = self.follower
        body = follower._get(segment.uri, segment.byte_range)
        self.bytes += len(body)
        if self.bytes > follower.limits.max_bytes:
            raise LimitExceeded(f"the window is larger than {follower.limits.max_bytes} bytes")
        if not self.parts:
            self.first, self.started_at = segment.sequence, segment.program_date_time
        self.parts.append(body)
        self.durations.append(segment.duration_s)
        self.fetched_s += segment.duration_s
        follower.next_sequence = segment.sequence + 1


def is_live(url: str, limits: HlsLimits) -> bool:
    """Whether the HLS stream at ``url`` is live (its media playlist has no ``#EXT-X-ENDLIST``)."""
    return not media_playlist(media_url(url, limits), limits).ended


def _last(segments: list[tuple[bytes, float]], seconds: float) -> list[tuple[bytes, float]]:
    """The last of ``segments`` that make at least ``seconds`` (all of them if they do not)."""
    kept: list[tuple[bytes, float]] = []
    for segment in reversed(segments):
        if sum(s for _, s in kept) >= seconds - 1e-6:
            break
        kept.insert(0, segment)
    return kept
