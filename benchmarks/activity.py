"""The activity map's cost and the share it judges still, against the plain decode (issue 32).

    nice -n 15 .venv/bin/python benchmarks/activity.py [--segment-s 60] [--repeat 10]

For 5 %, 20 % and 50 % of the time active, a 1080p 30 fps noisy scene (a textured backdrop,
sensor-like noise, 2 s GOPs, x264's B-frames) with short passes spread evenly is rendered for
``--segment-s`` and repeated ``--repeat`` times by stream copy (``benchmarks/_clips.py``), then,
back to back on the same file: the plain decode (every frame, converting none) and
``map_activity``. Printed per case: both times, their ratio, the share judged still, and the
floor the flow would pay if it decoded only the active GOPs (map + active share x decode).

Measured at 3089b21 (``--segment-s 60 --repeat 10``, 2 cores shared with a CI run), 10 min:
5 %: decode 73.5 s, map 7.54 s (0.102x), 64 % still, floor 0.47x; 20 %: 48.5 s, 4.46 s
(0.092x), 4 % still, floor 1.06x; 50 %: 52.5 s, 4.57 s (0.087x), 0 % still, floor 1.09x.
The passes here are spread evenly (the worst case for a GOP-grained map): each 1.5 s pass
costs its GOP(s) plus a GOP of margin each side, about 8 s of 2 s GOPs.
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._clips import repeat_segment
from benchmarks.pipeline import plain_decode
from tasks.activity.map import map_activity

CACHE = Path(__file__).resolve().parent / ".cache"
FPS, WIDTH, HEIGHT, GOP_S, PASS_S = 30, 1920, 1080, 2, 1.5


def write_segment(path: Path, seconds: int, active: float) -> None:
    """``seconds`` of 1080p with passes of ``PASS_S`` covering ``active`` of the time."""
    rng = np.random.default_rng(11)
    coarse = rng.uniform(60, 160, size=(HEIGHT // 60, WIDTH // 60, 3)).astype(np.uint8)
    backdrop = np.kron(coarse, np.ones((60, 60, 1), dtype=np.uint8)).astype(np.int16)
    noise = rng.normal(0, 3, size=(4, HEIGHT, WIDTH, 3)).astype(np.int16)
    count = max(1, round(seconds * active / PASS_S))
    starts = np.linspace(0, seconds - PASS_S, count + 2)[1:-1] if count else []
    with av.open(str(path), "w") as out:
        options = {"preset": "veryfast", "sc_threshold": "0"}
        stream = out.add_stream("libx264", rate=FPS, options=options)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.gop_size, stream.bit_rate = GOP_S * FPS, 4_000_000
        stream.time_base = Fraction(1, FPS)
        for index in range(seconds * FPS):
            t, frame = index / FPS, backdrop + noise[index % 4]
            for start in starts:
                if start <= t <= start + PASS_S:
                    x = int((t - start) / PASS_S * (WIDTH - 120))
                    frame[400:640, x : x + 120] = (30, 190, 60)
            rgb = np.clip(frame, 0, 255).astype(np.uint8)
            picture = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            picture.pts = index
            out.mux(stream.encode(picture))
        out.mux(stream.encode(None))


def clip(active: float, segment_s: int, repeat: int) -> Path:
    """The cached clip of ``active`` share, ``segment_s`` x ``repeat`` seconds long."""
    CACHE.mkdir(exist_ok=True)
    segment = CACHE / f"activity-1080p-{segment_s}s-{round(active * 100)}pct.mp4"
    if not segment.exists():
        write_segment(segment, segment_s, active)
    if repeat <= 1:
        return segment
    if segment_s != 60:  # repeat_segment shifts each copy by the clip cache's 60 s
        raise SystemExit("--repeat needs --segment-s 60")
    path = segment.with_name(segment.name.replace(f"{segment_s}s", f"{segment_s * repeat}s"))
    if not path.exists():
        repeat_segment(segment, path, repeat)
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--segment-s", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    print(
        "| active | seconds | plain decode s | map s | map / decode | judged still "
        "| map + active decode / decode |\n|---|---|---|---|---|---|---|"
    )
    for active in (0.05, 0.20, 0.50):
        path = clip(active, args.segment_s, args.repeat)
        decode_s, _ = plain_decode(path)
        started = time.perf_counter()
        amap = map_activity(path)
        map_s = time.perf_counter() - started
        floor = (map_s + (1 - amap.still_fraction) * decode_s) / decode_s
        print(
            f"| {active:.0%} | {args.segment_s * args.repeat} | {decode_s:.1f} | {map_s:.2f} "
            f"| {map_s / decode_s:.3f} | {amap.still_fraction:.0%} | {floor:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
