"""Short clips cut from a video's source around evidence spans, for export bundles.

A clip covers a span widened by ``pad_s`` on each side (within the video), re-encoded as H.264 in
MP4 with every source frame of that window kept at its source time: a frame shown at ``t`` s in
the source is the clip's frame at ``t - start_s``, to the millisecond (the clip's time base), so
a span's thumbnails, taken at source times, can be found in its clip by anyone (``ves verify``).
The picture is turned upright as the analysis saw it (a phone's display matrix) and scaled down
to at most ``max_side`` pixels. Stream copy would be cheaper, but it starts at a keyframe, keeps
the source's timestamps as they are and cannot be redacted; ``transform`` (redaction) is given
each frame as RGB with its source time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt

from tasks.decode.stage import display_rotation, open_video

CLIP_TIME_BASE = Fraction(1, 1000)  # clip timestamps in milliseconds
Rgb = npt.NDArray[np.uint8]
Transform = Callable[[Rgb, float], Rgb]  # (upright RGB frame, source time s) -> frame to keep


@dataclass(frozen=True)
class Clip:
    """A clip written to ``path``: the source window it covers and its frames' source times."""

    path: Path
    start_s: float
    end_s: float
    frame_times: tuple[float, ...]
    width: int
    height: int


def clip_window(
    span_start_s: float, span_end_s: float, duration_s: float | None, pad_s: float = 1.0
) -> tuple[float, float]:
    """The source window a span's clip covers: the span widened by ``pad_s``, in the video."""
    end = span_end_s + pad_s
    return max(0.0, span_start_s - pad_s), min(end, duration_s) if duration_s else end


def _even_size(width: int, height: int, max_side: int) -> tuple[int, int]:
    scale = min(1.0, max_side / max(width, height))
    return max(2, 2 * round(width * scale / 2)), max(2, 2 * round(height * scale / 2))


def cut_clip(
    source: Path,
    window: tuple[float, float],
    out: Path,
    transform: Transform | None = None,
    max_side: int = 1280,
) -> Clip:
    """Encode the source's frames in ``window`` (seconds) to ``out`` (MP4, written beside it and
    renamed when whole).

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
            width, height = stream.codec_context.width, stream.codec_context.height
            if turns % 2:
                width, height = height, width
            size = _even_size(width, height, max_side)
            encoder = _encoder(sink, size, stream.average_rate)
            container.seek(math.floor(start_s * av.time_base), backward=True)
            for frame in container.decode(stream):
                t = frame.time
                if t is None or t < start_s - 1e-6:
                    continue
                if t > end_s + 1e-6:
                    break
                picture = _upright(frame, size, turns)
                if transform is not None:
                    picture = transform(picture, t)
                sink.mux(encoder.encode(_clip_frame(picture, t - start_s)))
                times.append(t)
            sink.mux(encoder.encode(None))
        if not times:
            raise ValueError(f"no frame of the source lies in {start_s:.3f}-{end_s:.3f} s")
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return Clip(out, start_s, end_s, tuple(times), *size)


def _encoder(
    sink: av.container.OutputContainer, size: tuple[int, int], rate: Fraction | None
) -> av.VideoStream:
    encoder = sink.add_stream("libx264", rate=rate or 25, options={"crf": "20", "bf": "0"})
    encoder.width, encoder.height = size
    encoder.pix_fmt = "yuv420p"
    encoder.time_base = CLIP_TIME_BASE
    return encoder


def _upright(frame: av.VideoFrame, size: tuple[int, int], turns: int) -> Rgb:
    width, height = size if turns % 2 == 0 else size[::-1]
    small = frame.reformat(width=width, height=height, format="rgb24")
    rgb: Rgb = np.asarray(small.to_ndarray(), dtype=np.uint8)
    return np.ascontiguousarray(np.rot90(rgb, turns)) if turns else rgb


def _clip_frame(picture: Rgb, t_s: float) -> av.VideoFrame:
    frame = av.VideoFrame.from_ndarray(picture, format="rgb24").reformat(format="yuv420p")
    frame.pts = round(t_s / CLIP_TIME_BASE)
    frame.time_base = CLIP_TIME_BASE
    return frame
