"""The audit chain on both engines: appends link one after the other (also in parallel), and
``verify`` names the record where the table was edited, cut or reordered behind its back; retention
cuts from the start and leaves a checkpoint the chain still verifies from."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from storage.catalog.audit import GENESIS, AuditEntry, AuditLog, chain_hash
from storage.catalog.database import Catalog


@pytest.fixture
def log(catalog: Catalog) -> AuditLog:
    return AuditLog(catalog)


def entry(tenant: str = "ten_a", video: str | None = "vid_1", n: int = 0) -> AuditEntry:
    action = "GET /api/product/videos/{video_id}/scene-graph"
    return AuditEntry(tenant, "key_1", action, 200, video, {"run_id": f"run_{n}"}, "10.0.0.1")


def fill(log: AuditLog, count: int, tenant: str = "ten_a") -> None:
    for n in range(count):
        log.append(entry(tenant, f"vid_{n % 2}", n))


def sql(catalog: Catalog, statement: str, **params: object) -> None:
    with catalog.write() as conn:
        conn.execute(text(statement), params)


def broken_at(log: AuditLog, tenant: str = "ten_a") -> tuple[int, str] | None:
    (report,) = log.verify(tenant)
    return (report.broken.seq, report.broken.problem) if report.broken else None


def test_records_chain_from_genesis_and_hash_their_fields(log: AuditLog) -> None:
    first = log.append(entry())
    second = log.append(entry(n=1))
    assert (first.seq, first.prev_hash) == (1, GENESIS)
    assert first.hash == chain_hash(GENESIS, first.fields)
    assert (second.seq, second.prev_hash) == (2, first.hash)
    assert log.head("ten_a").hash == second.hash
    assert log.head("ten_b").hash == GENESIS  # another tenant's chain is its own
    assert log.verify() == log.verify("ten_a")
    (report,) = log.verify()
    assert (report.ok, report.checked, report.head.seq) == (True, 2, 2)


def test_a_videos_records_page_newest_first_and_come_in_chain_order(log: AuditLog) -> None:
    fill(log, 7)  # vid_0: seq 1, 3, 5, 7
    page = log.for_video("ten_a", "vid_0", limit=3)
    assert [r.seq for r in page.records] == [7, 5, 3]
    rest = log.for_video("ten_a", "vid_0", before=page.next_before, limit=3)
    assert ([r.seq for r in rest.records], rest.next_before) == ([1], None)
    assert page.head.seq == 7
    exported = log.video_records("ten_a", "vid_0")
    assert [r["seq"] for r in exported] == [1, 3, 5, 7]
    assert exported[0]["ids"] == {"run_id": "run_0"}
    assert all(chain_hash(r["prev_hash"], _fields(r)) == r["hash"] for r in exported)
    assert log.for_video("ten_b", "vid_0").records == []


def _fields(record: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in record.items() if k not in {"prev_hash", "hash"}}


def test_parallel_appends_never_chain_to_the_same_predecessor(log: AuditLog) -> None:
    threads = [threading.Thread(target=fill, args=(log, 5)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (report,) = log.verify()
    assert (report.ok, report.checked) == (True, 30)


_TENANT_A = " AND tenant_id = 'ten_a'"


@pytest.mark.parametrize(
    ("tamper", "seq", "words"),
    [
        (["UPDATE audit SET key_id = 'key_evil' WHERE seq = 3"], 3, "fields do not match"),
        (["UPDATE audit SET outcome = 404 WHERE seq = 5"], 5, "fields do not match"),
        (["DELETE FROM audit WHERE seq = 3"], 3, "record 3 missing"),
        # seq swapped through a free value: record 3 now stands at 4 and 4 at 3
        (
            [
                "UPDATE audit SET seq = -3 WHERE seq = 3",
                "UPDATE audit SET seq = 3 WHERE seq = 4",
                "UPDATE audit SET seq = 4 WHERE seq = -3",
            ],
            3,
            "prev_hash",
        ),
    ],
    ids=["edit key_id", "edit outcome", "delete middle", "swap two"],
)
def test_verify_names_the_first_tampered_record(
    log: AuditLog, catalog: Catalog, tamper: list[str], seq: int, words: str
) -> None:
    fill(log, 6)
    fill(log, 2, tenant="ten_b")
    for statement in tamper:
        sql(catalog, statement + _TENANT_A)
    found = broken_at(log)
    assert found is not None and found[0] == seq and words in found[1]
    assert broken_at(log, "ten_b") is None
    assert "BROKEN at seq" in log.verify("ten_a")[0].line()


def test_a_rehashed_edit_breaks_the_next_link(log: AuditLog, catalog: Catalog) -> None:
    fill(log, 4)
    (record,) = [r for r in log.for_video("ten_a", "vid_0").records if r.seq == 3]
    forged = {**record.fields, "client": "203.0.113.9"}
    sql(
        catalog,
        "UPDATE audit SET client = :client, hash = :hash WHERE tenant_id = 'ten_a' AND seq = 3",
        client="203.0.113.9",
        hash=chain_hash(record.prev_hash, forged),
    )
    found = broken_at(log)
    assert found is not None and found[0] == 4 and "prev_hash" in found[1]


def test_truncating_the_newest_records_passes_but_moves_the_head(
    log: AuditLog, catalog: Catalog
) -> None:
    fill(log, 5)
    noted = log.head("ten_a")
    sql(catalog, "DELETE FROM audit WHERE tenant_id = 'ten_a' AND seq >= 4")
    assert broken_at(log) is None  # the documented limit: only a noted head shows it
    assert log.head("ten_a").seq == 3 != noted.seq


@pytest.fixture
def in_2020(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records appended now carry a time in 2020 (as if kept since)."""
    monkeypatch.setattr("storage.catalog.audit.now_rfc3339", lambda: "2020-01-01T00:00:00.000Z")


