"""The synthetic clips of ``benchmarks/pipeline.py``: size, B-frames and noise chosen per case.

``synthetic.write_video`` always keeps x264's default B-frames (except in MPEG-TS), so the
clips are encoded here from frames its renderer draws, with ``bf=0`` when a case asks for none.
A 10-minute clip is its 60 s clip repeated ten times by stream copy (every 60 s clip starts on
an IDR frame, x264 makes closed GOPs): decoding it costs what ten minutes cost, and it is made in
seconds instead of the quarter of an hour that rendering 18,000 1080p frames takes here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import av

from synthetic import demo_scene, render_frame, scale_scene
from synthetic.scene import SceneSpec

CACHE = Path(__file__).resolve().parent / ".cache"
FPS = 30
_PREFETCH = 3
_SIZES = {720: 1280, 1080: 1920}
_NOISY_BITRATE = {720: 2_000_000, 1080: 4_000_000}
_SEGMENT_S = 60


@dataclass(frozen=True)
class ClipSpec:
    """One synthetic clip: its length, height (720 or 1080), B-frames or not, noise or not."""

    seconds: int
    height: int
    bframes: bool = True
    noisy: bool = True

    @property
    def label(self) -> str:
        length = f"{self.seconds // 60} min" if self.seconds >= 120 else f"{self.seconds} s"
        frames = "B-frames" if self.bframes else "no B"
        return f"{length} {self.height}p {frames} {'noisy' if self.noisy else 'clean'}"

    @property
    def filename(self) -> str:
        frames, noise = "b" if self.bframes else "nob", "noisy" if self.noisy else "clean"
        return f"pipeline-{self.height}p-{self.seconds}s-{frames}-{noise}.mp4"

    def scene(self) -> SceneSpec:
        """The demo scene at this size; noisy: sensor-like noise at ~2 (720p) or ~4 Mbit/s."""
        spec = scale_scene(
            demo_scene(),
            width=_SIZES[self.height],
            height=self.height,
            duration_s=self.seconds,
            fps=FPS,
        )
        if not self.noisy:
            return spec  # x264 at crf 20: a clean picture costs few bits
        return replace(spec, noise=3.0, bitrate=_NOISY_BITRATE[self.height])


def make_clip(clip: ClipSpec, fresh: bool = False) -> Path:
    """The cached file of ``clip`` (generated when missing or ``fresh``)."""
    path = CACHE / clip.filename
    if fresh or not path.exists():
        CACHE.mkdir(exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        if clip.seconds > _SEGMENT_S and clip.seconds % _SEGMENT_S == 0:
            segment = make_clip(replace(clip, seconds=_SEGMENT_S), fresh)
            repeat_segment(segment, partial, clip.seconds // _SEGMENT_S)
        else:
            _encode(clip.scene(), partial, clip.bframes)
        partial.replace(path)
    return path


def rendered_frames(spec: SceneSpec, indices: range | None = None) -> Iterator[av.VideoFrame]:
    """The frames ``indices`` of ``spec`` (default: all) as yuv420p, pts counted from 0 at the
    first, rendered a few ahead on a worker thread (``benchmarks/_idle.py`` encodes pieces)."""
    chosen = range(spec.frame_count) if indices is None else indices

    def render(index: int) -> av.VideoFrame:
        frame = av.VideoFrame.from_ndarray(render_frame(spec, index), format="rgb24")
        frame = frame.reformat(format="yuv420p")
        frame.pts = index - chosen.start
        return frame

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending: deque[Future[av.VideoFrame]] = deque()
        for index in chosen:
            pending.append(pool.submit(render, index))
            if len(pending) > _PREFETCH:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _encode(spec: SceneSpec, path: Path, bframes: bool) -> None:
    """libx264 as ``write_video`` sets it up (preset, 2 s GOP), with ``bf=0`` unless ``bframes``."""
    options = {"preset": spec.preset}
    if spec.bitrate is None:
        options["crf"] = str(spec.crf)
    if not bframes:
        options["bf"] = "0"
    with av.open(str(path), "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=spec.fps, options=options)
        stream.width, stream.height, stream.pix_fmt = spec.width, spec.height, "yuv420p"
        stream.gop_size = 2 * spec.fps
        stream.time_base = Fraction(1, spec.fps)
        if spec.bitrate is not None:
            stream.bit_rate = spec.bitrate
        for frame in rendered_frames(spec):
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def repeat_segment(
    segment: Path, path: Path, times: int, fmt: str = "mp4", segment_s: float = _SEGMENT_S
) -> None:
    """Write ``segment`` ``times`` over, back to back, by stream copy with shifted timestamps
    into a ``fmt`` file (the segment must be ``segment_s`` long, the clip cache's minute
    unless told)."""
    with av.open(str(segment)) as source, av.open(str(path), "w", format=fmt) as out:
        video = source.streams.video[0]
        stream = out.add_stream_from_template(video)
        assert video.duration is not None and video.time_base is not None
        step = int(segment_s / video.time_base)
        for turn in range(times):
            source.seek(0)
            for packet in source.demux(video):
                if packet.dts is None:
                    continue  # the demuxer's final flush packet
                packet.pts = None if packet.pts is None else packet.pts + turn * step
                packet.dts += turn * step
                packet.stream = stream
                out.mux(packet)
