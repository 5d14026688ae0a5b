"""Copy a video's packets into another container or layout, without re-encoding: an MP4 with
its index first (``faststart``), an MKV, an MPEG-TS, or the same clip looped to a longer one."""

from __future__ import annotations

from pathlib import Path

import av


def remux(source: Path, dest: Path, *, faststart: bool = False, loops: int = 1) -> Path:
    """Write ``source``'s video stream into ``dest`` (its suffix picks the container), ``loops``
    times back to back (timestamps shifted, so a 60 s clip looped 10 times lasts 600 s).
    ``faststart`` moves an MP4's index (``moov``) before its media data."""
    options = {"movflags": "faststart"} if faststart else {}
    with av.open(str(dest), "w", options=options) as out, av.open(str(source)) as first:
        stream = out.add_stream_from_template(first.streams.video[0])
        offset = 0
        for _ in range(loops):
            offset = _copy(source, stream, out, offset)
    return dest


def _copy(
    source: Path, stream: av.VideoStream, out: av.container.OutputContainer, offset: int
) -> int:
    """Mux one pass of ``source`` shifted by ``offset`` (in the source's time base); the next
    pass's offset."""
    end = offset
    with av.open(str(source)) as src:
        video = src.streams.video[0]
        step = int(1 / (float(video.average_rate or 25) * float(video.time_base or 1)))
        for packet in src.demux(video):
            if packet.dts is None:
                continue
            packet.pts = None if packet.pts is None else packet.pts + offset
            packet.dts += offset
            end = max(end, (packet.pts or packet.dts) + step)
            packet.stream = stream
            out.mux(packet)
    return end
