"""Live HLS through the real ``process-video`` flow, against a local live server over HTTP.

The lobby scene (known truth) is served live: a few segments of history, then one more 2 s
segment every 2 s. Session time 0 is the live edge: with four segments listed, segment 1 (scene
time 2 s); with three, segment 0, which puts the window borders of 4 s windows at scene times 4,
8, 12 and 16 s, the borders ``tests/flows/test_chunks.py`` splits the lobby at.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.catalog.database import Catalog
from storage.catalog.records import Run
from storage.catalog.runs.live import LiveRunStore
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.usage import month_of, used
from storage.catalog.videos import NewVideo, VideoStore
from synthetic import GroundTruth, ground_truth, lobby_scene
from testkit.live_hls import LiveHls
from tests.ask.bank import colour_of
from tests.fixtures.settings_env import export_settings
from ves.clock import now_rfc3339, to_rfc3339
from ves.settings import Settings

pytestmark = pytest.mark.slow

STARTED = datetime(2026, 11, 20, 22, 0, tzinfo=UTC)  # segment 0's program date-time


QueueLive = Callable[..., Run]


@pytest.fixture
def queue_live(settings: Settings, catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> QueueLive:
    export_settings(monkeypatch, settings)
    monkeypatch.setenv("VES_ALLOW_PRIVATE_SOURCES", "true")
    tenants = TenantStore(catalog)
    tenant = tenants.find_tenant("acme") or tenants.create_tenant("acme")

    def queue(url: str, **options: object) -> Run:
        video = VideoStore(catalog).create(NewVideo(tenant.tenant_id, "live", "hls", url, {}))
        return RunStore(catalog).create(tenant.tenant_id, video.video_id, dict(options))

    return queue


@pytest.fixture
def stream(tmp_path: Path) -> Iterator[LiveHls]:
    live = LiveHls(
        lobby_scene(), tmp_path / "hls", history=4, keep=6, end_when_done=True, started_at=STARTED
    )
    live.start()
    yield live
    live.stop()


def _chain(catalog: Catalog, run_id: str) -> list[Run]:
    runs, found = RunStore(catalog), [RunStore(catalog).get(run_id)]
    with catalog.read() as conn:
        while True:
            nxt = conn.execute(
                text("SELECT run_id FROM runs WHERE follows_run_id = :run_id"),
                {"run_id": found[-1].run_id},
            ).scalar()
            if nxt is None:
                return found
            found.append(runs.get(nxt))


def _objects(reader: ArtifactReader, run: Run) -> list[dict[str, Any]]:
    rows = reader.rows(Path(str(run.artifacts_path)), "objects", order_by="first_seen_s")
    return [o for o in rows if o["class"] != "text"]


def _present(truth: GroundTruth, start: float, end: float) -> list[str]:
    """Objects of the truth seen within scene time ``[start, end)``."""
    return [o.name for o in truth.objects if o.first_seen_s < end and o.last_seen_s >= start]


def _in_thread(run_id: str) -> threading.Thread:
    thread = threading.Thread(
        target=lambda: process_video(ProcessVideoParams(run_id=run_id)), daemon=True
    )
    thread.start()
    return thread


def _wait_for(check: Callable[[], bool], seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the live run did not get there"
        time.sleep(0.2)


def test_one_window_from_the_live_edge(
    queue_live: QueueLive, stream: LiveHls, catalog: Catalog, settings: Settings
) -> None:
    run = queue_live(stream.url, window_s=4)
    process_video(ProcessVideoParams(run_id=run.run_id))
    chain = _chain(catalog, run.run_id)
    assert [r.state for r in chain] == ["succeeded"]
    reader = ArtifactReader(open_blob_store(settings))
    cost = reader.document(Path(str(chain[0].artifacts_path)), "cost.json")
    assert cost["processed_s"] == pytest.approx(4.0, abs=0.05)
    times = [r["t_s"] for r in reader.rows(Path(str(chain[0].artifacts_path)), "frames")]
    assert 0.0 <= min(times) < 0.5 and 3.0 < max(times) < 4.0
    with catalog.read() as conn:
        spent = used(conn, chain[0].tenant_id, month_of(now_rfc3339()), "processed_s")
    assert spent == pytest.approx(4.0, abs=0.05)
    # The session's time 0 is the live edge, segment 1: its program date-time is the clock's.
    video = VideoStore(catalog).get(run.tenant_id, run.video_id)
    assert video.recorded_at == to_rfc3339(stream.moment_of(1))


@pytest.mark.parametrize(("history", "gated"), [(3, False), (4, False), (4, True)])
def test_follow_publishes_window_after_window_until_the_stream_ends(
    history: int,
    gated: bool,
    queue_live: QueueLive,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    catalog: Catalog,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every window's truth holds, with the activity gate (``gated``: each window's file is
    mapped, its still stretches held) or without."""
    monkeypatch.setenv("VES_SKIP_STILL", str(gated).lower())
    truth = ground_truth(lobby_scene())
    # Three segments listed: the edge is segment 0, window borders at scene 4, 8, 12, 16 s; four:
    # segment 1, borders at 6, 10, 14, 18 s (the loiterer's dwell, 3.5-9.5 s, spans two).
    edge = history - 3
    hls = tmp_path / "hls"
    live = LiveHls(
        lobby_scene(), hls, history=history, keep=6, end_when_done=True, started_at=STARTED
    )
    stream = live.start()
    request.addfinalizer(live.stop)
    run = queue_live(stream.url, window_s=4, follow=True)
    thread = _in_thread(run.run_id)
    reader = ArtifactReader(open_blob_store(settings))
    _wait_for(lambda: _chain(catalog, run.run_id)[0].state == "succeeded")
    first = _chain(catalog, run.run_id)[0]
    assert len(_chain(catalog, run.run_id)) == 2  # the next window's run started at once
    assert _chain(catalog, run.run_id)[1].state == "running"
    early = _objects(reader, first)
    early_timeline = reader.rows(Path(str(first.artifacts_path)), "timeline")
    thread.join(timeout=180)
    chain = _chain(catalog, run.run_id)
    assert all(r.state == "succeeded" for r in chain), [r.error_message for r in chain]
    assert len(chain) >= 4
    last = chain[-1]
    final = _objects(reader, last)
    # Window 1 had the walker and the loiterer; the whole stream all three.
    start = 2.0 * edge  # the scene time of session time 0
    assert len(early) == len(_present(truth, start, start + 4.0))
    seen = [(o["first_seen_s"], o["last_seen_s"]) for o in final]
    assert len(final) == len(_present(truth, start, truth.duration_s)) > len(early), seen
    assert len(reader.rows(Path(str(last.artifacts_path)), "timeline")) > len(early_timeline)
    # The walker (0.5-8.5 s) crosses the border at session time 4 s: one object, one id.
    walker = next(o for o in truth.objects if o.name == "walker")
    assert walker.first_seen_s < start + 4.0 < walker.last_seen_s
    assert [o for o in final if o["first_seen_s"] < 3.5 and o["last_seen_s"] > 4.5]
    _assert_true_colours(final, truth, start)
    # Every second is billed once: the windows' seconds add up to the session's.
    billed = sum(_processed(catalog, r) for r in chain)
    assert billed == pytest.approx(sum(stream.durations[edge:]), abs=0.1)
    assert not RunStore(catalog).active()
    # The session's clock is its first window's first segment's, whatever windows followed.
    video = VideoStore(catalog).get(last.tenant_id, last.video_id)
    assert video.recorded_at == to_rfc3339(stream.moment_of(edge))
    # Windows superseded twice over are expired (each newer window holds all they held).
    assert [r.expired_at is not None for r in chain] == [True] * (len(chain) - 2) + [False] * 2
    store = open_blob_store(settings)
    assert not any(store.list(str(r.artifacts_path)) for r in chain[:-2])
    with catalog.read() as conn:
        kept = used(conn, last.tenant_id, "all", "storage_bytes")
    assert kept == sum(int(r.artifacts_bytes or 0) for r in chain[-2:])
    cost = reader.document(Path(str(last.artifacts_path)), "cost.json")
    assert cost["activity_gate"]["used"] is gated
    frames = reader.rows(Path(str(last.artifacts_path)), "frames")
    assert cost["frames"]["held"] == sum(1 for f in frames if f["held"])


