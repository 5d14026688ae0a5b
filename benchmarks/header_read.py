"""What the dry run's header read costs, against downloading the source whole, in the same run.

    .venv/bin/python benchmarks/header_read.py [--width 1280 --height 720 --fps 25] [--repeat 5]

A 60 s synthetic clip (1280x720 @ 25 fps, a keyframe every 2 s, noise so it has a camera's
bitrate) is encoded once and looped to 10 minutes by copying packets; each is written with its
index (``moov``) at the end, as FFmpeg writes an MP4, and at the start (``faststart``), and the
10-minute one as an HLS VOD (2 s segments). ``testkit.media_server`` serves them on loopback. For
each: bytes and seconds of ``read_header`` (the dry run's read, through the SSRF guard), with and
without byte ranges, against ``netguard.download`` of the whole file (what the run's decode stage
fetches; an HLS run fetches every segment, summed here from the files). Medians of ``--repeat``.
Loopback has no latency: over a network each request adds a round trip (one for an index at the
start, two for one at the end), and the whole file costs its bytes over the link.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synthetic import SceneSpec, write_video
from tasks.decode.header import HeaderLimits, read_header
from tasks.decode.hls import HlsLimits, fetch_hls
from testkit.hls import write_hls
from testkit.media_server import MediaServer
from testkit.remux import remux
from ves.netguard import download

LIMITS = HeaderLimits(max_bytes=4 * 1024 * 1024, timeout_s=10.0, allow_private=True)


def make_sources(root: Path, spec: SceneSpec) -> dict[str, tuple[str, str, int]]:
    """name -> (path on the server, kind, bytes a run downloads)."""
    write_video(spec, root / "60s-end.mp4")
    remux(root / "60s-end.mp4", root / "60s-start.mp4", faststart=True)
    remux(root / "60s-end.mp4", root / "600s-end.mp4", loops=10)
    remux(root / "60s-end.mp4", root / "600s-start.mp4", faststart=True, loops=10)
    write_hls(root / "600s-start.mp4", root / "hls")
    segments = sum(p.stat().st_size for p in (root / "hls").glob("*.ts"))
    sources = {
        f"{name}": (f"{name}.mp4", "url", (root / f"{name}.mp4").stat().st_size)
        for name in ("60s-end", "60s-start", "600s-end", "600s-start")
    }
    sources["600s-hls"] = ("hls/index.m3u8", "hls", segments)
    return sources


def _median_read(server: MediaServer, path: str, kind: str, repeat: int) -> tuple[float, int, str]:
    times, header = [], None
    for _ in range(repeat):
        header = read_header(server.url(path), kind, LIMITS)
        times.append(header.read_s)
    assert header is not None
    said = f"{header.duration_s:g} s" if header.duration_s else f"({header.reason})"
    return statistics.median(times), header.bytes_read, said


def _median_download(
    server: MediaServer, path: str, kind: str, scratch: Path, repeat: int
) -> float:
    """Seconds to fetch the source whole as a run's decode stage does (every HLS segment)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        if kind == "hls":
            limits = HlsLimits(1e9, 1 << 34, 1 << 16, 1 << 16, 30.0, True)
            fetch_hls(server.url(path), scratch / "whole", limits)
        else:
            download(
                server.url(path),
                scratch / "whole",
                allow_private=True,
                timeout_s=30,
                max_bytes=1 << 34,
            )
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--fps", type=int, default=25)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    spec = SceneSpec(
        width=args.width,
        height=args.height,
        fps=args.fps,
        duration_s=60.0,
        noise=0.08,
        bitrate=2_000_000,
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sources = make_sources(root, spec)
        print(f"{args.width}x{args.height} @ {args.fps} fps, medians of {args.repeat}\n")
        print(
            "| source | size | read (ranges) | read (no ranges) | says (ranges / none) "
            "| download whole |"
        )
        print("|---|---|---|---|---|---|")
        with MediaServer(root) as ranged, MediaServer(root, ranges=False) as plain:
            for name, (path, kind, size) in sources.items():
                read_s, read_b, said = _median_read(ranged, path, kind, args.repeat)
                plain_s, plain_b, plain_said = _median_read(plain, path, kind, args.repeat)
                whole_s = _median_download(ranged, path, kind, root, args.repeat)
                print(
                    f"| {name} | {size / 1e6:.1f} MB | {read_b / 1e3:.0f} kB, "
                    f"{read_s * 1000:.0f} ms | {plain_b / 1e3:.0f} kB, {plain_s * 1000:.0f} ms "
                    f"| {said} / {plain_said} | {size / 1e6:.1f} MB, {whole_s * 1000:.0f} ms |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
