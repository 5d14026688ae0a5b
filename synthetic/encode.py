"""Encoding a scene to H.264 so that frame ``i`` shows at ``i / fps``."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import av
from av.container import OutputContainer
from av.video.stream import VideoStream

from synthetic.render import render_frame
from synthetic.scene import GroundTruth, SceneSpec
from synthetic.truth import ground_truth

_PREFETCH = 3
_CONTAINERS = {".mp4": "mp4", ".m4v": "mp4", ".mov": "mov", ".mkv": "matroska", ".ts": "mpegts"}


def _container_format(path: Path, container: str | None) -> str:
    """Pick the muxer from the explicit name or the file extension."""
    if container is not None:
        return container
    try:
        return _CONTAINERS[path.suffix.lower()]
    except KeyError:
        raise ValueError(f"unknown video extension {path.suffix!r}") from None


def _add_stream(out: OutputContainer, spec: SceneSpec, fmt: str) -> VideoStream:
    """Add a libx264 yuv420p stream with time base 1/fps and a 2 s GOP.

    MPEG-TS has no edit lists, so B-frames there would shift the first pts
    by the reorder delay; they are disabled for it.
    """
    options = {"preset": spec.preset}
    if spec.bitrate is None:
        options["crf"] = str(spec.crf)
    if fmt == "mpegts":
        options["bf"] = "0"
    stream = out.add_stream("libx264", rate=spec.fps, options=options)
    stream.width, stream.height = spec.width, spec.height
    stream.pix_fmt = "yuv420p"
    stream.gop_size = 2 * spec.fps
    stream.time_base = Fraction(1, spec.fps)
    if spec.bitrate is not None:
        stream.bit_rate = spec.bitrate
    return stream


def _video_frame(spec: SceneSpec, index: int) -> av.VideoFrame:
    """Render a frame and convert it to the encoder's yuv420p, with pts = frame index."""
    rgb = av.VideoFrame.from_ndarray(render_frame(spec, index), format="rgb24")
    frame = rgb.reformat(format="yuv420p")
    frame.pts = index
    return frame


def _rendered(spec: SceneSpec) -> Iterator[av.VideoFrame]:
    """Every frame in order, rendered a few frames ahead on a worker thread.

    libx264 here keeps about one core busy, and numpy and swscale release the GIL,
    so rendering the next frames while one encodes saves most of the render time.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending: deque[Future[av.VideoFrame]] = deque()
        for index in range(spec.frame_count):
            pending.append(pool.submit(_video_frame, spec, index))
            if len(pending) > _PREFETCH:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _encode(spec: SceneSpec, path: Path, fmt: str) -> None:
    """Render and encode every frame with pts = frame index."""
    with av.open(str(path), "w", format=fmt) as out:
        stream = _add_stream(out, spec, fmt)
        for frame in _rendered(spec):
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def write_video(spec: SceneSpec, path: Path, *, container: str | None = None) -> GroundTruth:
    """Encode a scene to ``path`` (H.264) and return its ground truth.

    The muxer follows the extension (.mp4, .mov, .mkv, .ts) unless
    ``container`` names one. The file appears atomically: it is written
    beside the target and renamed when complete.
    """
    path = Path(path)
    fmt = _container_format(path, container)
    truth = ground_truth(spec)
    partial = path.with_name(f".{path.name}.partial")
    try:
        _encode(spec, partial, fmt)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    return truth
