"""Hard caps on real runs: a video with one object early and one late, processed under
``max_cost`` and ``max_compute_s``; what was processed is published, billed and nothing more."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.catalog.database import Catalog
from storage.catalog.runs.costs import RunCostStore
from storage.catalog.runs.store import RunStore
from storage.catalog.usage import UsageStore, month_of
from synthetic import GroundTruth, MovingObject, SceneSpec, write_video
from tasks.cost.model import Workload, fallback_model
from tests.flows.conftest import QueueRun
from ves.clock import now_rfc3339
from ves.settings import Settings

pytestmark = pytest.mark.slow

PRICE = 0.06  # a minute of video: 0.001 a second
EARLY = MovingObject("early", (210, 40, 40), (24, 44), ((0.5, -15, 150), (6.0, 335, 150)))
LATE = MovingObject(
    "late", (50, 80, 210), (30, 30), ((32.0, 60, 256), (34.0, 60, 120), (38, 345, 120))
)


@pytest.fixture(scope="module")
def two_times(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GroundTruth]:
    """40 s, 320x240 at 10 fps: ``early`` crosses during 0.5-6 s, ``late`` enters at 32 s."""
    path = tmp_path_factory.mktemp("caps") / "two_times.mp4"
    spec = SceneSpec(duration_s=40.0, objects=(EARLY, LATE), noise=2.0)
    return path, write_video(spec, path)


Processed = tuple[ArtifactReader, Path, dict[str, Any], str]


@pytest.fixture
def run_capped(
    queue_upload_run: QueueRun,
    settings: Settings,
    catalog: Catalog,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., Processed]:
    """``run_capped(path, **options)``: a motion run of the file at ``PRICE``, in one pass."""
    monkeypatch.setenv("VES_PRICE_PER_VIDEO_MINUTE", str(PRICE))
    monkeypatch.setenv("VES_CHUNK_S", "0")
    reader = ArtifactReader(open_blob_store(settings))

    def run_it(path: Path, **options: object) -> Processed:
        run = queue_upload_run(path, detector="motion", **options)
        published = Path(process_video(ProcessVideoParams(run_id=run.run_id)))
        finished = RunStore(catalog).get(run.run_id)
        assert finished.state == "succeeded", finished.error_message
        return reader, published, reader.document(published, "cost.json"), run.tenant_id

    return run_it


def _assert_only_the_processed_part(
    reader: ArtifactReader, run_dir: Path, cost: dict[str, Any], truth: GroundTruth
) -> None:
    at_s = cost["truncation"]["at_s"]
    assert cost["truncated"] is True
    assert at_s == cost["processed_s"] < cost["duration_s"] == pytest.approx(truth.duration_s)
    frames = reader.rows(run_dir, "frames")
    assert max(f["t_s"] for f in frames) < at_s
    events = reader.rows(run_dir, "events")
    assert events and all(e["t_s"] < at_s + 1e-6 for e in events)
    objects = [o for o in reader.rows(run_dir, "objects") if o["class"] != "text"]
    assert all(o["first_seen_s"] < at_s for o in objects)
    early = next(o for o in truth.objects if o.name == "early")
    late = next(o for o in truth.objects if o.name == "late")
    assert at_s < late.first_seen_s  # the cap stopped it before the late one came
    assert objects, "the object seen before the cap is in the evidence"
    assert min(o["first_seen_s"] for o in objects) == pytest.approx(early.first_seen_s, abs=1.0)
    spans = reader.rows(run_dir, "evidence")
    assert spans and all(s["start_s"] < at_s for s in spans)


def _billed(catalog: Catalog, tenant_id: str) -> float:
    return UsageStore(catalog).value(tenant_id, month_of(now_rfc3339()), "processed_s")


def test_max_cost_bounds_the_processed_seconds_and_the_bill(
    run_capped: Callable[..., Processed], two_times: tuple[Path, GroundTruth], catalog: Catalog
) -> None:
    path, truth = two_times
    reader, run_dir, cost, tenant = run_capped(path, max_cost=0.012)
    assert cost["truncation"] == {"reason": "max_cost", "at_s": cost["processed_s"], "cap": 0.012}
    assert cost["processed_s"] == pytest.approx(12.0)  # 0.012 / 0.06 minutes
    assert cost["cost"]["amount"] <= 0.012
    assert _billed(catalog, tenant) == pytest.approx(cost["processed_s"])
    _assert_only_the_processed_part(reader, run_dir, cost, truth)


def test_max_compute_s_stops_sampling_publishes_and_bills_what_was_processed(
    run_capped: Callable[..., Processed], two_times: tuple[Path, GroundTruth], catalog: Catalog
) -> None:
    path, truth = two_times
    # A cap the fallback model says covers about 8 s of the 40 (the installation has no runs).
    rate = path.stat().st_size / truth.duration_s
    work = Workload(8.0, 10.0, 320, 240, 5.0, "motion", 1, rate)
    cap = round(sum(fallback_model("motion").stage_seconds(work).values()) * 1.5, 2)
    reader, run_dir, cost, tenant = run_capped(path, max_compute_s=cap)
    assert cost["truncation"]["reason"] == "max_compute_s" and cost["truncation"]["cap"] == cap
    assert cost["caps"] == {"max_cost": None, "max_compute_s": cap}
    assert _billed(catalog, tenant) == pytest.approx(cost["processed_s"])
    minutes = round(cost["processed_s"] / 60, 4)
    assert cost["cost"]["amount"] == round(minutes * PRICE, 4)
    _assert_only_the_processed_part(reader, run_dir, cost, truth)


def test_a_run_keeps_its_measured_figures_for_the_cost_model(
    run_capped: Callable[..., Processed], two_times: tuple[Path, GroundTruth], catalog: Catalog
) -> None:
    path, _ = two_times
    _, _, cost, _ = run_capped(path, max_duration_s=8)
    [sample] = RunCostStore(catalog).newest(10)
    assert (sample.width, sample.height, sample.source_fps) == (320, 240, 10.0)
    assert sample.processed_s == cost["processed_s"] and sample.detector_mode == "motion"
    assert sample.stages == cost["stages"] and sample.chunks == 1
    assert sample.frames_analysed == cost["frames"]["analysed"]
    assert sample.wall_s >= sample.compute_s
