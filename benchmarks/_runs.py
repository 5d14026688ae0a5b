"""What the benchmarks measure a flow run with: the flow on an upload (``run_flow``,
``process_upload``), this process's CPU time and peak resident memory, and the rows a run's
scoring reads. Shared by ``benchmarks/pipeline.py`` and the benchmarks built on it."""

from __future__ import annotations

import json
import os
import resource
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from storage.catalog.records import Run

PAGE = os.sysconf("SC_PAGE_SIZE")


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
    elapsed, _, published = process_upload(data_dir, path, options)
    cost: dict[str, Any] = json.loads((data_dir / published / "cost.json").read_text())
    return elapsed, cost, data_dir / published


def process_upload(
    data_dir: Path, path: Path, options: dict[str, Any] | None = None
) -> tuple[float, Run, str]:
    """Register ``path`` as an upload and process it with the flow; its wall time, the
    succeeded run and its published folder (relative to ``data_dir``)."""
    from flows.process_video import ProcessVideoParams, process_video
    from storage.artifacts.layout import sha256_file
    from storage.catalog.database import Catalog
    from storage.catalog.runs.store import RunStore
    from storage.catalog.tenants import TenantStore
    from storage.catalog.videos import NewVideo, VideoStore

    catalog = Catalog.open(data_dir / "catalog.sqlite3")
    tenants = TenantStore(catalog)
    tenant = tenants.find_tenant("bench") or tenants.create_tenant("bench")
    videos = VideoStore(catalog)
    video = videos.create(NewVideo(tenant.tenant_id, path.name, "upload", None, {"filename": "x"}))
    digest = sha256_file(path)  # in chunks: reading a 10 min clip whole was 286 MiB of "peak"
    videos.complete_upload(
        tenant.tenant_id, video.video_id, path=str(path), sha256=digest, size=path.stat().st_size
    )
    run = RunStore(catalog).create(tenant.tenant_id, video.video_id, options or {})
    started = time.perf_counter()
    published = process_video(ProcessVideoParams(run_id=run.run_id))
    elapsed = time.perf_counter() - started
    done = RunStore(catalog).get(run.run_id)
    assert done.state == "succeeded"
    return elapsed, done, published


def cpu_seconds() -> float:
    """CPU time this process has used so far, every thread's, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def scored_rows(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """What a run's scoring reads: its detections (time, box, class) and sampled frames."""
    from storage.artifacts.layout import read_rows

    detections = [
        {"t_s": d["t_s"], "bbox": list(d["bbox"]), "class": d["class"]}
        for d in read_rows(run_dir, "detections")
    ]
    frames = [
        {"t_s": f["t_s"], "scene_score": f["scene_score"], "held": f.get("held")}
        for f in read_rows(run_dir, "frames")
    ]
    return {"detections": detections, "frames": frames}