def test_prune_keeps_a_checkpoint_that_verify_and_appends_continue_from(
    log: AuditLog, catalog: Catalog, in_2020: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(log, 4)
    monkeypatch.undo()
    fill(log, 2)
    fourth = log.for_video("ten_a", "vid_1").records[1]  # seq 6, 4, 2: the second is 4
    assert log.prune("2021-01-01T00:00:00.000Z") == 4
    (report,) = log.verify()
    assert (report.ok, report.start_seq, report.checked) == (True, 4, 2)
    with catalog.read() as conn:
        row = conn.execute(text("SELECT seq, hash FROM audit_checkpoints")).one()
    assert (row.seq, row.hash) == (4, fourth.hash)
    assert log.append(entry()).seq == 7
    assert log.verify()[0].ok
    sql(catalog, "DELETE FROM audit WHERE seq = 5")  # the checkpoint's successor
    assert broken_at(log) == (5, "record 5 missing (deleted)")


def test_prune_keeps_the_newest_record_of_a_chain(
    log: AuditLog, catalog: Catalog, in_2020: None
) -> None:
    fill(log, 3)
    assert log.prune("2021-01-01T00:00:00.000Z") == 2
    assert log.prune("2021-01-01T00:00:00.000Z") == 0
    assert log.head("ten_a").seq == 3
    assert log.verify()[0].ok


def test_a_group_commit_links_each_tenants_entries_in_order(log: AuditLog) -> None:
    log.append(entry("ten_b"))
    batch = [entry("ten_a", n=0), entry("ten_b", n=1), entry("ten_a", n=2), entry("ten_b", n=3)]
    records = log.append_many(batch)
    assert [(r.tenant_id, r.seq, r.ids["run_id"]) for r in records] == [
        ("ten_a", 1, "run_0"),
        ("ten_a", 2, "run_2"),
        ("ten_b", 2, "run_1"),
        ("ten_b", 3, "run_3"),
    ]
    assert all(report.ok for report in log.verify())
    assert [r.checked for r in log.verify()] == [2, 3]
