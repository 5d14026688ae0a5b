"""The hostile media corpus, quick subset, through the real flow (``stress.media.run --quick``).

Each case runs in a child process against this session's Prefect server; the assertions are the
truths each input must meet (an outcome from its allowed set, within its bounds), and a few
stated exactly: a cut file never "succeeds" as a whole one would, a single frame is a still, the
bomb is stopped by the frame budget, the playlist loop fails at once, a rotated video is upright.
"""

from __future__ import annotations

import pytest

from stress.media.cases import SUCCEEDS, TRUNCATED, by_name
from stress.media.run import Result, run_cases, summary

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    from prefect.settings import PREFECT_API_URL

    quick = [case for case in by_name().values() if case.quick]
    workdir = tmp_path_factory.mktemp("media")
    (workdir / "corpus").mkdir()
    ran = run_cases(quick, workdir, str(PREFECT_API_URL.value()))
    return {result.case.name: result for result in ran}


def test_every_quick_case_is_as_expected_within_its_bounds(results: dict[str, Result]) -> None:
    failed = [
        f"{r.case.name}: {r.outcome} {r.message}" for r in results.values() if not r.as_expected
    ]
    assert not failed, failed
    for result in results.values():
        assert result.wall_s <= result.case.time_s and 0 < result.peak_mib <= result.case.memory_mib
    assert summary(list(results.values())).startswith(
        f"media: {len(results)} cases, {len(results)} as expected, 0 stuck"
    )


def test_the_baseline_and_the_health_check_succeed_with_the_clip_s_frames(
    results: dict[str, Result],
) -> None:
    for name in ("baseline", "healthy_after", "mkv_named_mp4", "hls_vod"):
        details = results[name].details
        assert results[name].outcome == SUCCEEDS, name
        assert details["frames_sampled"] == 30 and details["processed_s"] == pytest.approx(6.0)


def test_cut_files_fail_as_truncated_or_invalid(results: dict[str, Result]) -> None:
    cuts = [r for name, r in results.items() if name.startswith("truncated_")]
    assert len(cuts) == 3
    assert all(r.outcome in TRUNCATED for r in cuts)
    assert "stopped at" in results["truncated_55"].message


@pytest.mark.parametrize(
    ("name", "code", "words"),
    [
        ("zero_length", "source_invalid", "empty (0 bytes)"),
        ("png_named_mp4", "source_invalid", "still image"),
        ("audio_only", "source_invalid", "no video stream"),
        ("one_frame", "source_invalid", "single frame"),
        ("large_dims_y4m", "limit_exceeded", "8000x8000"),
        ("bomb", "limit_exceeded", "1000 frames per second"),
        ("hls_loop_master", "source_invalid", "master playlist again"),
    ],
)
def test_hostile_inputs_fail_with_a_clear_error(
    results: dict[str, Result], name: str, code: str, words: str
) -> None:
    assert (results[name].outcome, words in results[name].message) == (code, True)


def test_the_playlist_loop_and_the_bomb_fail_fast(results: dict[str, Result]) -> None:
    assert results["hls_loop_master"].wall_s < 15
    assert results["bomb"].wall_s < 15


def test_a_rotated_video_is_analysed_upright(results: dict[str, Result]) -> None:
    """320x240 turned 90 degrees by its display matrix: thumbnails are 240 wide, 320 high."""
    rotated = results["rotated"]
    assert rotated.outcome == SUCCEEDS and rotated.details["frames_sampled"] == 30
    assert rotated.details["thumb_size"] == [240, 320]
