"""Re-identification: how alike tracks of one thing and of different things look, and what
linking them into identities does on the street clip and on synthetic scenes.

    .venv/bin/python benchmarks/identities.py [--range tuning|heldout] [--scenes 60] [--no-street]

How ``tasks.track.identities.LINK_DISTANCE`` was chosen (issue 30: on TUNING data only):
the flow runs on ``vtest.avi`` and on the first ``--scenes`` seeds of the range, and every
track's summary is kept as the track stage makes it. Pairs with known truth, no hand labels
needed:

* SAME thing: the first and the second half of one track (one thing, seen at two times);
* DIFFERENT things: two tracks in view at the same time (on the street, and in each synthetic
  scene), and two tracks of different synthetic scenes (every truth object is its own thing).

It prints the quantiles of their look distances and, for each candidate threshold, the share
of same pairs that would link and of different pairs that would (wrongly). The constant is the
largest threshold at which at most 5 % of the different pairs of each kind look alike; on the
tuning run of this change (seeds 0..23) 0.25 let 6.2 % of the street's people in view together
and 5.2 % of the pairs of different synthetic scenes through, hence 0.2. Then, per range, the
figures that count: identities of physical objects against truth objects, and objects linked
into one identity that match different truth objects (wrong merges, target 0). On the street it
prints the distinct people at each threshold (truth: 12, ``testkit/data/vtest_identities.json``).
The held-out range is for the report only: nothing is chosen on it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.perception import CACHE, DEFAULT_MODE, provenance, range_seeds
from tasks.detections import Detections
from tasks.track import identities as reid
from tasks.track.identities import F64, TrackSummary
from testkit.perception import ScoredScene

THRESHOLDS = (0.15, 0.2, 0.25, 0.3, 0.35)
STREET_PEOPLE = 12  # testkit/data/vtest_identities.json


@dataclass
class Run:
    """One run's tracks, their rows' half looks and their summaries, as the track stage made
    them."""

    tracks: Detections
    upper: F64
    lower: F64
    summaries: list[TrackSummary]


def capture(into: list[Run]) -> Callable[[], None]:
    """Keep every run's tracks and looks as the track stage makes them (returns an undo)."""
    import tasks.track.stage as stage

    original = stage.identify_tracks

    def identify(tracks: Detections, frame_at: Any) -> dict[int, int]:
        upper, lower = reid.half_looks(tracks, frame_at)
        into.append(Run(tracks, upper, lower, reid.summarise_tracks(tracks, upper, lower)))
        return original(tracks, frame_at)

    stage.identify_tracks = identify
    return lambda: setattr(stage, "identify_tracks", original)


