"""The whole process-video flow against a plain decode of the same file, in the same run.

    .venv/bin/python benchmarks/pipeline.py [--seconds 60] [--fresh] [--detector motion]

A synthetic 720p clip with sensor-like noise at about 2 Mbit/s is generated (and cached under
benchmarks/.cache). Then, in this one process and back to back:
  1. plain decode: PyAV decodes every frame, converting none (the floor any pipeline pays);
  2. the flow: `process_video` in-process under a temporary Prefect server, after a warm-up run
     on a tiny clip so that Prefect's cold start is not counted.
The flow runs with ``--detector`` (default ``motion``: the decode-bound pipeline; OCR and YOLO
are measured by benchmarks/detectors.py). It prints both times, their ratio (target for motion:
flow <= 2x decode), the x-realtime of the flow, and
the peak memory the flow added over the process's baseline, for the clip and for a clip half as
long (flat memory means the two are about equal: frames are streamed, never held).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import av

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ves.synthetic import demo_scene, scale_scene, write_video

CACHE = Path(__file__).resolve().parent / ".cache"
PAGE = os.sysconf("SC_PAGE_SIZE")


def clip(seconds: int, fresh: bool) -> Path:
    """A cached 1280x720 30 fps clip of ``seconds`` with noise, about 2 Mbit/s."""
    path = CACHE / f"pipeline-720p-{seconds}s.mp4"
    if fresh or not path.exists():
        CACHE.mkdir(exist_ok=True)
        spec = scale_scene(demo_scene(), width=1280, height=720, duration_s=seconds, fps=30)
        write_video(replace(spec, noise=3.0, bitrate=2_000_000), path)
    return path


def plain_decode(path: Path) -> tuple[float, int]:
    started = time.perf_counter()
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        frames = sum(1 for _ in container.decode(stream))
    return time.perf_counter() - started, frames


def rss() -> int:
    with open("/proc/self/statm") as statm:  # noqa: PTH123
        return int(statm.read().split()[1]) * PAGE


class PeakMemory:
    """Samples this process's resident memory every 20 ms while the block runs."""

    def __enter__(self) -> PeakMemory:
        self.baseline = self.peak = rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def added_mib(self) -> float:
        return (self.peak - self.baseline) / 2**20


def run_flow(
    data_dir: Path, path: Path, options: dict[str, Any] | None = None
) -> tuple[float, dict[str, Any], Path]:
    """Process ``path`` with the flow (execute ``options``); returns its wall time, its
    cost.json and its published folder."""
    from flows.process_video import ProcessVideoParams, process_video
    from storage.catalog import Catalog
    from storage.runs import RunStore
    from storage.tenants import TenantStore
    from storage.videos import NewVideo, VideoStore

    catalog = Catalog.open(data_dir / "catalog.sqlite3")
    tenants = TenantStore(catalog)
    tenant = tenants.find_tenant("bench") or tenants.create_tenant("bench")
    videos = VideoStore(catalog)
    video = videos.create(NewVideo(tenant.tenant_id, path.name, "upload", None, {"filename": "x"}))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    videos.complete_upload(
        tenant.tenant_id, video.video_id, path=str(path), sha256=digest, size=path.stat().st_size
    )
    run = RunStore(catalog).create(tenant.tenant_id, video.video_id, options or {})
    started = time.perf_counter()
    published = process_video(ProcessVideoParams(run_id=run.run_id))
    elapsed = time.perf_counter() - started
    assert RunStore(catalog).get(run.run_id).state == "succeeded"
    cost: dict[str, Any] = json.loads((data_dir / published / "cost.json").read_text())
    return elapsed, cost, data_dir / published


def child(path: Path, tiny: Path, options: dict[str, Any]) -> None:
    """One measurement in a fresh process: warm up Prefect, then run the flow on ``path``."""
    from prefect.testing.utilities import prefect_test_harness

    with tempfile.TemporaryDirectory() as tmp, prefect_test_harness(server_startup_timeout=120):
        os.environ["VES_DATA_DIR"] = tmp
        run_flow(Path(tmp), tiny, options)  # the first flow in a process pays the start-ups
        with PeakMemory() as memory:
            flow_s, cost, _ = run_flow(Path(tmp), path, options)
    print(json.dumps({"flow_s": flow_s, "cost": cost, "added_mib": memory.added_mib}))


def measure_in_child(
    path: Path,
    tiny: Path,
    options: dict[str, Any] | None = None,
    models_dir: Path | None = None,
) -> dict[str, Any]:
    """Run the flow on ``path`` in a fresh process; its wall time, cost.json and peak memory."""
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
    if models_dir is not None:
        env["VES_MODELS_DIR"] = str(models_dir)
    chosen = json.dumps(options or {"detector": "motion"})
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(path), str(tiny), chosen],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--fresh", action="store_true", help="regenerate the clips")
    parser.add_argument("--detector", default="motion", help="detector mode of the flow")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), json.loads(args.child[2]))
        return
    long_clip, short_clip, tiny = (
        clip(args.seconds, args.fresh),
        clip(args.seconds // 2, args.fresh),
        clip(2, args.fresh),
    )
    decode_s, frames = plain_decode(long_clip)
    options = {"detector": args.detector}
    long_run = measure_in_child(long_clip, tiny, options)
    short_run = measure_in_child(short_clip, tiny, options)
    decode_s = min(decode_s, plain_decode(long_clip)[0])  # the quieter of two baselines
    report(args.seconds, long_clip, frames, decode_s, long_run, short_run)


def report(
    seconds: int,
    path: Path,
    frames: int,
    decode_s: float,
    long_run: dict[str, Any],
    short_run: dict[str, Any],
) -> None:
    flow_s = long_run["flow_s"]
    mbit = path.stat().st_size * 8 / seconds / 1e6
    fps, ratio = frames / decode_s, flow_s / decode_s
    print(f"clip: 1280x720 30 fps, {seconds} s, {mbit:.2f} Mbit/s, {frames} frames")
    print(f"plain decode (all frames, no conversion): {decode_s:6.2f} s  ({fps:.0f} fps)")
    mode = long_run["cost"]["detector_mode"]
    print(f"process-video flow ({mode}, publish):{' ' * max(0, 13 - len(mode))}{flow_s:6.2f} s")
    print(f"ratio flow / plain decode:                {ratio:6.2f}  (target <= 2.00)")
    print(f"flow speed:                               {seconds / flow_s:6.1f} x realtime")
    stages = ", ".join(f"{k} {v:.2f}" for k, v in long_run["cost"]["stages"].items())
    print(f"stages (s): {stages}")
    grow = long_run["added_mib"] / max(short_run["added_mib"], 1.0)
    print(
        f"peak memory added by the flow: {long_run['added_mib']:.0f} MiB for {seconds} s, "
        f"{short_run['added_mib']:.0f} MiB for {seconds // 2} s (ratio {grow:.2f}; flat is ~1)"
    )


if __name__ == "__main__":
    main()
