"""The review copy (issue 43) against a plain decode of the same file, in the same run.

    .venv/bin/python benchmarks/review.py [--fresh] [--no-flow]
    .venv/bin/python benchmarks/review.py --presets

Two 10-minute 1080p 30 fps sources, cached under benchmarks/.cache: the pipeline benchmark's
H.264 clip (x264 with B-frames, noisy, ~4 Mbit/s: ``benchmarks/_clips.py``) and the same
pictures as MPEG-4 Part 2 in AVI, as the street clip and many camera exports come (its 60 s
segment encoded from the H.264 one at ~8 Mbit/s, then repeated ten times by stream copy). For
each, back to back: (1) the plain decode (``benchmarks/pipeline.py``: PyAV decodes every frame,
converting none); (2) the review copy (``tasks.review.stage.make_review_copy``): the H.264 clip
copied, the MPEG-4 one transcoded to 720p H.264. Then, unless ``--no-flow``, the flow on the 60 s
H.264 clip in a fresh process (as ``benchmarks/pipeline.py`` runs it), whose ``cost.json`` says
what share of the run the review copy took. It prints one line per measure and a table for
docs/measured/performance.md. ``--presets`` transcodes the MPEG-4 clip's 60 s segment with
x264's ``veryfast`` (the one ``tasks.mp4`` uses), ``superfast`` and ``ultrafast`` presets, after
its plain decode: what a faster preset would buy.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import av

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._clips import CACHE, FPS, ClipSpec, make_clip, repeat_segment
from benchmarks.pipeline import DEFAULT_MODE, clip, measure_in_child, plain_decode
from tasks import mp4
from tasks.review.stage import ReviewCopy, make_review_copy

H264_10MIN = ClipSpec(600, 1080)
MPEG4_BITRATE = 8_000_000  # what a camera's MPEG-4 Part 2 export spends on 1080p30


def mpeg4_clip(fresh: bool) -> Path:
    """The 10-minute 1080p clip as MPEG-4 Part 2 in AVI (cached)."""
    path = CACHE / "review-1080p-600s-mpeg4.avi"
    if fresh or not path.exists():
        segment = CACHE / "review-1080p-60s-mpeg4.avi"
        _to_mpeg4(make_clip(replace(H264_10MIN, seconds=60), fresh), segment)
        partial = path.with_name(f".{path.name}.partial")
        repeat_segment(segment, partial, 10, fmt="avi")
        partial.replace(path)
    return path


def _to_mpeg4(source: Path, out: Path) -> None:
    with av.open(str(source)) as src, av.open(str(out), "w", format="avi") as sink:
        video = src.streams.video[0]
        video.thread_type = "AUTO"
        encoder = sink.add_stream("mpeg4", rate=video.average_rate, options={"g": "30"})
        encoder.width, encoder.height = video.codec_context.width, video.codec_context.height
        encoder.pix_fmt, encoder.bit_rate = "yuv420p", MPEG4_BITRATE
        encoder.time_base = Fraction(1, FPS)
        for index, frame in enumerate(src.decode(video)):
            frame.pts, frame.time_base = index, encoder.time_base  # one a frame, as AVI keeps
            sink.mux(encoder.encode(frame))
        sink.mux(encoder.encode(None))


def measure(label: str, path: Path, scratch: Path) -> tuple[float, ReviewCopy]:
    """The plain decode of ``path``, then its review copy; prints both and their ratio."""
    decode_s, frames = plain_decode(path)
    print(f"{label}: plain decode {decode_s:.1f} s ({frames} frames, {600 / decode_s:.1f}x rt)")
    made = make_review_copy(path, scratch / "review.mp4")
    print(
        f"{label}: review copy {made.mode} {made.seconds:.1f} s ({600 / made.seconds:.1f}x rt), "
        f"{made.width}x{made.height}, {made.bytes / 2**20:.0f} MiB of "
        f"{path.stat().st_size / 2**20:.0f} MiB; review / decode {made.seconds / decode_s:.3f}"
    )
    return decode_s, made


def flow_share() -> tuple[float, float]:
    """The flow on the 60 s H.264 clip in a fresh process: its wall time, and the review
    copy's seconds in its ``cost.json``."""
    result = measure_in_child(
        make_clip(replace(H264_10MIN, seconds=60)), clip(2, False), {"detector": DEFAULT_MODE}
    )
    review_s = float(result["cost"]["stages"]["review_copy"])
    flow_s = float(result["flow_s"])
    print(
        f"flow, 60 s 1080p H.264 ({DEFAULT_MODE}): {flow_s:.1f} s, review copy {review_s:.3f} s "
        f"({100 * review_s / flow_s:.2f} % of the run)"
    )
    return flow_s, review_s


def compare_presets() -> None:
    """The transcode of the 60 s MPEG-4 segment with each of three x264 presets."""
    segment = CACHE / "review-1080p-60s-mpeg4.avi"
    mpeg4_clip(fresh=False)
    print(f"mpeg4 60 s: plain decode {plain_decode(segment)[0]:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        for preset in ("veryfast", "superfast", "ultrafast"):
            mp4.PRESET = preset  # read by add_h264_stream at each call
            made = make_review_copy(segment, Path(tmp) / "review.mp4")
            print(f"mpeg4 60 s: {preset}: {made.seconds:.1f} s, {made.bytes / 2**20:.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fresh", action="store_true", help="regenerate the clips")
    parser.add_argument("--no-flow", action="store_true", help="skip the flow on the 60 s clip")
    parser.add_argument("--presets", action="store_true", help="compare x264 presets only")
    args = parser.parse_args()
    if args.presets:
        compare_presets()
        return
    h264, mpeg4 = make_clip(H264_10MIN, args.fresh), mpeg4_clip(args.fresh)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            ("10 min 1080p H.264 (MP4)", *measure("h264", h264, Path(tmp))),
            ("10 min 1080p MPEG-4 Part 2 (AVI)", *measure("mpeg4", mpeg4, Path(tmp))),
        ]
    print("\n| source | plain decode s (x rt) | review copy | review s (x rt) | review / decode |")
    print("|---|---|---|---|---|")
    for label, decode_s, made in rows:
        print(
            f"| {label} | {decode_s:.1f} ({600 / decode_s:.1f}x) | {made.mode} | "
            f"{made.seconds:.1f} ({600 / made.seconds:.1f}x) | {made.seconds / decode_s:.3f} |"
        )
    if not args.no_flow:
        flow_share()
    print(f"(measured in {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
