"""Run costs: what each succeeded run measured, the samples the estimates' cost model is fitted on.

One row per succeeded run, written by the flow right after the run's success is recorded (a
separate, idempotent write: a worker dying between the two loses one sample, never a run). Rows
are kept when the run's artifacts expire: the model learns from this installation's history, not
from what is still held.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from sqlalchemy import RowMapping, insert, select

from storage.catalog.database import Catalog
from storage.catalog.tables import run_costs
from ves.clock import now_rfc3339


@dataclass(frozen=True)
class CostSample:
    """One run's measured figures: the source, what it processed, and the seconds each stage took.

    ``wall_s`` is the flow's time from its first stage to its success recorded; ``start_s`` the
    time from execute to the flow's start (queue, worker poll, process start).
    """

    detector_mode: str
    sample_fps: float
    source_fps: float
    width: int
    height: int
    duration_s: float
    processed_s: float
    frames_decoded: int
    frames_analysed: int
    stages: dict[str, float]
    wall_s: float
    start_s: float = 0.0
    chunks: int = 1
    source_bytes: int = 0  # the whole source's size (its bitrate drives decoding)
    frames_skipped: int = 0  # frames the activity gate did not decode (still stretches)
    run_id: str = ""
    tenant_id: str = ""
    video_id: str = ""
    recorded_at: str = field(default_factory=now_rfc3339)

    @property
    def compute_s(self) -> float:
        return sum(self.stages.values())

    @classmethod
    def from_row(cls, row: RowMapping) -> CostSample:
        values = {k: row[k] for k in cls.__dataclass_fields__ if k != "stages"}
        return cls(stages=json.loads(row["stages_json"]), **values)


class RunCostStore:
    """Record run costs and read the newest ones back."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def record(self, sample: CostSample) -> None:
        """Keep one run's sample (once: a second record of the same run is ignored)."""
        row = {k: v for k, v in asdict(sample).items() if k != "stages"}
        row |= {"stages_json": json.dumps(sample.stages), "compute_s": sample.compute_s}
        with self.catalog.write() as conn:
            exists = select(run_costs.c.run_id).where(run_costs.c.run_id == sample.run_id)
            if conn.execute(exists).first() is None:
                conn.execute(insert(run_costs).values(**row))

    def newest(self, limit: int) -> list[CostSample]:
        """The newest ``limit`` samples of every tenant (the installation's machines are shared)."""
        query = select(run_costs).order_by(run_costs.c.recorded_at.desc()).limit(limit)
        with self.catalog.read() as conn:
            return [CostSample.from_row(r) for r in conn.execute(query).mappings()]

    def last_of_video(self, tenant_id: str, video_id: str) -> CostSample | None:
        """The newest sample of the tenant's video: what a run learnt of its source."""
        query = (
            select(run_costs)
            .where(run_costs.c.tenant_id == tenant_id, run_costs.c.video_id == video_id)
            .order_by(run_costs.c.recorded_at.desc())
            .limit(1)
        )
        with self.catalog.read() as conn:
            row = conn.execute(query).mappings().first()
        return CostSample.from_row(row) if row else None
