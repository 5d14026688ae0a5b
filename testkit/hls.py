"""Write HLS VOD playlists from synthetic scenes or existing videos."""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path

import av

from synthetic import SceneSpec, lobby_scene, write_video


def _remux(source: Path, playlist: Path, segment_s: float) -> Path:
    """Copy the first video stream's packets into the ``hls`` muxer."""
    options = {
        "hls_time": f"{segment_s:g}",
        "hls_playlist_type": "vod",
        "hls_segment_filename": str(playlist.parent / "segment_%03d.ts"),
    }
    with av.open(str(source)) as src, av.open(str(playlist), "w", "hls", options) as out:
        in_stream = src.streams.video[0]
        out_stream = out.add_stream_from_template(in_stream)
        for packet in src.demux(in_stream):
            if packet.dts is None:  # the demuxer's end-of-stream flush packet
                continue
            packet.stream = out_stream
            out.mux(packet)
    return playlist


def program_date_time(moment: datetime) -> str:
    """An ``#EXT-X-PROGRAM-DATE-TIME`` tag naming ``moment`` (milliseconds, its own offset)."""
    return f"#EXT-X-PROGRAM-DATE-TIME:{moment.isoformat(timespec='milliseconds')}"


def write_hls(
    source: SceneSpec | Path,
    out_dir: Path,
    segment_s: float = 2.0,
    *,
    started_at: datetime | None = None,
) -> Path:
    """Write ``index.m3u8`` plus ``segment_NNN.ts`` into ``out_dir``; return the playlist.

    A ``SceneSpec`` is first encoded to MPEG-TS (no B-frames, so timestamps
    start at 0); a path is remuxed as is. Segments split on keyframes, so
    each lasts ``segment_s`` rounded up to the source GOP (2 s for scenes).
    With ``started_at``, the first segment carries it as its ``#EXT-X-PROGRAM-DATE-TIME``
    (the others' moments follow by their durations, as a reader extrapolates them).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    playlist = out_dir / "index.m3u8"
    if not isinstance(source, SceneSpec):
        _remux(Path(source), playlist, segment_s)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            video = Path(tmp) / "source.ts"
            write_video(source, video)
            _remux(video, playlist, segment_s)
    if started_at is not None:
        text = playlist.read_text()
        head, _, rest = text.partition("#EXTINF:")
        playlist.write_text(f"{head}{program_date_time(started_at)}\n#EXTINF:{rest}")
    return playlist


def write_dated_hls(root: Path, started_at: datetime) -> Path:
    """The same 6 s scene (the lobby's first object; three 2 s segments) twice into ``root``:
    ``dated/`` with its first segment at ``started_at``, ``plain/`` without any
    ``#EXT-X-PROGRAM-DATE-TIME``. Returns ``root``."""
    spec = SceneSpec(duration_s=6.0, objects=lobby_scene().objects[:1])
    write_hls(spec, root / "dated", started_at=started_at)
    write_hls(spec, root / "plain")
    return root
