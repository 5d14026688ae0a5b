"""Publishing on both stores: the manifest comes last, readers refuse anything less than a whole
run, and a run that never finished publishing is deleted (by its failure, or by the sweep)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from storage.artifacts.blobs import BlobStore, S3BlobStore
from storage.artifacts.layout import (
    MANIFEST,
    RunLayout,
    discard_run,
    publish,
    published_bytes,
    write_json,
    write_rows,
)
from storage.artifacts.reads import ArtifactReader
from tasks.retention import remove_orphans
from ves.clock import utc_now
from ves.errors import NotReady

EVENT = {
    "event_id": "evt_1",
    "type": "enter",
    "t_s": 1.0,
    "end_s": None,
    "object_id": "obj_1",
    "zone_id": None,
    "confidence": 0.9,
    "evidence_ids": ["ev_1"],
}


@pytest.fixture
def store(any_store: BlobStore) -> BlobStore:
    return any_store


def _written_run(tmp_path: Path) -> RunLayout:
    layout = RunLayout(tmp_path / "work", "ten_a", "vid_b", "run_c")
    layout.prepare()
    write_rows(layout.out_dir, "events", [EVENT])
    write_json(layout.out_dir / "cost.json", {"duration_s": 1.0})
    (layout.out_dir / "thumbs").mkdir()
    (layout.out_dir / "thumbs" / "ev_1_0.jpg").write_bytes(b"jpeg")
    return layout


def test_a_published_run_is_read_whole(store: BlobStore, tmp_path: Path) -> None:
    layout = _written_run(tmp_path)
    key = publish(layout, store)
    reader = ArtifactReader(store)
    reader.verify(key)
    assert key == "artifacts/tenant=ten_a/video=vid_b/run=run_c"
    assert [r["event_id"] for r in reader.rows(key, "events", order_by="t_s")] == ["evt_1"]
    assert reader.document(key, "cost.json") == {"duration_s": 1.0}
    assert published_bytes(store, key) == sum(b.size for b in store.list(key))
    assert not layout.work_dir.exists()


def test_on_an_object_store_the_manifest_is_written_last(
    s3_store: S3BlobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[str] = []
    put_file, put_bytes = s3_store.put_file, s3_store.put_bytes
    monkeypatch.setattr(
        s3_store, "put_file", lambda p, k, **kw: (written.append(k), put_file(p, k, **kw))
    )
    monkeypatch.setattr(s3_store, "put_bytes", lambda d, k: (written.append(k), put_bytes(d, k)))

    key = publish(_written_run(tmp_path), s3_store)

    assert written[-1] == f"{key}/{MANIFEST}" and len(written) == 4
    assert sorted(written[:-1]) == [
        f"{key}/{n}" for n in ("cost.json", "events.parquet", "thumbs/ev_1_0.jpg")
    ]


@pytest.mark.parametrize("damage", ["no manifest", "short file", "missing file"])
def test_readers_refuse_a_run_that_is_not_whole(
    store: BlobStore, tmp_path: Path, damage: str
) -> None:
    key = publish(_written_run(tmp_path), store)
    if damage == "no manifest":
        store.delete(f"{key}/{MANIFEST}")
    elif damage == "short file":
        store.put_bytes(b"jp", f"{key}/thumbs/ev_1_0.jpg")
    else:
        store.delete(f"{key}/events.parquet")
    with pytest.raises(NotReady):
        ArtifactReader(store).verify(key)


def test_a_half_written_run_is_never_served_and_is_cleaned_up(
    store: BlobStore, tmp_path: Path
) -> None:
    layout = _written_run(tmp_path)
    key = layout.final_key
    store.put_file(layout.out_dir / "events.parquet", f"{key}/events.parquet")  # then it died
    with pytest.raises(NotReady):
        ArtifactReader(store).verify(key)

    assert remove_orphans(store, utc_now() - timedelta(minutes=5)) == ()  # too young to judge
    assert remove_orphans(store, utc_now() + timedelta(minutes=5)) == (key,)
    assert store.list("artifacts") == []

    store.put_file(layout.out_dir / "events.parquet", f"{key}/events.parquet")
    discard_run(layout, store)  # what failing the run does
    assert store.list("artifacts") == [] and not layout.work_dir.exists()


def test_the_sweep_keeps_published_runs(store: BlobStore, tmp_path: Path) -> None:
    key = publish(_written_run(tmp_path), store)
    assert remove_orphans(store, utc_now() + timedelta(minutes=5)) == ()
    ArtifactReader(store).verify(key)
