"""Live HLS window by window: what each window costs, and how the publish grows with the session.

    .venv/bin/python benchmarks/live.py [--minutes 2] [--window-s 10] [--speed 8]

A lobby scene stretched to ``--minutes`` (``ves.synthetic.scale_scene``: the same story, slower)
is served live by the test's live HLS server (2 s segments, ``--speed`` times faster than real
time, so the benchmark does not take the stream's length) and executed with ``follow`` and
``window_s``, in the real ``process-video`` flow under a temporary Prefect server, until the
stream's ENDLIST. Per window it prints what the window's run wrote in ``cost.json``: the
session's length so far, the window's own sampling and detection (constant per window) and the
publish (``join``: the join of all windows so far and the later stages over them, which grows
with the session), and the objects published against the scene's truth.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _session(data: Path, url: str, window_s: float) -> list[str]:
    from flows.process_video import ProcessVideoParams, process_video
    from storage.catalog import Catalog
    from storage.live_runs import LiveRunStore
    from storage.runs import RunStore
    from storage.tenants import TenantStore
    from storage.videos import NewVideo, VideoStore

    catalog = Catalog.open(data / "catalog.sqlite3")
    tenant = TenantStore(catalog).create_tenant("bench").tenant_id
    video = VideoStore(catalog).create(NewVideo(tenant, "live", "hls", url))
    options = {"window_s": window_s, "follow": True}
    run = RunStore(catalog).create(tenant, video.video_id, options)
    process_video(ProcessVideoParams(run_id=run.run_id))
    last = RunStore(catalog).active() or []
    assert not last, "a run is left active"
    with catalog.read() as conn:
        newest = conn.exec_driver_sql(
            "SELECT run_id FROM runs WHERE video_id = ? ORDER BY run_id DESC LIMIT 1",
            (video.video_id,),
        ).scalar()
    return LiveRunStore(catalog).chain(str(newest))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--window-s", type=float, default=10.0)
    parser.add_argument("--speed", type=float, default=8.0)
    args = parser.parse_args()

    from prefect.testing.utilities import prefect_test_harness

    from tests.fixtures.live_hls import LiveHls
    from ves.synthetic import ground_truth, lobby_scene, scale_scene

    scene = scale_scene(lobby_scene(), width=320, height=240, duration_s=args.minutes * 60)
    truth = ground_truth(scene)
    with tempfile.TemporaryDirectory() as tmp, prefect_test_harness(server_startup_timeout=120):
        os.environ.update({"VES_DATA_DIR": tmp, "VES_ALLOW_PRIVATE_SOURCES": "true"})
        os.environ["VES_PLANS"] = json.dumps({"sandbox": {"max_video_s": 3600}})
        live = LiveHls(
            scene,
            Path(tmp) / "hls",
            history=3,
            keep=30,
            interval_s=2.0 / args.speed,
            end_when_done=True,
        ).start()
        seen: dict[str, tuple[dict[str, object], int]] = {}
        done = threading.Event()
        watcher = threading.Thread(target=_watch, args=(Path(tmp), seen, done), daemon=True)
        watcher.start()
        started = time.perf_counter()
        try:
            chain = _session(Path(tmp), live.url, args.window_s)
        finally:
            live.stop()
            done.set()
            watcher.join()
        wall = time.perf_counter() - started
        _report(chain, seen, len(truth.objects), wall, scene.duration_s)


def _watch(data: Path, seen: dict[str, tuple[dict[str, Any], int]], done: threading.Event) -> None:
    """Read each window's cost.json and objects as it is published (superseded windows expire)."""
    import pyarrow.parquet as pq

    while True:
        last = done.is_set()
        for cost_file in data.rglob("cost.json"):
            run_id = cost_file.parent.name
            if run_id in seen:
                continue
            try:
                cost = json.loads(cost_file.read_text())
                objects = pq.read_table(cost_file.parent / "objects.parquet").to_pylist()
            except (OSError, ValueError):
                continue  # expired meanwhile
            seen[run_id] = (cost, sum(1 for o in objects if o["class"] != "text"))
        if last:
            return
        time.sleep(0.1)


def _report(
    chain: list[str],
    seen: dict[str, tuple[dict[str, Any], int]],
    truth_objects: int,
    wall: float,
    length: float,
) -> None:
    print(f"{len(chain)} windows over {length:.0f} s of stream in {wall:.1f} s wall")
    print("window | session s | sample s | detect s | publish s | objects")
    print("-------|-----------|----------|----------|-----------|--------")
    for number, run_id in enumerate(chain, 1):
        if run_id not in seen:
            print(f"{number:>6} | (not seen before it expired)")
            continue
        cost, movers = seen[run_id]
        stages = cost["stages"]
        print(
            f"{number:>6} | {cost['duration_s']:>9.1f} | {stages.get('sample', 0):>8.2f} | "
            f"{stages.get('detect', 0):>8.2f} | {stages.get('join', 0):>9.2f} | {movers}"
        )
    print(f"truth: {truth_objects} objects in the scene")


if __name__ == "__main__":
    main()
