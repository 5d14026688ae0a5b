"""Re-identification through the whole flow, on a scene whose comings and goings are known.

A red thing crosses left to right and leaves (1-6 s); a blue one crosses the other way (7-12
s); the red thing comes back from the right and leaves to the left (14-20 s). Three objects,
two identities: the red one appears twice. The video is processed whole and cut in chunks, and
both runs must find the same identities (they are read from thumbnails, which both keep).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ask.engine import answer_question
from ask.world import load_world
from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from synthetic import MovingObject, SceneSpec, write_video
from tests.flows.conftest import QueueRun
from ves.settings import Settings

RED, BLUE = (210, 40, 40), (50, 80, 210)
SIZE = (28, 56)
RETURN = SceneSpec(
    duration_s=22.0,
    objects=(
        MovingObject("red", RED, SIZE, ((1.0, -20, 150), (6.0, 340, 150))),
        MovingObject("blue", BLUE, SIZE, ((7.0, 340, 90), (12.0, -20, 90))),
        MovingObject("red again", RED, SIZE, ((14.0, 340, 170), (20.0, -20, 170))),
    ),
    noise=2.0,
)


@pytest.fixture(scope="module")
def returning(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("media") / "return.mp4"
    write_video(RETURN, path)
    return path


def _objects(queue: QueueRun, path: Path, catalog: Catalog, settings: Settings) -> Any:
    run = queue(path)
    published = process_video(ProcessVideoParams(run_id=run.run_id))
    assert RunStore(catalog).get(run.run_id).state == "succeeded"
    reader = ArtifactReader(open_blob_store(settings))
    objects = reader.rows(published, "objects", order_by="first_seen_s")
    return reader, published, run, [o for o in objects if o["class"] != "text"]


def _shape(objects: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """Each object's identity (numbered by first appearance), appearance and appearances."""
    order = list(dict.fromkeys(o["identity_id"] for o in objects))
    return [(order.index(o["identity_id"]), o["appearance"], o["appearances"]) for o in objects]


def test_a_thing_that_comes_back_is_one_identity_whole_or_in_chunks(
    queue_upload_run: QueueRun,
    returning: Path,
    catalog: Catalog,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reader, published, run, objects = _objects(queue_upload_run, returning, catalog, settings)
    assert len(objects) == 3
    assert _shape(objects) == [(0, 1, 2), (1, 1, 1), (0, 2, 2)]  # red, blue, red again
    world = load_world(reader, published, run.video_id, run.run_id)
    things = answer_question(world, "How many different objects appeared?")
    assert things.answer.startswith("2 different objects appeared.")
    times = answer_question(world, "How many times did objects appear?")
    assert times.answer.startswith("Objects came into view 3 times.")

    for name, value in {"VES_CHUNK_S": "6", "VES_CHUNK_LEAD_S": "2"}.items():
        monkeypatch.setenv(name, value)
    _, _, _, chunked = _objects(queue_upload_run, returning, catalog, settings)
    assert _shape(chunked) == _shape(objects)
