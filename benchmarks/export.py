"""Evidence exports: seconds and bundle bytes, against the plain decode of the same windows.

    .venv/bin/python benchmarks/export.py [--skip-long]

Three exports, each of a run really processed by the ``process-video`` flow in this process
(under a temporary Prefect server; its time is not counted):

  a. the whole evidence of the 60 s 720p lobby (the demo scene at 720p, B-frames, noisy at
     ~2 Mbit/s: ``benchmarks/_clips.py``, the clip of issue 31), detector ``motion+ocr``;
  b. the whole evidence of a 10-minute 1080p video (the same scene, ten times), ``motion``;
  c. the 20-24 s range of (a)'s run with text redaction.

An export is ``tasks.export.steps.write_export``: every step the ``export-evidence`` flow runs as
its tasks (choose spans, cut clips, redact, sign seam, bundle), without the flow's fetch of the
source and its publishing. The baseline is PyAV decoding every frame of the same merged windows
(from the keyframe before each), in the same run. Source bytes are those of the source's packets
shown in the windows.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._clips import ClipSpec, make_clip
from benchmarks._runs import process_upload

LOBBY = ClipSpec(60, 720)
LONG = ClipSpec(600, 1080)


@dataclass(frozen=True)
class Measured:
    label: str
    windows: int
    video_s: float
    decode_s: float
    export_s: float
    bundle_bytes: int
    source_bytes: int

    def row(self) -> str:
        return (
            f"| {self.label} | {self.windows} | {self.video_s:.1f} | {self.decode_s:.2f} |"
            f" {self.export_s:.2f} | {self.export_s / self.decode_s:.2f}x |"
            f" {self.bundle_bytes / 2**20:.1f} | {self.source_bytes / 2**20:.1f} |"
            f" {self.bundle_bytes / self.source_bytes:.2f} |"
        )


def decode_windows(path: Path, windows: list[tuple[float, float]]) -> float:
    """Seconds to decode every frame of each window with PyAV (the baseline)."""
    started = time.perf_counter()
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for start, end in windows:
            container.seek(int(start * av.time_base), backward=True)
            for frame in container.decode(stream):
                if frame.time is not None and frame.time > end:
                    break
    return time.perf_counter() - started


def source_bytes(path: Path, windows: list[tuple[float, float]]) -> int:
    """The bytes of the source's packets shown in the windows."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        base = float(stream.time_base or 0)
        return sum(
            packet.size
            for packet in container.demux(stream)
            if packet.pts is not None
            and any(a - 1e-6 <= packet.pts * base <= b + 1e-6 for a, b in windows)
        )


def measure(label: str, data: Path, path: Path, run: object, **asked: object) -> Measured:
    from storage.artifacts.blobs import open_blob_store
    from storage.artifacts.reads import ArtifactReader
    from tasks.export.steps import ExportRequest, choose_spans, write_export
    from ves.settings import Settings
    from ves.signing import SigningKey

    store = open_blob_store(Settings())
    reader = ArtifactReader(store)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    request = ExportRequest("exp_bench", run, path, digest, {}, **asked)  # type: ignore[arg-type]
    windows = [(w.start_s, w.end_s) for w in choose_spans(request, reader).windows]
    decode_s = decode_windows(path, windows)
    work = Path(tempfile.mkdtemp(dir=data))
    started = time.perf_counter()
    sealed = write_export(request, reader, store, SigningKey.generate(), work / "b.zip", work)
    export_s = time.perf_counter() - started
    seconds = sum(b - a for a, b in windows)
    shown = source_bytes(path, windows)
    return Measured(label, len(windows), seconds, decode_s, export_s, sealed.bytes, shown)


def _rgb_frames(path: Path, window: tuple[float, float]) -> Iterator[Any]:
    """The frames shown in ``window`` as RGB arrays, one at a time."""
    with av.open(str(path)) as container:
        container.seek(int(window[0] * av.time_base), backward=True)
        for frame in container.decode(video=0):
            if frame.time is not None and frame.time > window[1] + 1e-6:
                return
            if frame.time is not None and frame.time >= window[0] - 1e-6:
                yield frame.to_ndarray(format="rgb24")


def crf_table(path: Path, window: tuple[float, float], folder: Path) -> list[str]:
    """libx264 ``veryfast`` at several crf on the window (no redaction): seconds, bytes against
    the source's, PSNR against the source's frames (the choice of ``cut.CRF``)."""
    import numpy as np

    from tasks.export import cut

    rows, shown = [], source_bytes(path, [window])
    for crf in (18, 23, 28):
        cut.CRF = crf
        started = time.perf_counter()
        clip = cut.cut_clip(path, window, folder / f"crf{crf}.mp4")
        seconds = time.perf_counter() - started
        errors = [
            np.mean((rgb.astype(np.float64) - truth) ** 2)
            for rgb, truth in zip(
                _rgb_frames(clip.path, (0.0, 1e9)), _rgb_frames(path, window), strict=True
            )
        ]
        psnr = 10 * np.log10(255.0**2 / max(float(np.mean(errors)), 1e-9))
        size = clip.path.stat().st_size
        rows.append(f"| {crf} | {seconds:.2f} | {size / shown:.2f} | {psnr:.1f} |")
    cut.CRF = 23
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-long", action="store_true", help="leave out the 10 min video")
    args = parser.parse_args()
    from prefect.testing.utilities import prefect_test_harness

    from tasks.export.select import Selection

    lobby = make_clip(LOBBY)
    long = None if args.skip_long else make_clip(LONG)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, prefect_test_harness(server_startup_timeout=180):
        data = Path(tmp)
        os.environ["VES_DATA_DIR"] = tmp
        flow_s, run, _ = process_upload(data, lobby, {"detector": "motion+ocr"})
        print(f"lobby processed in {flow_s:.1f} s", file=sys.stderr)
        rows.append(measure("a. lobby 60 s 720p, whole evidence", data, lobby, run))
        text = frozenset({"text"})
        selection = Selection(start_s=20.0, end_s=24.0)
        rows.append(
            measure(
                "c. lobby 20-24 s, text redacted",
                data,
                lobby,
                run,
                selection=selection,
                redact=text,
            )
        )
        if long is not None:
            flow_s, run, _ = process_upload(data, long, {"detector": "motion"})
            print(f"10 min 1080p processed in {flow_s:.1f} s", file=sys.stderr)
            rows.insert(1, measure("b. 10 min 1080p, whole evidence", data, long, run))
    print(
        "| export | clips | video (s) | plain decode (s) | export (s) | ratio | bundle (MiB) |"
        " source in windows (MiB) | bundle / source |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(row.row())
    print("\n| crf (veryfast) | re-encode 20-24 s (s) | bytes / source's | PSNR (dB) |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        print("\n".join(crf_table(lobby, (20.0, 24.0), Path(tmp))))


if __name__ == "__main__":
    main()
