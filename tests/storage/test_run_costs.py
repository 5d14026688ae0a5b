"""Run costs in the catalog, on both engines: kept once per run, read back newest first."""

from __future__ import annotations

from storage.catalog.database import Catalog
from storage.catalog.runs.costs import CostSample, RunCostStore
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore


def _sample(catalog: Catalog, recorded_at: str, video_id: str | None = None) -> CostSample:
    tenant = TenantStore(catalog).find_tenant("acme") or TenantStore(catalog).create_tenant("acme")
    if video_id is None:
        video = NewVideo(tenant.tenant_id, "v", "url", "https://example.com/v.mp4", None)
        video_id = VideoStore(catalog).create(video).video_id
    run = RunStore(catalog).create(tenant.tenant_id, video_id, {})
    return CostSample(
        detector_mode="motion",
        sample_fps=5.0,
        source_fps=25.0,
        width=1280,
        height=720,
        duration_s=60.0,
        processed_s=60.0,
        frames_decoded=1500,
        frames_analysed=300,
        stages={"decode": 0.1, "sample": 2.5, "detect": 1.25},
        wall_s=4.5,
        start_s=1.0,
        run_id=run.run_id,
        tenant_id=tenant.tenant_id,
        video_id=video_id,
        recorded_at=recorded_at,
    )


def _finish(catalog: Catalog, sample: CostSample) -> None:
    runs = RunStore(catalog)
    assert runs.try_start(sample.run_id, 10) == "started"
    assert runs.succeed(sample.run_id, "/x", sample.processed_s, 0)


def test_a_sample_is_kept_once_and_read_back_as_written(catalog: Catalog) -> None:
    store = RunCostStore(catalog)
    sample = _sample(catalog, "2026-11-25T10:00:00.000Z")
    store.record(sample)
    store.record(sample)  # a retried flow records its run once
    assert store.newest(10) == [sample]
    assert store.newest(10)[0].compute_s == 3.85


def test_newest_first_and_the_last_of_a_video(catalog: Catalog) -> None:
    store = RunCostStore(catalog)
    first = _sample(catalog, "2026-11-25T10:00:00.000Z")
    store.record(first)
    _finish(catalog, first)
    again = _sample(catalog, "2026-11-25T11:00:00.000Z", video_id=first.video_id)
    other = _sample(catalog, "2026-11-25T12:00:00.000Z")
    store.record(again)
    store.record(other)
    assert [s.run_id for s in store.newest(10)] == [other.run_id, again.run_id, first.run_id]
    assert [s.run_id for s in store.newest(1)] == [other.run_id]
    assert store.last_of_video(first.tenant_id, first.video_id) == again
    assert store.last_of_video("ten_other", first.video_id) is None
