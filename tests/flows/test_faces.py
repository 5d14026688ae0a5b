"""Faces through the whole flow: a real photo (scikit-image's astronaut, her face box drawn by
hand in ``face_truth``) slides across a plain background, so motion gates the face detector and
the truth of where the face is on every frame is known."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image
from skimage import data

from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.layout import COST
from storage.artifacts.reads import ArtifactReader
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from tasks.geometry import box_iou
from testkit.face_truth import ASTRONAUT_FACE
from tests.flows.conftest import QueueRun
from ves.settings import Settings

SIZE, SIDE, FPS, SECONDS = (640, 360), 140, 10, 6.0
START_X, SPEED = 20.0, 40.0  # px and px/s: the photo's left edge at time t is START_X + SPEED*t
TOP = 80


def face_at(t: float) -> np.ndarray:
    """The astronaut's face box at time ``t``, normalised to the frame."""
    left = START_X + SPEED * t
    box = np.array(ASTRONAUT_FACE) * SIDE / 512 + [left, TOP, left, TOP]
    return box / np.array([*SIZE, *SIZE])


@pytest.fixture(scope="module")
def sliding_astronaut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("faces") / "astronaut.mp4"
    photo = np.asarray(Image.fromarray(data.astronaut()).resize((SIDE, SIDE)))
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = *SIZE, "yuv420p"
        for i in range(int(SECONDS * FPS)):
            frame = np.full((SIZE[1], SIZE[0], 3), 90, np.uint8)
            left = round(START_X + SPEED * i / FPS)
            frame[TOP : TOP + SIDE, left : left + SIDE] = photo
            out.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        out.mux(stream.encode())
    return path


def test_a_face_that_moves_becomes_a_face_object_where_the_face_is(
    queue_upload_run: QueueRun, sliding_astronaut: Path, catalog: Catalog, settings: Settings
) -> None:
    run = queue_upload_run(sliding_astronaut, detector="motion+person+face+ocr")
    published = process_video(ProcessVideoParams(run_id=run.run_id))
    assert RunStore(catalog).get(run.run_id).state == "succeeded"
    reader = ArtifactReader(open_blob_store(settings))
    faces = [o for o in reader.rows(published, "objects") if o["class"] == "face"]
    assert len(faces) == 1  # one face, tracked as one object
    rows = [r for r in reader.rows(published, "tracks") if r["class"] == "face"]
    ious = [box_iou(np.array([r["bbox"]]), face_at(r["t_s"])[None])[0, 0] for r in rows]
    assert len(rows) >= 10 and float(np.median(ious)) >= 0.5
    cost = reader.document(published, COST)
    assert cost["detector_mode"] == "motion+person+face+ocr"
    assert cost["detectors"]["face"]["frames"] > 0 and cost["detectors"]["face"]["boxes"] >= 10
    # Which person holds a face is a world-state rule tested on its own (tests/tasks/track):
    # a head-and-shoulders photo is only half what HOG was trained on (whole, upright people).
