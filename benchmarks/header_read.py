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
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synthetic import SceneSpec, write_video
from tasks.decode.header import HeaderLimits, read_header
from tasks.decode.hls import HlsLimits, fetch_hls
from testkit.hls import write_hls
from testkit.media_server import MediaServer
from testkit.remux import remux
from ves.netguard import download

LINK = (0.020, 50.0)  # a 20 ms round trip, 50 Mbit/s: an ordinary link to a remote store
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


@dataclass(frozen=True)
class Read:
    """The median header read of one source on one server."""

    seconds: float
    bytes: int
    requests: int
    said: str

    def cell(self) -> str:
        return f"{self.bytes / 1e3:.0f} kB, {self.requests} req, {self.seconds * 1000:.0f} ms"


def _median_read(server: MediaServer, path: str, kind: str, repeat: int) -> Read:
    times, header, before = [], None, len(server.requests)
    for _ in range(repeat):
        header = read_header(server.url(path), kind, LIMITS)
        times.append(header.read_s)
    assert header is not None
    said = f"{header.duration_s:g} s" if header.duration_s else f"({header.reason})"
    requests = (len(server.requests) - before) // repeat
    return Read(statistics.median(times), header.bytes_read, requests, said)


def over_link(read_bytes: int, requests: int) -> float:
    """Seconds over ``LINK``: a round trip per request plus the bytes at the link's rate
    (computed from the measured bytes and requests, not measured)."""
    rtt_s, mbit_s = LINK
    return requests * rtt_s + read_bytes * 8 / (mbit_s * 1e6)


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
            "| source | size | header read (ranges) | (no ranges) | says (ranges / none) "
            "| download whole | over 50 Mbit/s, 20 ms: read / whole |"
        )
        print("|---|---|---|---|---|---|---|")
        with MediaServer(root) as ranged, MediaServer(root, ranges=False) as plain:
            for name, (path, kind, size) in sources.items():
                read = _median_read(ranged, path, kind, args.repeat)
                bare = _median_read(plain, path, kind, args.repeat)
                before = len(ranged.requests)
                whole_s = _median_download(ranged, path, kind, root, args.repeat)
                whole_requests = (len(ranged.requests) - before) // args.repeat
                link = (over_link(read.bytes, read.requests), over_link(size, whole_requests))
                print(
                    f"| {name} | {size / 1e6:.1f} MB | {read.cell()} | {bare.cell()} "
                    f"| {read.said} / {bare.said} | {size / 1e6:.1f} MB, {whole_requests} req, "
                    f"{whole_s * 1000:.0f} ms | {link[0]:.2f} s / {link[1]:.2f} s |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
