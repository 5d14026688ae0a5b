"""Live HLS window by window: what each window costs, and how the publish grows with the session.

    .venv/bin/python benchmarks/live.py [--minutes 2] [--window-s 10] [--speed 8]

A lobby scene stretched to ``--minutes`` (``synthetic.scale_scene``: the same story, slower)
is served live by the test's live HLS server (2 s segments, ``--speed`` times faster than real
time, so the benchmark does not take the stream's length) and executed with ``follow`` and
``window_s``, in the real ``process-video`` flow under a temporary Prefect server, until the
stream's ENDLIST. Per window it prints what the window's run wrote in ``cost.json``: the
session's length so far, the window's own sampling and detection (constant per window) and the
publish (``join``: the join of all windows so far and the later stages over them, which grows
with the session), and the objects published, against the scene's truth and against the same
segments processed as one recording (the VOD playlist, one pass).
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


def _one_piece(data: Path, url: str) -> int:
    """Objects (not texts) published by the same stream processed as one recording (VOD)."""
    import pyarrow.parquet as pq

    from flows.process_video import ProcessVideoParams, process_video
    from storage.catalog.database import Catalog
    from storage.catalog.runs.store import RunStore
    from storage.catalog.tenants import TenantStore
    from storage.catalog.videos import NewVideo, VideoStore

    catalog = Catalog.open(data / "catalog.sqlite3")
    tenant = TenantStore(catalog).create_tenant("bench-vod").tenant_id
    video = VideoStore(catalog).create(NewVideo(tenant, "vod", "hls", url))
    run = RunStore(catalog).create(tenant, video.video_id, {})
    key = process_video(ProcessVideoParams(run_id=run.run_id))
    objects = pq.read_table(data / key / "objects.parquet").to_pylist()
    return sum(1 for o in objects if o["class"] != "text")


def _session(data: Path, url: str, window_s: float) -> list[str]:
    from flows.process_video import ProcessVideoParams, process_video
    from storage.catalog.database import Catalog
    from storage.catalog.runs.live import LiveRunStore
    from storage.catalog.runs.store import RunStore
    from storage.catalog.tenants import TenantStore
    from storage.catalog.videos import NewVideo, VideoStore

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

    from synthetic import ground_truth, lobby_scene, scale_scene
    from testkit.live_hls import LiveHls
    from testkit.media_server import MediaServer

    scene = scale_scene(lobby_scene(), width=320, height=240, duration_s=args.minutes * 60)
    truth = ground_truth(scene)
    with tempfile.TemporaryDirectory() as tmp, prefect_test_harness(server_startup_timeout=120):
        os.environ.update({"VES_DATA_DIR": tmp, "VES_ALLOW_PRIVATE_SOURCES": "true"})
        os.environ["VES_PLANS"] = json.dumps({"sandbox": {"max_video_s": 3600}})
        live = LiveHls(
            scene,
            Path(tmp) / "hls",
            history=3,
            keep=10_000,  # the whole history stays listed: a slower reader loses nothing
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
        with MediaServer(live.root) as vod:  # the same segments, index.m3u8 has its ENDLIST
            whole = _one_piece(Path(tmp), vod.url("index.m3u8"))
        print(f"the same stream as one recording (VOD): {whole} objects")


def _watch(data: Path, seen: dict[str, tuple[dict[str, Any], int]], done: threading.Event) -> None:
    """Read each window's cost.json and objects as it is published (superseded windows expire)."""
    import pyarrow.parquet as pq

    while True:
        last = done.is_set()
        try:
            found = list((data / "artifacts").rglob("cost.json"))
        except OSError:  # a work folder went away under the walk
            found = []
        for cost_file in found:
            run_id = cost_file.parent.name.removeprefix("run=")
            if run_id in seen:
                continue
            try:
                cost = json.loads(cost_file.read_text())
                objects = pq.read_table(cost_file.parent / "objects.parquet").to_pylist()
            except (OSError, ValueError):
                continue  # expired meanwhile
            movers = [o for o in objects if o["class"] != "text"]
            spans = [(round(o["first_seen_s"], 1), round(o["last_seen_s"], 1)) for o in movers]
            cost["_objects"] = spans
            seen[run_id] = (cost, len(movers))
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
    final = seen.get(chain[-1])
    if final is not None:
        print("objects of the last window (first and last seen, s):", final[0]["_objects"])
    print(f"truth: {truth_objects} objects in the scene")


if __name__ == "__main__":
    main()
