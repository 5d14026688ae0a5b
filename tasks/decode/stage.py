"""Stage 1, decode: bring the source next to the worker, hash it, probe it, enforce the bounds.

URL sources are downloaded with the SSRF-guarded client (bounded bytes and time); HLS streams are
fetched segment by segment (see ``tasks.decode.hls``); uploads are read in place from the local
store, or downloaded into the run's scratch from an object store. Then PyAV probes
the file: a source without a video stream, a still image, or larger than allowed fails here, with a
message a user can act on, before any frame is decoded.

PyAV errors are translated into the service's errors here (``open_video``) and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

import av
import av.container
from prefect import get_run_logger, task
from prefect.cache_policies import NONE
from prefect.client.schemas.objects import State

from storage.artifacts.blobs import BlobStore, open_blob_store
from storage.artifacts.layout import sha256_file
from storage.catalog.videos import VideoStore
from tasks.context import RunContext, SourceRef
from tasks.decode.hls import HlsDownload, HlsLimits, fetch_hls
from ves.clock import to_rfc3339
from ves.errors import (
    BlobNotFound,
    LimitExceeded,
    SourceInvalid,
    SourceUnreachable,
    Unavailable,
)
from ves.netguard import Downloaded, download
from ves.settings import Settings

# The most frames per second of video a run decodes: the duration bound alone does not bound the
# work, as a file of a few megabytes can hold 1000 frames a second (or frames that all claim the
# same instant). 240 fps is the fastest cameras' slow motion.
MAX_FRAME_RATE = 240


def frame_budget(max_duration_s: float) -> int:
    """The most frames a run bounded to ``max_duration_s`` seconds decodes."""
    return int(max_duration_s * MAX_FRAME_RATE)


_STILL_FORMATS = {"image2", "png_pipe", "jpeg_pipe", "webp_pipe", "bmp_pipe", "tiff_pipe", "gif"}
_STILL_CODECS = {"png", "bmp", "tiff", "webp", "gif"}


@dataclass(frozen=True)
class SourceInfo:
    """The local source file and what probing it found."""

    path: str
    sha256: str
    size_bytes: int
    duration_s: float | None
    width: int
    height: int
    fps: float
    codec: str
    container: str
    # Degrees the picture turns counterclockwise to be shown upright (a phone's display matrix:
    # 0, 90, 180 or 270); ``width`` and ``height`` are then those of the upright picture.
    rotation: int = 0
    # When the source's time 0 was recorded, as the source says (RFC 3339 UTC): an HLS
    # playlist's program date-time of the first segment read; None when it says nothing.
    recorded_at: str | None = None


@contextmanager
def open_video(path: Path) -> Iterator[av.container.InputContainer]:
    """Open a local file with PyAV, translating its errors into ``SourceInvalid``."""
    if path.stat().st_size == 0:
        raise SourceInvalid("the source is empty (0 bytes)")
    try:
        container = av.open(str(path), mode="r")
    except (av.error.FFmpegError, UnicodeDecodeError) as exc:
        raise SourceInvalid(f"the source is not a readable video ({_reason(exc)})") from exc
    try:
        yield container
    except av.error.FFmpegError as exc:
        raise SourceInvalid(f"the video is corrupt ({_reason(exc)})") from exc
    finally:
        container.close()


def _reason(exc: Exception) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def acquire_source(
    ref: SourceRef,
    scratch: Path,
    settings: Settings,
    store: BlobStore | None = None,
    max_duration_s: float | None = None,
) -> Downloaded:
    """The source as a local file, with its sha256 and size; an HLS stream is fetched up to
    ``max_duration_s`` (the run's bound: its option, its plan's and the service's), which
    defaults to the service's, into an ``HlsDownload`` (which says when its time 0 was)."""
    if ref.kind == "upload":
        path = _local_upload(ref, scratch, store or open_blob_store(settings))
        # The upload was hashed and verified as it arrived and stored whole; hashing gigabytes
        # again here would double the stage's I/O for nothing.
        return Downloaded(path, ref.sha256 or sha256_file(path), path.stat().st_size)
    assert ref.url is not None
    if ref.kind == "hls":
        limits = hls_limits(settings, max_duration_s or settings.max_duration_s)
        return fetch_hls(ref.url, scratch / "source.ts", limits)
    return download(
        ref.url,
        scratch / "source.bin",
        allow_private=settings.allow_private_sources,
        timeout_s=settings.read_timeout_s,
        max_bytes=settings.max_source_bytes,
    )


def _local_upload(ref: SourceRef, scratch: Path, store: BlobStore) -> Path:
    """An uploaded source on this machine: read in place from the local store (or, for videos
    uploaded before the store, from the path recorded then), else downloaded into scratch."""
    missing = SourceInvalid("the uploaded recording is missing; upload it again")
    if not ref.path:
        raise missing
    key = store.key_of(ref.path)  # None: a path recorded before the store (absolute, local)
    local = Path(ref.path) if key is None else store.local_path(key)
    if local is None and key is not None:
        dest = scratch / f"source{PurePosixPath(key).suffix}"
        try:
            store.download(key, dest)
        except BlobNotFound as exc:
            raise missing from exc
        return dest
    if local is None or not local.is_file():
        raise missing
    return local


def hls_limits(settings: Settings, max_duration_s: float) -> HlsLimits:
    """The bounds an HLS stream is read within: the service's bytes, picture size, timeout and
    private-address policy, and the run's ``max_duration_s`` (a live session's too)."""
    return HlsLimits(
        max_duration_s=max_duration_s,
        max_bytes=settings.max_source_bytes,
        max_width=settings.max_width,
        max_height=settings.max_height,
        timeout_s=settings.read_timeout_s,
        allow_private=settings.allow_private_sources,
    )


def probe_video(path: Path, settings: Settings) -> tuple[float | None, int, int, float, str, str]:
    """Duration, width, height, fps, codec and container of a local video; bounds enforced."""
    with open_video(path) as container:
        if not container.streams.video:
            raise SourceInvalid("the source has no video stream")
        stream = container.streams.video[0]
        if stream.codec_context is None:  # FFmpeg has no decoder for the stream's codec
            raise SourceInvalid("the video stream's codec is unknown: it cannot be decoded")
        codec, fmt = stream.codec_context.name, container.format.name
        if fmt in _STILL_FORMATS or codec in _STILL_CODECS:
            raise SourceInvalid("the source is a still image, not a video")
        width, height = stream.codec_context.width, stream.codec_context.height
        if not width or not height:
            raise SourceInvalid("the video stream has no picture size")
        if width > settings.max_width or height > settings.max_height:
            raise LimitExceeded(
                f"the video is {width}x{height}; the largest accepted is "
                f"{settings.max_width}x{settings.max_height}"
            )
        fps = float(stream.average_rate or stream.guessed_rate or 0) or 25.0
        duration = _duration(container, stream)
        _check_frames(stream.frames, duration, fps, settings.max_duration_s)
        return duration, width, height, fps, codec, fmt


def _check_frames(frames: int, duration: float | None, fps: float, max_duration_s: float) -> None:
    """Refuse a video whose declared frames within the duration bound exceed the frame budget
    (a decompression bomb: a tiny file, a huge frame count), before decoding any of them."""
    rate = frames / duration if frames and duration else fps
    within = min(duration, max_duration_s) if duration else max_duration_s
    if rate * within > frame_budget(max_duration_s):
        raise LimitExceeded(
            f"the video declares {rate:.0f} frames per second; at most "
            f"{frame_budget(max_duration_s)} frames ({MAX_FRAME_RATE} fps for "
            f"{max_duration_s:g} s) are decoded"
        )


def stream_start_s(stream: av.VideoStream) -> float:
    """The time (s) of the stream's first timestamp: a run's time 0 (the sample stage counts
    from it, and the review copy shifts its frames by it)."""
    base = stream.time_base
    return float(stream.start_time * base) if stream.start_time and base else 0.0


def _duration(container: av.container.InputContainer, stream: av.VideoStream) -> float | None:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    return None


def decode_source(
    ref: SourceRef,
    scratch: Path,
    settings: Settings,
    store: BlobStore | None = None,
    max_duration_s: float | None = None,
) -> SourceInfo:
    """Acquire, hash and probe the source (the pure core of the decode stage)."""
    fetched = acquire_source(ref, scratch, settings, store, max_duration_s)
    duration, width, height, fps, codec, fmt = probe_video(fetched.path, settings)
    rotation = display_rotation(fetched.path)
    if rotation in (90, 270):
        width, height = height, width
    probed = (duration, width, height, fps, codec, fmt, rotation)
    path, clock = str(fetched.path), _recorded_at(fetched)
    return SourceInfo(path, fetched.sha256, fetched.size, *probed, recorded_at=clock)


def _recorded_at(fetched: Downloaded) -> str | None:
    """When the fetched file's time 0 was recorded, if its source says so.

    The sample stage counts time from the file's first timestamp, and an HLS file begins with
    the first segment fetched: its program date-time is the clock time of the run's t = 0.
    """
    started = fetched.started_at if isinstance(fetched, HlsDownload) else None
    return to_rfc3339(started) if started is not None else None


def note_recorded_at(ctx: RunContext, at: datetime | str | None) -> None:
    """Record ``at`` as the clock time of the run's video's time 0, if the video has none (a
    client's own ``recorded_at`` is never overwritten); nothing when ``at`` is None."""
    if at is None:
        return
    moment = at if isinstance(at, str) else to_rfc3339(at)
    if VideoStore(ctx.runs.catalog).note_recorded_at(ctx.tenant_id, ctx.video_id, moment):
        get_run_logger().info("recorded_at %s, from the HLS playlist's program date-time", moment)


def display_rotation(path: Path) -> int:
    """How far the first frame turns to be upright (0, 90, 180 or 270 degrees counterclockwise).

    FFmpeg hands the display matrix over with each decoded frame and leaves the turning to the
    player; the sample stage turns every frame, so that thumbnails, boxes and evidence show what
    a viewer sees (a phone's portrait video was analysed lying on its side). A first frame that
    does not decode says nothing: 0, and sampling reports the damage.
    """
    try:
        with open_video(path) as container:
            for frame in container.decode(container.streams.video[0]):
                return round(float(frame.rotation or 0) / 90) % 4 * 90
    except SourceInvalid:
        pass
    return 0


def transient(_task: object, _task_run: object, state: State[Any]) -> bool:
    """Whether a failed decode is worth one more try: a network or a store that failed, not a
    source that is invalid or over a bound (retrying those doubled their time for nothing)."""
    return isinstance(state.data, (SourceUnreachable, Unavailable))


@task(
    name="decode",
    cache_policy=NONE,
    retries=1,
    retry_delay_seconds=2,
    retry_condition_fn=transient,
)
def decode_task(ctx: RunContext) -> SourceInfo:
    """Fetch and probe the run's source (retried once if the network or the store failed)."""
    ctx.report("decode")
    # An HLS stream is fetched only as far as the run will process it (a run bounded to 60 s
    # fetched 600 s of a long playlist, and failed on segments it would never have used).
    scratch, bound = ctx.layout.scratch_dir, ctx.max_duration_s
    info = decode_source(ctx.source, scratch, ctx.settings, ctx.store, bound)
    note_recorded_at(ctx, info.recorded_at)
    get_run_logger().info(
        "source %s: %d bytes, %dx%d %s at %.2f fps, %s s, sha256 %s",
        ctx.source.kind,
        info.size_bytes,
        info.width,
        info.height,
        info.codec,
        info.fps,
        f"{info.duration_s:.1f}" if info.duration_s else "unknown",
        info.sha256,
    )
    return info
