"""The clock of a followed live playlist: when reloading it has gone on long enough.

A live playlist is reloaded while it is followed (RFC 8216 6.3.4): by the whole-file fetch
(``tasks.decode.hls``, every half target duration, until the stream ends or the duration bound
is reached) and by a live window (``tasks.decode.live``, every target duration). Both count time
by the waits between reloads (the injected ``sleep``), which is what a stall consists of, so
their bounds are exact and testable without a real clock.
"""

from __future__ import annotations

from dataclasses import dataclass

STALL_TARGETS = 3  # a live stream that has not grown for this many target durations has ended
_EPS = 1e-6


@dataclass
class ReloadClock:
    """The waits between the reloads of one followed playlist, and since its last growth."""

    waited_s: float = 0.0
    since_growth_s: float = 0.0

    def grew(self) -> None:
        """The playlist listed a new segment: a stall starts over."""
        self.since_growth_s = 0.0

    def waited(self, seconds: float) -> None:
        """``seconds`` were waited before the next reload."""
        self.waited_s += seconds
        self.since_growth_s += seconds

    def stalled(self, target_s: float, *, strictly: bool = False) -> bool:
        """Whether the playlist has not grown for ``STALL_TARGETS`` target durations.

        ``strictly``: for MORE than that. The whole-file fetch asks so: it reloads every half
        target duration and gives a stalled stream that one reload more before it keeps what
        arrived (a live window reloads every target duration and ends at the bound itself).
        """
        bound = STALL_TARGETS * target_s
        if strictly:
            return self.since_growth_s > bound
        return self.since_growth_s >= bound - _EPS
