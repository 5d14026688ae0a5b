"""The media suite's watchdog: a child over its time or memory bound is killed and reported.

No flow runs here: the bounds are set below what merely starting the child's interpreter and
imports takes (about 2.5 s and 250 MiB), so the child is killed on its way in, as a stuck or
swelling run would be.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stress.media.cases import SUCCEEDS, Case, by_name
from stress.media.run import Result, child_env, run_child


def _run(tmp_path: Path, time_s: float = 30.0, memory_mib: float = 600.0) -> Result:
    base = by_name()["baseline"]
    what = "the baseline under a tight bound"
    case = Case("tight", what, (SUCCEEDS,), base.make, time_s=time_s, memory_mib=memory_mib)
    env = child_env(tmp_path / "data", "http://127.0.0.1:9/api")  # never reached
    return run_child(case, tmp_path / "never-read.mp4", env, as_case="baseline")


def test_a_child_over_its_time_bound_is_killed_as_stuck(tmp_path: Path) -> None:
    result = _run(tmp_path, time_s=0.3)
    assert (result.outcome, result.as_expected) == ("stuck", False)
    # Killed, not waited for: the report says so (how soon after the bound is the machine's load,
    # not a test's business).
    assert result.wall_s >= 0.3
    assert "killed at its bound (0.3 s" in result.message


def test_a_child_over_its_memory_bound_is_killed(tmp_path: Path) -> None:
    result = _run(tmp_path, memory_mib=40.0)
    assert (result.outcome, result.as_expected) == ("memory", False)
    assert result.peak_mib >= 40.0


@pytest.mark.parametrize(
    ("outcome", "wall_s", "peak_mib", "expected"),
    [
        (SUCCEEDS, 1.0, 100.0, True),
        ("source_invalid", 1.0, 100.0, False),  # not an allowed outcome
        (SUCCEEDS, 16.0, 100.0, False),  # over the time bound
        (SUCCEEDS, 1.0, 601.0, False),  # over the memory bound
        ("skipped: no encoder/decoder: libx265", 0.0, 0.0, True),
    ],
)
def test_as_expected_means_an_allowed_outcome_within_both_bounds(
    outcome: str, wall_s: float, peak_mib: float, expected: bool
) -> None:
    case = by_name()["baseline"]
    assert Result(case, outcome, "", wall_s, peak_mib, {}).as_expected is expected
