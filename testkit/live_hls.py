"""A local LIVE HLS stream: segments of a synthetic scene appear over time, over real HTTP.

The scene (known truth) is encoded once and cut into segments of ``segment_s`` (2 s: the scenes'
keyframe interval). A thread then plays the live encoder: the playlist ``live.m3u8`` first lists
``history`` segments, and one more segment appears every ``segment_s`` seconds of real time, in
a sliding window of the last ``keep`` segments (``#EXT-X-MEDIA-SEQUENCE`` counts the ones that
slid out), with no ``#EXT-X-ENDLIST`` until ``end()`` is called (or, with ``end_when_done``, the
scene has no segment left; otherwise the stream just stops growing: a stall). The playlist is
replaced atomically (written aside, renamed), as a real packager does. The stream's clock starts
when the playlist is first read, so where a reader's live edge falls does not depend on how long
it took to come (a flow's start-up).

Segment ``n`` holds the scene's time ``[n * segment_s, (n + 1) * segment_s)``. With
``started_at``, every listed segment carries its ``#EXT-X-PROGRAM-DATE-TIME``: ``started_at``
plus the durations of the segments before it.
"""

from __future__ import annotations

import math
import threading
from datetime import datetime, timedelta
from pathlib import Path

from synthetic import SceneSpec
from testkit.hls import program_date_time, write_hls
from testkit.media_server import MediaServer


class LiveHls:
    """A live HLS stream of ``scene`` served by a ``MediaServer`` over ``root``."""

    def __init__(
        self,
        scene: SceneSpec,
        root: Path,
        *,
        segment_s: float = 2.0,
        history: int = 3,
        keep: int = 5,
        interval_s: float | None = None,
        end_when_done: bool = False,
        started_at: datetime | None = None,
    ) -> None:
        self.root, self.segment_s = root, segment_s
        self.interval_s = segment_s if interval_s is None else interval_s
        self.history, self.keep, self.end_when_done = history, keep, end_when_done
        self.started_at = started_at
        write_hls(scene, root, segment_s)
        self.segments = sorted(p.name for p in root.glob("segment_*.ts"))
        self.durations = _durations(root / "index.m3u8")
        self.shown = 0
        self.ended = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._play, name="live-hls", daemon=True)
        self.server = MediaServer(root)

    @property
    def url(self) -> str:
        return self.server.url("live.m3u8")

    def start(self) -> LiveHls:
        self._show(min(self.history, len(self.segments)))
        self.server.start()
        self._thread.start()
        return self

    def end(self) -> None:
        """Write ``#EXT-X-ENDLIST``: the stream has ended."""
        with self._lock:
            self.ended = True
            self._write()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.server.stop()

    def _play(self) -> None:
        while not any(r.path.endswith("live.m3u8") for r in self.server.requests):
            if self._stop.wait(0.05):
                return
        while not self._stop.wait(self.interval_s):
            with self._lock:
                if self.ended:
                    return
            if self.shown < len(self.segments):
                self._show(self.shown + 1)
            elif self.end_when_done:
                self.end()
                return

    def _show(self, count: int) -> None:
        with self._lock:
            self.shown = count
            self._write()

    def moment_of(self, n: int) -> datetime:
        """The program date-time of segment ``n`` (``started_at`` must be set)."""
        assert self.started_at is not None
        return self.started_at + timedelta(seconds=sum(self.durations[:n]))

    def _write(self) -> None:
        first = max(0, self.shown - self.keep)
        target = max(math.ceil(max(self.durations, default=self.segment_s) - 1e-3), 1)
        lines = [
            "#EXTM3U",
            "#EXT-X-VERSION:3",
            f"#EXT-X-TARGETDURATION:{target}",
            f"#EXT-X-MEDIA-SEQUENCE:{first}",
        ]
        for n in range(first, self.shown):
            if self.started_at is not None:
                lines.append(program_date_time(self.moment_of(n)))
            lines += [f"#EXTINF:{self.durations[n]:.3f},", self.segments[n]]
        if self.ended:
            lines.append("#EXT-X-ENDLIST")
        aside = self.root / "live.m3u8.tmp"
        aside.write_text("\n".join(lines) + "\n")
        aside.replace(self.root / "live.m3u8")


def _durations(vod: Path) -> list[float]:
    return [
        float(line.split(":", 1)[1].split(",")[0])
        for line in vod.read_text().splitlines()
        if line.startswith("#EXTINF:")
    ]
