"""People in a real street clip, through the whole flow, against hand labels.

``vtest.avi`` (OpenCV's pedestrian sample, fetched from Debian's ``opencv-doc``) is processed in
the service's default mode and scored against the hand-labelled frames of
``testkit/data/vtest_people.json`` (see ``testkit/people_truth.py``). Floors sit under the
figures measured when the detector was built (``benchmarks/classes.py`` prints them), so a change
that makes people less true fails here. The people who leave and come back are counted once
(identities), within two of the 12 counted by eye (``testkit/data/vtest_identities.json``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ask.engine import answer_question
from ask.world import load_world
from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from testkit.people_truth import load_labels, score_boxes, score_tracks
from tests.flows.conftest import QueueRun
from ves.settings import Settings

FPS = 10.0  # vtest.avi's frame rate: labels are frame numbers
DISTINCT_PEOPLE = 12  # testkit/data/vtest_identities.json


@pytest.fixture
def street(
    queue_upload_run: QueueRun, vtest_avi: Path, catalog: Catalog, settings: Settings
) -> tuple[ArtifactReader, str, str, str]:
    run = queue_upload_run(vtest_avi)  # no detector named: the service's default mode
    published = process_video(ProcessVideoParams(run_id=run.run_id))
    assert RunStore(catalog).get(run.run_id).state == "succeeded"
    return ArtifactReader(open_blob_store(settings)), published, run.video_id, run.run_id


def test_the_default_mode_names_the_people_of_a_street(
    street: tuple[ArtifactReader, str, str, str],
) -> None:
    reader, published, video_id, run_id = street
    assert reader.document(published, "cost.json")["detector_mode"] == "motion+person+ocr"
    objects = reader.rows(published, "objects")
    people = [o for o in objects if o["class"] == "person"]
    assert len(people) >= 0.8 * len(objects)  # mostly people, as the street is
    tracks = reader.rows(published, "tracks")
    labels = load_labels()
    moving = score_tracks(labels, [t for t in tracks if t["detector"] == "motion"], FPS)
    assert moving.scored >= 8 and moving.accuracy >= 0.9, moving.wrong
    detections = reader.rows(published, "detections")
    seen = score_boxes(labels, [d for d in detections if d["detector"] == "person"], FPS)
    assert seen.precision >= 0.9 and seen.recall >= 0.65, seen

    # Re-identification: 12 different people walk here (testkit/data/vtest_identities.json,
    # counted by eye), most of them leaving and coming back; each return is a new object.
    identities = {o["identity_id"] for o in people}
    # Issue 30's target is within 1; measured 14 (of 18 person tracks) since merged regions
    # are split (one more person kept apart, docs/measured/perception.md): a regression floor.
    assert abs(len(identities) - DISTINCT_PEOPLE) <= 2, (len(identities), len(people))
    assert all(o["appearances"] >= o["appearance"] >= 1 for o in people)
    world = load_world(reader, published, video_id, run_id)
    answer = answer_question(world, "How many people appeared?")
    n = len(identities)
    assert answer.grounded and answer.answer.startswith(f"{n} different people appeared.")
    assert answer.interpreted is not None and answer.interpreted["counted"] == "identities"
    assert "Motion detection does not tell" not in answer.answer  # no caveat: people were named
    cited = {c.evidence_id for c in answer.citations}
    spans = {s["evidence_id"] for s in reader.rows(published, "evidence")}
    assert cited and cited <= spans
    passes = answer_question(world, "How many times did people pass?")
    assert passes.answer.startswith(f"People came into view {len(people)} times.")
