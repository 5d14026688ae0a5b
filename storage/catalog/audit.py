"""The audit trail: who read or wrote what of a video, when and from where, as a hash chain.

Each tenant has one chain. A record's ``hash`` is ``sha256(prev_hash + canonical JSON of its
fields)`` (sorted keys, no whitespace; the fields are ``AuditRecord.fields``: every column but
``prev_hash`` and ``hash``), and its ``prev_hash`` is the ``hash`` of the record before it in the
chain (``seq - 1``); the first record's is ``GENESIS``. ``append`` takes the chain's head and
inserts the next record in one write transaction under the tenant's chain lock
(``Catalog.write(lock=...)``: SQLite serialises every writer, PostgreSQL queues the tenant's
appends on an advisory lock), and ``(tenant_id, seq)`` is the primary key, so two appends can
never chain to the same predecessor.

What ``verify`` detects, walking each chain from its start (or its retention checkpoint):

- an edited record: its fields no longer hash to its ``hash``;
- an edited record whose ``hash`` was recomputed too: the next record's ``prev_hash`` differs;
- a deleted record in the middle: a gap in ``seq`` and a ``prev_hash`` that names no record;
- reordered records (``seq`` swapped): ``seq`` is hashed, so the moved records fail their hash.

What it cannot detect, from the table alone: the newest records deleted (the chain is shorter
but whole), or the whole chain rewritten from some point on by someone who can write the table
(every hash recomputed). Both need a copy of the chain's head kept elsewhere: the head (``seq``
and ``hash``) is in every answer of ``GET .../audit``, so a client can note it and later check
that the chain still reaches it, and every export bundle carries the head at export time.

Retention (``prune``) deletes records older than a cutoff from the start of each chain and keeps
the last deleted record's ``seq`` and ``hash`` as the chain's checkpoint, from which ``verify``
and the next append continue.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import Connection, RowMapping, delete, func, insert, select

from storage.catalog.database import Catalog
from storage.catalog.tables import audit as audit_table
from storage.catalog.tables import audit_checkpoints
from ves.clock import now_rfc3339
from ves.ids import new_id

GENESIS = "0" * 64
"""``prev_hash`` of a chain's first record."""

SYSTEM_KEY = "system"
"""``key_id`` of what the service does by itself (retention)."""

_WALK_PAGE = 1000  # records read at a time by ``verify``


def _chain_lock(tenant_id: str) -> str:
    return f"ves:audit:{tenant_id}"


def chain_hash(prev_hash: str, fields: dict[str, Any]) -> str:
    """``sha256(prev_hash + canonical JSON of fields)``, hex (what links a record to its chain)."""
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((prev_hash + canonical).encode()).hexdigest()


@dataclass(frozen=True)
class AuditEntry:
    """What the caller knows of one access: the chain adds ``seq``, time and hashes."""

    tenant_id: str
    key_id: str
    action: str  # route template with method (``GET /api/...``) or ``mcp:<tool>``
    outcome: int  # HTTP status (what the tool's answer would have been)
    video_id: str | None = None
    ids: dict[str, Any] = field(default_factory=dict)  # run_id, evidence_ids, ...
    client: str | None = None
    at: str | None = None  # when the call answered (default: when appended)


@dataclass(frozen=True)
class AuditRecord:
    """One record of a chain, as stored."""

    seq: int
    record_id: str
    tenant_id: str
    key_id: str
    action: str
    video_id: str | None
    ids: dict[str, Any]
    outcome: int
    client: str | None
    at: str
    prev_hash: str
    hash: str

    @classmethod
    def from_row(cls, row: RowMapping) -> AuditRecord:
        values = {k: row[k] for k in cls.__dataclass_fields__ if k != "ids"}
        return cls(ids=json.loads(row["ids_json"]), **values)

    @property
    def fields(self) -> dict[str, Any]:
        """What the hash covers: every field but the two hashes."""
        document = self.as_dict()
        del document["prev_hash"], document["hash"]
        return document

    def as_dict(self) -> dict[str, Any]:
        """The record as JSON-able values (what the API answers and an export carries)."""
        return asdict(self)

    def expected_hash(self) -> str:
        return chain_hash(self.prev_hash, self.fields)


@dataclass(frozen=True)
class ChainHead:
    """The newest link of a tenant's chain (``seq`` 0 and ``GENESIS`` before any record)."""

    tenant_id: str
    seq: int
    hash: str


@dataclass(frozen=True)
class AuditPage:
    """A page of a video's records, newest first, and the seq to continue before."""

    records: list[AuditRecord]
    next_before: int | None
    head: ChainHead


@dataclass(frozen=True)
class Break:
    """The first broken link of a chain."""

    seq: int
    problem: str