def _assert_true_colours(objects: list[dict[str, Any]], truth: GroundTruth, start: float) -> None:
    """Every object of the session has its scene colour, measured in the windows' own frames
    (matched by when it left, on the session's clock, which starts at scene time ``start``)."""
    for found in objects:
        (expected,) = [
            o for o in truth.objects if abs(found["last_seen_s"] + start - o.last_seen_s) <= 1.0
        ]
        assert found["colour"] == colour_of(expected), (expected.name, found["colour"])
        assert found["colour_confidence"] > 0.3, (expected.name, found["colour_confidence"])


def _processed(catalog: Catalog, run: Run) -> float:
    with catalog.read() as conn:
        value = conn.execute(
            text("SELECT processed_s FROM runs WHERE run_id = :run_id"), {"run_id": run.run_id}
        ).scalar()
    return float(value or 0.0)


def test_a_stop_ends_the_session_after_the_current_window(
    queue_live: QueueLive, tmp_path: Path, catalog: Catalog
) -> None:
    live = LiveHls(lobby_scene(), tmp_path / "endless", history=4, keep=6).start()
    try:
        run = queue_live(live.url, window_s=4, follow=True)
        thread = _in_thread(run.run_id)
        _wait_for(lambda: _chain(catalog, run.run_id)[0].state == "succeeded")
        stopped = LiveRunStore(catalog).request_stop(run.tenant_id, run.video_id, run.run_id)
        assert stopped.run_id != run.run_id  # the first window's run names its session
        thread.join(timeout=120)
    finally:
        live.stop()
    chain = _chain(catalog, run.run_id)
    assert [r.state for r in chain] == ["succeeded"] * len(chain)
    assert chain[-1].run_id == stopped.run_id
    assert not RunStore(catalog).active()
