"""Re-encoded clips: a source window decoded, transformed (redacted) and encoded again.

Only a window that is redacted is re-encoded (the others are stream-copied, ``copy.py``). Every
source frame of the window is kept at its source time: a frame shown at ``t`` s in the source is
the clip's frame at ``t - start_s``, to the millisecond (the clip's time base), so a span's
thumbnails, taken at source times, can be found in its clip by anyone (``ves verify``). The
picture is turned upright as the analysis saw it (a phone's display matrix) and scaled down to
at most ``max_side`` pixels; ``transform`` (redaction) is given each frame as RGB with its source
time. The encoder is ``tasks.mp4``'s libx264 (``veryfast``, shared with the review copy): the
redaction (CenterFace on every frame) costs far more than the encoding, and
``benchmarks/export.py`` measured the size and quality it gives (docs/measured/exports.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import av

from tasks.decode.stage import display_rotation, open_video
from tasks.mp4 import Rgb, add_h264_stream, frame_at, upright, upright_size

Transform = Callable[[Rgb, float], Rgb]  # (upright RGB frame, source time s) -> frame to keep


@dataclass(frozen=True)
class Clip:
    """A clip written to ``path``: the source time at its time 0 (``start_s``), the source time
    of its last frame (``end_s``), its frames' source times, and its coded size."""

    path: Path
    start_s: float
    end_s: float
    frame_times: tuple[float, ...]
    width: int
    height: int


def cut_clip(
    source: Path,
    window: tuple[float, float],
    out: Path,
    transform: Transform | None = None,
    max_side: int = 1280,
) -> Clip:
    """Encode the source's frames in ``window`` (seconds) to ``out`` (MP4, written beside it and
    renamed when whole). The clip's time 0 is its first frame (``Clip.start_s``, the first frame
    shown at or after the window's start), as in a stream-copied clip.

    Raises:
        SourceInvalid: the source does not open or decode.
        ValueError: no frame of the source lies in the window.
    """
    start_s, end_s = window
    turns = display_rotation(source) // 90 % 4
    partial = out.with_name(f".{out.name}.partial")
    times: list[float] = []
    try:
        with open_video(source) as container, av.open(str(partial), "w", format="mp4") as sink:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            size = upright_size(stream, turns, max_side)
            writer = _Writer(sink, size, stream, transform)
            for t, frame in _frames_in(container, stream, start_s, end_s):
                times.append(t)
                writer.write(upright(frame, size, turns), t, t - times[0])
            writer.close()
        if not times:
            raise ValueError(f"no frame of the source lies in {start_s:.3f}-{end_s:.3f} s")
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return Clip(out, times[0], times[-1], tuple(times), *size)


def _frames_in(
    container: av.container.InputContainer, stream: av.VideoStream, start_s: float, end_s: float
) -> Iterator[tuple[float, av.VideoFrame]]:
    """The stream's frames shown in ``start_s``..``end_s``, with their times (s)."""
    container.seek(math.floor(start_s * av.time_base), backward=True)
    for frame in container.decode(stream):
        t = frame.time
        if t is None or t < start_s - 1e-6:
            continue
        if t > end_s + 1e-6:
            break
        yield t, frame


class _Writer:
    """One MP4 being written: its encoder and the transform its frames get."""

    def __init__(
        self,
        sink: av.container.OutputContainer,
        size: tuple[int, int],
        stream: av.VideoStream,
        transform: Transform | None,
    ) -> None:
        self.sink, self.transform = sink, transform
        self.encoder = add_h264_stream(sink, size, stream.average_rate)

    def write(self, picture: Rgb, source_t: float, clip_t: float) -> None:
        if self.transform is not None:
            picture = self.transform(picture, source_t)
        self.sink.mux(self.encoder.encode(frame_at(picture, clip_t)))

    def close(self) -> None:
        self.sink.mux(self.encoder.encode(None))
