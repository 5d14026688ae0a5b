"""Replay the tracker and the world state on kept runs: seconds a scene, not a minute.

    .venv/bin/python benchmarks/perception.py --range tuning --scenes 40 --keep KEEP
    .venv/bin/python benchmarks/retrack.py --keep KEEP [--family scenes|cases] [--range tuning]
        [--scenes 40] [--verbose]

``benchmarks/perception.py --keep KEEP`` keeps, per scene, what the later stages read
(``detections.parquet``, ``frames.parquet`` and the sampled thumbnails) under
``KEEP/<range>/<seed>/`` (the cases family under ``KEEP/cases-<range>/<seed>/``). This script
runs the CURRENT code's track stage core (``tasks.track.stage.track_table``, handed what
``track_task`` hands it in the flow: the mode's physical detector, the scene cuts and every
sampled frame's time, the person tracker's clock) and world state core on them, scores the
result against the scene's truth with ``synthetic.scoring`` and prints the same table as the
benchmark (without Ask's count, which needs a published run). Detection is not replayed: a
change to a detector needs the full benchmark. Use it on TUNING seeds while choosing a tracker
constant; the held-out figures that count come from the full benchmark.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.perception import provenance, range_seeds
from storage.artifacts.layout import read_rows, read_table, write_rows, write_table
from synthetic import ground_truth
from synthetic.scoring import SceneScore, score_scene
from synthetic.summary import summarise
from tasks.detections import detections_from_table, track_numbers
from tasks.track.stage import FrameAt, scene_cuts, thumbnail_reader, track_table
from tasks.world_state.appearances import identities_of
from tasks.world_state.parts import class_votes
from tasks.world_state.stage import WorldConfig, build_world_state
from testkit.perception import FAMILIES
from ves.detector_mode import DetectorMode

SAMPLE_FPS = 5.0  # the service's default sampling rate (ves.settings processing.sample_fps)


def replay(seed: int, kept: Path, out: Path, family: str = "scenes") -> SceneScore:
    """Track and build the world state of one kept scene of ``family`` into ``out``; score it."""
    truth = ground_truth(FAMILIES[family](seed).spec)
    detections = read_table(kept, "detections")
    frames = read_rows(kept, "frames")
    tracks, _ = track_table(detections, *track_inputs(detections, frames, kept))
    write_table(out, "tracks", tracks)
    numbered = {n: object_id for object_id, n in track_numbers(tracks).items()}
    cfg = WorldConfig((), 1.0 / SAMPLE_FPS)
    votes = class_votes(tracks, detections)
    world = build_world_state(
        detections_from_table(tracks), frames, cfg, numbered, votes, None, identities_of(tracks)
    )
    write_rows(out, "objects", world.objects)
    sampled = [round(r["t_s"] * truth.fps) for r in frames]
    return score_scene(truth, world.objects, read_rows(out, "tracks"), sampled, None)


def track_inputs(
    detections: pa.Table, frames: list[dict[str, Any]], kept: Path
) -> tuple[str, FrameAt, list[float], npt.NDArray[np.float64]]:
    """What ``tasks.track.stage.track_task`` hands ``track_table`` in the flow: the physical
    detector of the mode that ran (read from the detectors of the kept rows, as
    ``DetectorMode.of_plugins`` reads a run's), the thumbnails, the certain scene cuts and the
    time of EVERY sampled frame (frames without a box too: the person tracker's clock)."""
    ran = set(detections.column("detector").to_pylist()) | {"motion"}
    physical = DetectorMode.of_plugins(ran & {"motion", "yolo"}).physical
    ordered = sorted(frames, key=lambda row: row["sample_index"])
    times = np.asarray([row["t_s"] for row in ordered], dtype=np.float64)
    return physical, thumbnail_reader(kept / "frames"), scene_cuts(frames), times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, required=True)
    parser.add_argument("--family", choices=sorted(FAMILIES), default="scenes")
    parser.add_argument("--range", default="tuning")
    parser.add_argument("--scenes", type=int, default=200)
    parser.add_argument("--verbose", action="store_true", help="one line per scene")
    args = parser.parse_args()
    folder = args.keep / (args.range if args.family == "scenes" else f"{args.family}-{args.range}")
    all_seeds = range_seeds(args.range, args.scenes, args.family)
    seeds = [s for s in all_seeds if (folder / str(s)).is_dir()]
    scores = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            out = Path(tmp) / str(seed)
            out.mkdir()
            score = replay(seed, folder / str(seed), out, args.family)
            scores.append(score)
            if args.verbose:
                print(
                    f"seed {seed}: objects {score.predicted_objects}/{score.truth_objects} "
                    f"matched {score.matched_objects} switches {score.id_switches}"
                )
    summary = summarise(scores)
    print(f"\nreplayed {summary.scenes} kept scenes; {provenance(args.range, seeds, args.family)}")
    for figure, value, target in summary.rows():
        print(f"| {figure:44s} | {value:13s} | {target:6s} |")
    wrong = [s for s, sc in zip(seeds, scores, strict=True) if not sc.count_exact]
    print(f"seeds with a wrong count: {wrong}")


if __name__ == "__main__":
    main()