@dataclass(frozen=True)
class ChainReport:
    """What ``verify`` found in one tenant's chain."""

    tenant_id: str
    checked: int
    start_seq: int  # the checkpoint's seq (0: the chain starts at GENESIS)
    head: ChainHead
    broken: Break | None = None

    @property
    def ok(self) -> bool:
        return self.broken is None

    def line(self) -> str:
        """One line for ``ves audit verify``."""
        where = f"from checkpoint seq {self.start_seq}" if self.start_seq else "from genesis"
        base = f"tenant {self.tenant_id}: {self.checked} record(s) checked {where}"
        if self.broken is None:
            return f"{base}, chain intact, head seq {self.head.seq} {self.head.hash}"
        return f"{base}, BROKEN at seq {self.broken.seq}: {self.broken.problem}"


class AuditLog:
    """Append, read and verify the tenants' audit chains."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def append(self, entry: AuditEntry) -> AuditRecord:
        """Add ``entry`` at the head of its tenant's chain (one write transaction)."""
        return self.append_many([entry])[0]

    def append_many(self, entries: list[AuditEntry]) -> list[AuditRecord]:
        """Add ``entries`` in order, one write transaction per tenant (a group commit)."""
        tenants = dict.fromkeys(e.tenant_id for e in entries)
        records: list[AuditRecord] = []
        for tenant_id in tenants:
            mine = [e for e in entries if e.tenant_id == tenant_id]
            with self.catalog.write(lock=_chain_lock(tenant_id)) as conn:
                head = _head(conn, tenant_id)
                for entry in mine:
                    records.append(_link(entry, head))
                    head = ChainHead(tenant_id, records[-1].seq, records[-1].hash)
                conn.execute(insert(audit_table), [_row(r) for r in records[-len(mine) :]])
        return records

    def head(self, tenant_id: str) -> ChainHead:
        """The newest link of the tenant's chain (what a client notes to detect truncation)."""
        with self.catalog.read() as conn:
            return _head(conn, tenant_id)

    def for_video(
        self, tenant_id: str, video_id: str, before: int | None = None, limit: int = 50
    ) -> AuditPage:
        """The tenant's records about ``video_id``, newest first, with ``seq < before``."""
        table = audit_table
        query = select(table).where(table.c.tenant_id == tenant_id, table.c.video_id == video_id)
        if before is not None:
            query = query.where(table.c.seq < before)
        query = query.order_by(table.c.seq.desc()).limit(limit + 1)
        with self.catalog.read() as conn:
            rows = conn.execute(query).mappings().all()
            head = _head(conn, tenant_id)
        records = [AuditRecord.from_row(r) for r in rows[:limit]]
        return AuditPage(records, records[-1].seq if len(rows) > limit else None, head)

    def video_records(self, tenant_id: str, video_id: str) -> list[dict[str, Any]]:
        """Every record about ``video_id`` in chain order (oldest first), as JSON-able dicts with
        ``prev_hash`` and ``hash`` (what an export bundle carries beside ``head``).

        They are links of the tenant's chain, interleaved with its other videos' records: each
        record's own hash can be checked (``chain_hash(prev_hash, fields)``), the links between
        two of them only against the whole chain."""
        table = audit_table
        query = (
            select(table)
            .where(table.c.tenant_id == tenant_id, table.c.video_id == video_id)
            .order_by(table.c.seq)
        )
        with self.catalog.read() as conn:
            return [AuditRecord.from_row(r).as_dict() for r in conn.execute(query).mappings()]

    def verify(self, tenant_id: str | None = None) -> list[ChainReport]:
        """Walk every chain (or ``tenant_id``'s) from its start; the first broken link of each."""
        with self.catalog.read() as conn:
            tenants = [tenant_id] if tenant_id else _chained_tenants(conn)
            return [_verify_chain(conn, t) for t in tenants]

    def prune(self, cutoff: str) -> int:
        """Delete each chain's records with ``at < cutoff`` from its start, keeping the last one
        deleted as its checkpoint; the number deleted. A chain's newest record is always kept,
        so that its head stays readable in the table."""
        with self.catalog.read() as conn:
            tenants = _chained_tenants(conn)
        return sum(self._prune_chain(t, cutoff) for t in tenants)

    def _prune_chain(self, tenant_id: str, cutoff: str) -> int:
        table = audit_table
        with self.catalog.write(lock=_chain_lock(tenant_id)) as conn:
            newest = _newest_seq(conn, tenant_id)
            last = conn.execute(
                select(table.c.seq, table.c.hash)
                .where(table.c.tenant_id == tenant_id, table.c.at < cutoff, table.c.seq < newest)
                .order_by(table.c.seq.desc())
                .limit(1)
            ).first()
            if last is None:
                return 0
            deleted = conn.execute(
                delete(table).where(table.c.tenant_id == tenant_id, table.c.seq <= last.seq)
            ).rowcount
            _save_checkpoint(conn, tenant_id, int(last.seq), str(last.hash))
        return int(deleted)


