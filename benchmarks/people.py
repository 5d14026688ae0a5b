"""Whether the service keeps each person of ``vtest.avi`` under one id: MOT figures of its tracks.

    .venv/bin/python benchmarks/people.py [--run-dir PATH]

``vtest.avi`` (OpenCV's pedestrian sample, ``testkit/vtest.py``) is processed by the real flow in
the service's DEFAULT mode (no detector option), under a temporary Prefect server after a warm-up
run on a tiny clip (Prefect's cold start is not the flow's), with a plain PyAV decode of the same
file in the same run as the floor. The published ``tracks.parquet`` is then read with DuckDB, as
an analyst would read it (its public columns, not the service's reader), and its person rows are
scored with py-motmetrics (``testkit/mot.py``: IoU 0.5 on the sampled labelled frames, difficult
labels as don't-care regions) twice: each ``track_id`` as a hypothesis against each person's
spells in the picture (``load_truth(by="sighting")``: how long one track holds a person, who is
not expected to be followed out of the picture and back) and each ``identity_id`` against the
people (whether re-identification joins a person's sightings without joining two people).
It prints MOTA, IDF1 by track and by identity, precision, recall,
switches, the tracks and identities holding two people who were in view together, the labelled
frames scored, Ask's answer to "How many different people appeared?" (truth: 12), the run's
``cost.json`` detectors block and the flow's wall time against the plain decode.

``--run-dir PATH`` scores an already published run folder (the one holding tracks.parquet)
without running the flow (then there is no wall time to compare).

The truth is our own: the 40 labelled frames (every 2 s) of ``testkit/data/vtest_people.json``,
with identity ids following ``testkit/data/vtest_identities.json``; how they were made is in its
``method`` and ``ids`` fields. The PUBLIC PETS 2009 S2L1 annotation is the held-out measure of
tracking and is never used here: nothing is tuned against it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.pipeline import clip, plain_decode, run_flow
from testkit.mot import MotFigures, load_truth, score_tracks
from testkit.vtest import vtest_path

VTEST_FPS = 10.0
QUESTION = "How many different people appeared?"
IDENTITIES = Path(__file__).resolve().parent.parent / "testkit" / "data" / "vtest_identities.json"
PERSON_ROWS = "select * from read_parquet(?) where class = 'person' order by t_s"
SAMPLED_TIMES = "select t_s from read_parquet(?) order by t_s"


@dataclass(frozen=True)
class RunReading:
    """What the scoring needs of one published run, read before its folder goes away."""

    people: list[dict[str, Any]]  # person rows of tracks.parquet
    sampled: list[float]  # the times the run sampled (frames.parquet)
    cost: dict[str, Any]
    asked: str  # Ask's answer to QUESTION


def read_run(run_dir: Path) -> RunReading:
    """The person tracks and sampled times (by DuckDB), cost.json and Ask's answer."""
    with duckdb.connect() as conn:
        found = conn.execute(PERSON_ROWS, [str(run_dir / "tracks.parquet")])
        columns = [column[0] for column in found.description]
        people = [dict(zip(columns, row, strict=True)) for row in found.fetchall()]
        sampled = [
            t for (t,) in conn.execute(SAMPLED_TIMES, [str(run_dir / "frames.parquet")]).fetchall()
        ]
    for row in people:  # runs of schema version 6 or older have no ``estimated`` column
        row["estimated"] = bool(row.get("estimated"))
    cost: dict[str, Any] = json.loads((run_dir / "cost.json").read_text())
    return RunReading(people, sampled, cost, ask(run_dir))


def ask(run_dir: Path) -> str:
    """The first sentence of Ask's answer to ``QUESTION`` on the run."""
    from ask.engine import answer_question
    from ask.world import load_world
    from storage.artifacts.reads import ArtifactReader

    world = load_world(ArtifactReader(), run_dir, "video", "run")
    return answer_question(world, QUESTION).answer.split(".")[0] + "."


def process_vtest(path: Path) -> tuple[float, RunReading]:
    """The flow's wall time on ``path`` in the default mode, and what its run published."""
    from prefect.testing.utilities import prefect_test_harness

    with tempfile.TemporaryDirectory() as tmp, prefect_test_harness(server_startup_timeout=180):
        os.environ["VES_DATA_DIR"] = tmp
        run_flow(Path(tmp), clip(2, False))  # the first flow in a process pays the start-ups
        flow_s, _, run_dir = run_flow(Path(tmp), path)
        return flow_s, read_run(run_dir)


def score(reading: RunReading) -> tuple[MotFigures, MotFigures]:
    """The figures with each track as a hypothesis against the people's spells in the picture,
    and with each identity against the people."""
    by_track, by_identity = (
        score_tracks(load_truth(by=by), reading.people, key, VTEST_FPS, sampled=reading.sampled)
        for key, by in (("track_id", "sighting"), ("identity_id", "person"))
    )
    return by_track, by_identity


def print_report(reading: RunReading, timing: tuple[float, float] | None) -> None:
    """The markdown table, both keys' full rows, Ask's answer, the detectors and the timing."""
    track, identity = score(reading)
    people = json.loads(IDENTITIES.read_text())["distinct_people"]
    print(f"vtest.avi, person rows of tracks.parquet: {len(reading.people)}")
    print("| figure | value |\n|---|---|")
    for name, value in (
        ("MOTA (by track)", f"{track.mota:.3f}"),
        ("IDF1 by track", f"{track.idf1:.3f}"),
        ("IDF1 by identity", f"{identity.idf1:.3f}"),
        ("precision", f"{track.precision:.3f}"),
        ("recall", f"{track.recall:.3f}"),
        ("switches (by track)", str(track.switches)),
        ("tracks holding two people in view together", "{} of {}".format(*track.mixed)),
        ("identities holding two people in view together", "{} of {}".format(*identity.mixed)),
        ("labelled frames scored", f"{track.frames_scored} of {track.frames_labelled}"),
        (f'Ask: "{QUESTION}"', f'"{reading.asked}" (truth: {people})'),
    ):
        print(f"| {name} | {value} |")
    print(f"\n{MotFigures.HEADER}\n{track.row()}\n{identity.row()}")
    print(f"estimated boxes on scored frames: {track.estimated}; truth boxes {track.objects}")
    print(f"detectors: {json.dumps(reading.cost['detectors'], sort_keys=True)}")
    if timing is None:
        print("flow wall time: not measured (--run-dir)")
    else:
        flow_s, decode_s = timing
        print(
            f"flow {flow_s:.1f} s, plain PyAV decode {decode_s:.2f} s of the same file: "
            f"flow / decode {flow_s / decode_s:.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--run-dir", type=Path, help="score this published run folder instead")
    args = parser.parse_args()
    if args.run_dir is not None:
        print_report(read_run(args.run_dir.resolve()), None)
        return
    path = vtest_path()
    decode_s, _ = plain_decode(path)
    flow_s, reading = process_vtest(path)
    print_report(reading, (flow_s, decode_s))


if __name__ == "__main__":
    main()