def halves(run: Run) -> list[float]:
    """Distances between the first and the second half of each track (one thing, two times)."""
    out = []
    for s in run.summaries:
        rows = np.flatnonzero(run.tracks.track_ids == s.track_id)
        if len(rows) < 2 * reid.MIN_CLEAN_LOOKS:
            continue
        ids = np.zeros(len(rows), np.int64)
        ids[len(rows) // 2 :] = 1
        part = run.tracks.select(rows).with_track_ids(ids)
        first, second = reid.summarise_tracks(part, run.upper[rows], run.lower[rows])
        out.append(reid.summary_distance(first, second))
    return out


def together(run: Run) -> list[float]:
    """Distances between tracks in view at the same time (different things)."""
    known = [s for s in run.summaries if s.known]
    return [
        reid.summary_distance(a, b)
        for i, a in enumerate(known)
        for b in known[i + 1 :]
        if a.first_s <= b.last_s and b.first_s <= a.last_s
    ]


def across(runs: list[Run]) -> list[float]:
    """Distances between tracks of different scenes (different things), shape gate applied."""
    out = []
    for i, one in enumerate(runs):
        for other in runs[i + 1 :]:
            for a in one.summaries:
                for b in other.summaries:
                    shape = max(a.aspect, b.aspect) / max(min(a.aspect, b.aspect), 1e-6)
                    if a.known and b.known and shape <= reid.ASPECT_RATIO:
                        out.append(reid.summary_distance(a, b))
    return out


def report(name: str, values: list[float]) -> None:
    """One row: how many pairs, their distance quantiles, the share under each threshold."""
    if not values:
        print(f"| {name} | 0 | | {' | ' * len(THRESHOLDS)}")
        return
    q = np.quantile(values, [0.01, 0.05, 0.5])
    shares = " | ".join(f"{np.mean(np.asarray(values) <= t):.1%}" for t in THRESHOLDS)
    print(f"| {name} | {len(values)} | {q[0]:.3f} / {q[1]:.3f} / {q[2]:.3f} | {shares} |")


@dataclass
class Merges:
    """Identities against truth objects over synthetic scenes."""

    identities: int = 0
    objects: int = 0
    truth: int = 0
    wrong: int = 0  # pairs of objects of one identity matched to different truth objects
    scenes_wrong: int = 0
    rejoined: int = 0  # pairs of objects of one identity matched to the same truth object


def count_merges(done: ScoredScene, objects: list[dict[str, Any]], into: Merges) -> None:
    """Add one scene's identities, and its right and wrong links, to ``into``."""
    from storage.artifacts.layout import read_rows
    from synthetic import ground_truth
    from synthetic.scoring import match_objects, predicted_objects

    truth = ground_truth(done.scene.spec)
    physical = [o for o in objects if o["identity_id"] is not None]
    predicted = predicted_objects(physical, read_rows(done.run_dir, "tracks"), truth.fps)
    matched = {p.object_id: truth.objects.index(t) for t, p in match_objects(truth, predicted)}
    into.identities += len({o["identity_id"] for o in physical})
    into.objects += len(physical)
    into.truth += len(truth.objects)
    wrong_before = into.wrong
    for i, a in enumerate(physical):
        for b in physical[i + 1 :]:
            ta, tb = matched.get(a["object_id"]), matched.get(b["object_id"])
            if a["identity_id"] == b["identity_id"] and ta is not None and tb is not None:
                into.wrong += int(ta != tb)
                into.rejoined += int(ta == tb)
    into.scenes_wrong += int(into.wrong > wrong_before)


def street_run(data_dir: Path, into: list[Run]) -> None:
    """The flow on vtest.avi in the default mode, its summaries kept."""
    from benchmarks.pipeline import run_flow
    from testkit.vtest import vtest_path

    undo = capture(into)
    try:
        run_flow(data_dir, vtest_path(), {"detector": DEFAULT_MODE})
    finally:
        undo()


def run_all(seeds: list[int], with_street: bool) -> tuple[list[Run], list[Run], Merges]:
    """Run the flow on the street clip and the scenes; their summaries and the merges."""
    from prefect.settings import PREFECT_LOGGING_TO_API_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    from storage.artifacts.layout import read_rows
    from storage.artifacts.reads import ArtifactReader
    from synthetic import random_scene
    from testkit.perception import run_scene

    street: list[Run] = []
    scenes: list[Run] = []
    merges = Merges()
    with (
        tempfile.TemporaryDirectory() as tmp,
        temporary_settings({PREFECT_LOGGING_TO_API_ENABLED: False}),
        prefect_test_harness(server_startup_timeout=180),
    ):
        os.environ["VES_DATA_DIR"] = tmp
        data_dir = Path(tmp)
        CACHE.mkdir(parents=True, exist_ok=True)
        (data_dir / "media").symlink_to(CACHE)
        if with_street:
            street_run(data_dir, street)
        reader = ArtifactReader()
        for n, seed in enumerate(seeds, 1):
            undo = capture(scenes)
            try:
                done = run_scene(random_scene(seed), seed, DEFAULT_MODE, data_dir, reader)
            finally:
                undo()
            count_merges(done, read_rows(done.run_dir, "objects"), merges)
            print(f"  [{n}/{len(seeds)}] seed {seed}: {merges}", flush=True)
    return street, scenes, merges


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--range", choices=("tuning", "heldout"), default="tuning")
    parser.add_argument("--scenes", type=int, default=60)
    parser.add_argument("--no-street", action="store_true")
    args = parser.parse_args()
    seeds = range_seeds(args.range, args.scenes)
    street, scenes, merges = run_all(seeds, not args.no_street)
    print(f"\n{provenance(args.range, seeds)}; LINK_DISTANCE {reid.LINK_DISTANCE}")
    print(f"| pairs | n | 1 % / 5 % / 50 % | {' | '.join(f'<= {t}' for t in THRESHOLDS)} |")
    print(f"|---|---|---|{'---|' * len(THRESHOLDS)}")
    if street:
        report("street: halves of one track (same)", halves(street[0]))
        report("street: in view together (different)", together(street[0]))
    report("synthetic: halves of one track (same)", [d for r in scenes for d in halves(r)])
    report("synthetic: in view together (different)", [d for r in scenes for d in together(r)])
    report("synthetic: other scenes (different)", across(scenes))
    if street:
        people = [s for s in street[0].summaries if s.class_name == "person"]
        counts = [len(set(reid.link_identities(people, t).values())) for t in THRESHOLDS]
        print(
            f"street: {len(people)} person tracks; distinct people at {THRESHOLDS}: {counts} "
            f"(truth {STREET_PEOPLE})"
        )
    print(
        f"synthetic ({args.range}, {len(seeds)} scenes): {merges.identities} identities of "
        f"{merges.objects} physical objects ({merges.truth} truth objects); linked pairs of "
        f"different truth objects: {merges.wrong} (in {merges.scenes_wrong} scenes), of one "
        f"truth object: {merges.rejoined}"
    )


if __name__ == "__main__":
    main()
