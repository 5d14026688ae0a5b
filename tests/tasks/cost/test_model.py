"""The cost model: fitted exactly on samples of known coefficients; the fallback otherwise."""

from __future__ import annotations

import time

import pytest

from storage.catalog.runs.costs import CostSample
from tasks.context import ComputeBudget
from tasks.cost.model import (
    DRIVERS,
    STAGES,
    CostModel,
    Workload,
    fallback_model,
    fit_model,
)
from tasks.cost.stage import CostInputs, build_cost

TRUE = {
    "decode": (0.2, 0.05),
    "sample": (0.3, 0.004, 0.01, 0.2),
    "detect": (1.0, 0.02, 0.1),
    "track": (0.01, 0.001),
    "world_state": (0.05, 0.002),
    "timeline": (0.02, 0.0001),
    "evidence": (0.1, 0.003),
    "cost": (0.005, 0.0),
    "join": (0.3, 0.002),
}
VARIED = [  # duration, fps, width, height, sample fps, bitrate: drivers that are not collinear
    (10, 25, 320, 240, 5, 1e5),
    (30, 30, 640, 360, 2, 4e5),
    (60, 25, 1280, 720, 5, 2e5),
    (20, 15, 1920, 1080, 1, 3e6),
    (45, 10, 640, 480, 10, 1e5),
    (90, 30, 854, 480, 3, 6e5),
    (15, 24, 1280, 720, 8, 9e5),
]


def sample_of(work: Workload, start_s: float = 0.5, overhead_s: float = 0.25) -> CostSample:
    """A run that took exactly what ``TRUE`` says, with the given start and overhead."""
    names = STAGES + (("join",) if work.chunks > 1 else ())
    stages = {n: sum(c * d for c, d in zip(TRUE[n], DRIVERS[n](work), strict=True)) for n in names}
    return CostSample(
        detector_mode=work.detector_mode,
        sample_fps=work.sample_fps,
        source_fps=work.source_fps,
        width=work.width,
        height=work.height,
        duration_s=work.duration_s,
        processed_s=work.duration_s,
        source_bytes=round(work.bytes_per_s * work.duration_s),
        frames_decoded=work.frames_decoded,
        frames_analysed=work.frames_analysed,
        stages=stages,
        wall_s=sum(stages.values()) + overhead_s,
        start_s=start_s,
    )


def workloads(mode: str = "motion+ocr") -> list[Workload]:
    return [Workload(d, fps, w, h, s, mode, 1, rate) for d, fps, w, h, s, rate in VARIED]


def test_the_fit_recovers_known_coefficients_exactly() -> None:
    samples = [sample_of(w) for w in workloads()]
    model = fit_model(samples, "motion+ocr", min_runs=3)
    assert model.source == "fitted" and model.runs_used == len(samples)
    for name in STAGES:
        assert model.stages[name] == pytest.approx(TRUE[name], rel=1e-6, abs=1e-9), name
    assert model.start_s == pytest.approx(0.5)
    assert model.overhead_s == pytest.approx(0.25)
    unseen = Workload(37, 25, 1024, 576, 4, "motion+ocr", 1, 5e5)
    expected = sample_of(unseen)
    assert model.stage_seconds(unseen) == pytest.approx(expected.stages)
    assert model.wall_s(unseen) == pytest.approx(expected.wall_s + 0.5)


def test_each_detector_mode_is_fitted_on_its_own_runs() -> None:
    samples = [sample_of(w) for w in workloads("motion")] + [sample_of(workloads("motion+ocr")[0])]
    assert fit_model(samples, "motion", 3).source == "fitted"
    ocr = fit_model(samples, "motion+ocr", 3)
    assert ocr.source == "fallback" and ocr.runs_used == 0
    # The start and overhead are the installation's own even then.
    assert ocr.start_s == pytest.approx(0.5) and ocr.overhead_s == pytest.approx(0.25)


def test_no_runs_means_the_documented_fallback() -> None:
    model = fit_model([], "motion+person+ocr", 3)
    assert model == fallback_model("motion+person+ocr")
    assert model.source == "fallback" and model.fitted_at is None
    assert model.stages != fallback_model("motion").stages  # reading text costs more


def test_coefficients_are_never_negative() -> None:
    samples = [sample_of(w) for w in workloads()]
    noisy = [
        CostSample(
            **{**s.__dict__, "stages": {k: v * (0.8 + 0.4 * (i % 2)) for k, v in s.stages.items()}}
        )
        for i, s in enumerate(samples)
    ]
    model = fit_model(noisy, "motion+ocr", 3)
    assert all(c >= 0 for coefficients in model.stages.values() for c in coefficients)


def test_chunks_divide_the_side_by_side_stages_by_the_speedup() -> None:
    model = CostModel(dict(TRUE), "fitted", speedup=2.0, start_s=0.0, overhead_s=0.0)
    whole = Workload(300, 25, 1280, 720, 5, "motion+ocr")
    chunked = Workload(300, 25, 1280, 720, 5, "motion+ocr", chunks=3)
    stages = model.stage_seconds(chunked)
    parallel = stages["sample"] + stages["detect"]
    assert model.wall_s(chunked) == pytest.approx(sum(stages.values()) - parallel / 2)
    assert model.wall_s(whole) == pytest.approx(sum(model.stage_seconds(whole).values()))


def test_downstream_is_what_follows_sampling_per_frame() -> None:
    model = CostModel(dict(TRUE), "fitted")
    work = Workload(40, 25, 640, 360, 5, "motion+ocr")
    fixed, per_frame = model.downstream(work)
    after = ("detect", "track", "world_state", "timeline", "evidence", "cost")
    stages = model.stage_seconds(work)
    assert fixed + per_frame * work.frames_analysed == pytest.approx(sum(stages[s] for s in after))


def test_a_budget_allows_a_frame_while_spent_plus_ahead_fits() -> None:
    now = time.perf_counter()
    budget = ComputeBudget(cap_s=10.0, started_at=now, fixed_s=1.0, per_frame_s=0.1, margin=1.0)
    assert budget.allows(50)  # 1 + 5.1 ahead, nothing spent yet
    assert not budget.allows(100)  # 1 + 10.1 ahead
    late = ComputeBudget(cap_s=10.0, started_at=now - 9.5, fixed_s=1.0, per_frame_s=0.1)
    assert not late.allows(0)


def _inputs(**overrides: object) -> CostInputs:
    base = CostInputs(
        video_id="vid_x",
        run_id="run_x",
        detector_mode="motion",
        fallback_reason=None,
        duration_s=60.0,
        processed_s=20.0,
        stages={"decode": 0.1},
        frames_decoded=500,
        frames_sampled=100,
        frames_analysed=100,
        retention_days=7,
        price_per_video_minute=0.07,
    )
    return CostInputs(**{**base.__dict__, **overrides})  # type: ignore[arg-type]


def test_cost_json_names_the_truncation_and_never_bills_past_max_cost() -> None:
    truncation = {"reason": "max_cost", "at_s": 20.0, "cap": 0.0233}
    cost = build_cost(_inputs(truncated=True, truncation=truncation, max_cost=0.0233))
    assert cost["truncated"] is True and cost["truncation"] == truncation
    assert cost["caps"] == {"max_cost": 0.0233, "max_compute_s": None}
    # 20 s at 0.07 a minute is 0.02333..., rounded 0.0233: never more than the cap.
    assert cost["cost"]["amount"] <= 0.0233
    plain = build_cost(_inputs())
    assert plain["truncation"] is None and plain["cost"]["amount"] == round(0.3333 * 0.07, 4)
