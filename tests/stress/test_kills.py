"""Kill -9 trials, short version (``stress.kills.run`` runs 20): the real ``ves serve`` in its own
processes, a flow run killed mid-detection and the whole service killed as its run publishes.

Each trial's run must end with a reason, the clip executed again must tell its truth, and the
catalog, store, usage counters and Prefect must pass every check of ``stress.kills.checks``;
what the reader beside it was served must come from whole, succeeded runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stress.kills.run import Trial, run_trials, summary

pytestmark = [
    pytest.mark.slow,
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),  # clients of a killed server
]


def test_a_killed_flow_and_a_killed_service_lose_nothing_and_serve_nothing_half_made(
    tmp_path: Path,
) -> None:
    trials = [Trial(0, "flow", "sample", 0.5), Trial(1, "service", "publish", 0.0)]

    outcomes, prober, served = run_trials(tmp_path / "data", trials)

    print(summary(outcomes, prober, served))
    assert [o.problems for o in outcomes] == [[], []]
    assert served == []
    flow, service = outcomes
    assert flow.restart_s is None and flow.killed >= 1
    assert service.restart_s is not None and service.killed >= 5  # supervisor and children
    assert flow.ended.startswith("failed processing_stopped"), flow
    assert prober.outcomes["200"] > 0 and prober.asks["answered"] > 0
