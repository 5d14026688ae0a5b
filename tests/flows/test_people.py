"""People in a real street clip, through the whole flow, against hand labels with identities.

``vtest.avi`` (OpenCV's pedestrian sample, fetched from Debian's ``opencv-doc``) is processed in
the service's default mode; its person tracks are scored with py-motmetrics against the
hand-labelled frames of ``testkit/data/vtest_people.json``, whose ids follow each of the 12
people of ``testkit/data/vtest_identities.json`` through exits and returns (``testkit/mot.py``).
Floors sit under the figures measured when tracking by detection was built
(``benchmarks/people.py`` prints them), so a change that makes people less true fails here.
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
from testkit.mot import load_truth, score_tracks
from tests.flows.conftest import QueueRun
from ves.settings import Settings

FPS = 10.0  # vtest.avi's frame rate: labels are frame numbers
DISTINCT_PEOPLE = 12  # testkit/data/vtest_identities.json
# Regression bounds under what tracking by detection measures (0.87 and 0.89); issue 41's
# targets hold exactly: no track or identity holding two people, within 1 of the 12 people.
MOTA_FLOOR = 0.8
IDF1_FLOOR = 0.85


@pytest.fixture
def street(
    queue_upload_run: QueueRun, vtest_avi: Path, catalog: Catalog, settings: Settings
) -> tuple[ArtifactReader, str, str, str]:
    run = queue_upload_run(vtest_avi)  # no detector named: the service's default mode
    published = process_video(ProcessVideoParams(run_id=run.run_id))
    assert RunStore(catalog).get(run.run_id).state == "succeeded"
    return ArtifactReader(open_blob_store(settings)), published, run.video_id, run.run_id


def test_the_default_mode_tracks_the_people_of_a_street(
    street: tuple[ArtifactReader, str, str, str],
) -> None:
    reader, published, video_id, run_id = street
    cost = reader.document(published, "cost.json")
    assert cost["detector_mode"] == "motion+person+ocr" and cost["fallback"]["used"] is False
    looks = cost["detectors"]["person"]
    assert looks["sweeps"] >= 1 and looks["looks"] >= looks["frames"] >= 1
    objects = reader.rows(published, "objects")
    people = [o for o in objects if o["class"] == "person"]
    assert len(people) >= 0.8 * len(objects)  # mostly people, as the street is
    tracks = [t for t in reader.rows(published, "tracks") if t["class"] == "person"]
    assert {t["detector"] for t in tracks} == {"person"}  # the network's boxes, tracked
    assert any(t["estimated"] for t in tracks) and not all(t["estimated"] for t in tracks)
    sampled = [f["t_s"] for f in reader.rows(published, "frames")]
    truth = load_truth()
    # A track follows one spell of a person in the picture (a return is a new sighting).
    by_track = score_tracks(load_truth(by="sighting"), tracks, "track_id", FPS, sampled=sampled)
    by_identity = score_tracks(truth, tracks, "identity_id", FPS, sampled=sampled)
    # Floors under what was measured (benchmarks/people.py prints every figure;
    # docs/measured/perception.md): MOTA 0.87 where the regions of change reached 0.35,
    # precision 0.95 and recall 0.93 where they reached 0.71 and 0.61, IDF1 by track 0.89.
    assert by_track.frames_scored == len(truth)
    assert by_track.mota >= MOTA_FLOOR and by_track.precision >= 0.88, by_track
    assert by_track.recall >= 0.85 and by_track.idf1 >= IDF1_FLOOR, by_track
    # Against the people's own ids (kept through exits and returns), joining a person's tracks
    # into one identity never costs identity figures.
    plain = score_tracks(truth, tracks, "track_id", FPS, sampled=sampled)
    assert by_identity.idf1 >= plain.idf1, (by_identity, plain)
    # Two people in view at the same time are never one track, nor one identity.
    assert by_track.mixed[0] == 0 and by_identity.mixed[0] == 0, (by_track, by_identity)

    # Re-identification: 12 different people walk here (testkit/data/vtest_identities.json,
    # counted by eye), most of them leaving and coming back; each return is a new object.
    identities = {o["identity_id"] for o in people}
    assert abs(len(identities) - DISTINCT_PEOPLE) <= 1, (len(identities), len(people))
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
