"""Perception on a fixed sample of random scenes, against their truth, through the real flow.

Twelve seeded scenes from ``synthetic.random_scene`` (resolutions, frame rates, containers,
textured objects with stops and crossings, signs anywhere, cuts, lighting changes, noise and
compression all drawn at random) are processed by ``process_video`` with the default detectors
and scored by ``synthetic.scoring``, the same way ``benchmarks/perception.py`` scores its scenes.
The seeds are the first twelve of the HELD-OUT range (``testkit.perception.HELDOUT_SEEDS``, issue
30): no constant was chosen on them, so the floors below are regression floors at the level
measured on scenes nobody tuned for, not the targets (docs/measured/perception.md gives both).
"""

from __future__ import annotations

import pytest

from storage.artifacts.reads import ArtifactReader
from synthetic import random_scene
from synthetic.summary import summarise
from testkit.perception import HELDOUT_SEEDS, ScoredScene, run_scene

SEEDS = HELDOUT_SEEDS[:12]
# The module's scenes are encoded and processed once, inside the first test's time: about 4
# minutes on an idle machine, twice that on one shared with other suites (300 s timed out).
pytestmark = pytest.mark.timeout(900)
MODE = "motion+person+ocr"  # the service's default


@pytest.fixture(scope="module")
def scored(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> list[ScoredScene]:
    data_dir = tmp_path_factory.mktemp("perception")
    reader = ArtifactReader()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("VES_DATA_DIR", str(data_dir))  # the flow reads it, as a worker's does
        return [run_scene(random_scene(seed), seed, MODE, data_dir, reader) for seed in SEEDS]


# Floors at the level measured on these 12 held-out scenes (docs/measured/perception.md, issue
# 30): counts exact in 8 of 12 (100003, 100006, 100010, 100011: things that cross or stand
# together are one motion box), one phantom (100008), texts 21 of 22, IDF1 0.718 (0.765 since
# issue 30's merged regions and picture changes), first seen p95 2.0 s (1.9 s). The targets
# (>= 95 % exact, <= 2 phantoms per 100 scenes, IDF1 >= 0.90, p95 <= 0.5 s) are not met; these
# floors catch a regression, not a success.


@pytest.mark.slow
def test_counts_are_exact_and_nothing_is_invented(scored: list[ScoredScene]) -> None:
    summary = summarise([s.score for s in scored])
    wrong = [s.seed for s in scored if not s.score.count_exact]
    assert summary.count_exact >= 8 / 12, f"wrong counts in seeds {wrong}"
    phantoms = {s.seed: s.score.phantoms for s in scored if s.score.phantoms}
    assert sum(phantoms.values()) <= 1, f"phantoms by seed {phantoms}"
    assert summary.ask_exact >= 8 / 12
    # No random blob, texture, gradient or sign is a person (the network looked at each one).
    assert summary.named_person_objects == 0


@pytest.mark.slow
def test_texts_are_read_and_followed_across_cuts(scored: list[ScoredScene]) -> None:
    summary = summarise([s.score for s in scored])
    missed = [s.seed for s in scored if s.score.matched_texts < s.score.truth_texts]
    assert summary.text_recall >= 0.95, f"missed texts in seeds {missed}"
    assert summary.text_precision >= 0.95
    assert summary.text_in_time >= 0.95  # first and last seen within 1 s


@pytest.mark.slow
def test_objects_keep_their_identity_and_times(scored: list[ScoredScene]) -> None:
    """Targets: IDF1 >= 0.90, first/last seen within 0.5 s p95. Measured on these scenes (issue
    30, commit b4af73e): IDF1 0.765 (0.718 before), first seen p95 1.90 s (things first seen
    only once they part from another), last seen p95 0.20 s; distinct identities exact in 8 of
    12 (as the counts: re-identification joins no two of these things)."""
    summary = summarise([s.score for s in scored])
    assert summary.idf1 >= 0.75
    assert summary.first_p95_s <= 2.0 and summary.last_p95_s <= 0.3
    identities = [s.score.identities_exact for s in scored]
    assert None not in identities and sum(bool(i) for i in identities) >= 8
    assert summary.first_p50_s <= 0.3 and summary.last_p50_s <= 0.2