def _row(record: AuditRecord) -> dict[str, Any]:
    values = {k: v for k, v in record.as_dict().items() if k != "ids"}
    return {**values, "ids_json": json.dumps(record.ids)}


def _link(entry: AuditEntry, head: ChainHead) -> AuditRecord:
    fields: dict[str, Any] = {
        "seq": head.seq + 1,
        "record_id": new_id("aud"),
        "tenant_id": entry.tenant_id,
        "key_id": entry.key_id,
        "action": entry.action,
        "video_id": entry.video_id,
        "ids": entry.ids,
        "outcome": entry.outcome,
        "client": entry.client,
        "at": entry.at or now_rfc3339(),
    }
    return AuditRecord(**fields, prev_hash=head.hash, hash=chain_hash(head.hash, fields))


def _newest_seq(conn: Connection, tenant_id: str) -> int:
    table = audit_table
    newest = conn.execute(
        select(func.max(table.c.seq)).where(table.c.tenant_id == tenant_id)
    ).scalar()
    return int(newest or 0)


def _head(conn: Connection, tenant_id: str) -> ChainHead:
    table = audit_table
    row = conn.execute(
        select(table.c.seq, table.c.hash)
        .where(table.c.tenant_id == tenant_id)
        .order_by(table.c.seq.desc())
        .limit(1)
    ).first()
    if row is None:
        start_seq, start_hash = _checkpoint(conn, tenant_id)
        return ChainHead(tenant_id, start_seq, start_hash)
    return ChainHead(tenant_id, int(row.seq), str(row.hash))


def _checkpoint(conn: Connection, tenant_id: str) -> tuple[int, str]:
    """Where the tenant's chain starts: retention's checkpoint, or (0, GENESIS)."""
    row = conn.execute(
        select(audit_checkpoints.c.seq, audit_checkpoints.c.hash).where(
            audit_checkpoints.c.tenant_id == tenant_id
        )
    ).first()
    return (int(row.seq), str(row.hash)) if row else (0, GENESIS)


def _save_checkpoint(conn: Connection, tenant_id: str, seq: int, hash_: str) -> None:
    table = audit_checkpoints
    conn.execute(delete(table).where(table.c.tenant_id == tenant_id))
    conn.execute(insert(table).values(tenant_id=tenant_id, seq=seq, hash=hash_, at=now_rfc3339()))


def _chained_tenants(conn: Connection) -> list[str]:
    query = select(audit_table.c.tenant_id).union(select(audit_checkpoints.c.tenant_id))
    return sorted(str(t) for t in conn.execute(query).scalars())


def _walk(conn: Connection, tenant_id: str) -> Iterator[AuditRecord]:
    """The tenant's records in seq order, a page at a time."""
    table, after = audit_table, -1
    while True:
        rows = conn.execute(
            select(table)
            .where(table.c.tenant_id == tenant_id, table.c.seq > after)
            .order_by(table.c.seq)
            .limit(_WALK_PAGE)
        ).mappings()
        records = [AuditRecord.from_row(r) for r in rows]
        yield from records
        if len(records) < _WALK_PAGE:
            return
        after = records[-1].seq


def _problem(record: AuditRecord, seq: int, prev_hash: str) -> str | None:
    """What is wrong with ``record`` where the chain expects ``seq`` after ``prev_hash``
    (records are walked in seq order, so a seq is never below the one expected)."""
    if record.seq != seq:
        gap = f" {seq}" if record.seq == seq + 1 else f"s {seq} to {record.seq - 1}"
        return f"record{gap} missing (deleted)"
    if record.prev_hash != prev_hash:
        return (
            "prev_hash is not the previous record's hash"
            " (a record before it was edited, removed or moved)"
        )
    if record.expected_hash() != record.hash:
        return "its fields do not match its hash (the record was edited or moved)"
    return None


def _verify_chain(conn: Connection, tenant_id: str) -> ChainReport:
    start_seq, prev_hash = _checkpoint(conn, tenant_id)
    seq, checked = start_seq, 0
    for record in _walk(conn, tenant_id):
        problem = _problem(record, seq + 1, prev_hash)
        if problem is not None:
            head = ChainHead(tenant_id, seq, prev_hash)
            return ChainReport(tenant_id, checked, start_seq, head, Break(seq + 1, problem))
        seq, prev_hash, checked = record.seq, record.hash, checked + 1
    return ChainReport(tenant_id, checked, start_seq, ChainHead(tenant_id, seq, prev_hash))
