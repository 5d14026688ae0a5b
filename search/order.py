"""In which order a search reads its runs, and when the runs not read yet cannot rank on its page.

A search reads its runs in batches that grow fourfold (``search.engine.SearchEngine._page``), in
an order where a run's hits can only rank after those of the runs before it, or tie with them:

- **Time order**: runs earliest recorded first. A hit's clock time is its run's recorded time
  plus a time in the video (never negative), so once the page's last hit is earlier than the
  next unread run's recorded time, no unread run can place a hit on the page.
- **Relevance without a text** (confidence first): runs by the highest confidence a hit the
  search finds can have in them (``HitSummary.top_confidence``, by kind and class), highest
  first. Once the page's last hit is more confident than the next unread run's highest, no
  unread run can place one on it (an equal confidence could, by the time order that breaks
  ties, so that run is read).

Relevance with a text (a text matched whole first) reads every run it lists: the catalog lists
only the runs that hold the text.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pyarrow as pa

from search.filters import SearchFilters
from storage.artifacts.hits import top_key
from storage.catalog.search_index import IndexedRun

# Whether no unread run (the first of them given) can rank among ``kept``, the first ``count``
# hits of the runs read so far.
Settled = Callable[[pa.Table, int, IndexedRun], bool]
KINDS = {"event": ("event",), "text": ("text",), "object": ("object", "text")}


def reading_order(
    runs: list[IndexedRun], filters: SearchFilters
) -> tuple[list[IndexedRun], Settled | None]:
    """``runs`` in the order to read them, and the test that stops reading (None: read them
    all at once)."""
    if filters.sort == "time":
        return sorted(runs, key=_recorded_order), _settled_in_time
    if filters.needle is not None:
        return runs, None
    bounds = {r.run_id: top_confidence(r, filters) for r in runs}

    def settled(kept: pa.Table, count: int, unread: IndexedRun) -> bool:
        if kept.num_rows < count:
            return False
        last = kept["confidence"][kept.num_rows - 1].as_py()
        return last is not None and last > bounds[unread.run_id]

    return sorted(runs, key=lambda r: -bounds[r.run_id]), settled


def top_confidence(run: IndexedRun, filters: SearchFilters) -> float:
    """The highest confidence a hit of ``run`` that ``filters`` find can have (infinite when
    the run was indexed without its confidences)."""
    tops = run.summary.top_confidence if run.summary is not None else None
    if tops is None:
        return math.inf
    kinds = KINDS[filters.finds]
    classes = filters.classes
    keys = (
        [top_key(k, c) for k in kinds for c in classes]
        if classes
        else [key for key in tops if key.split("\t", 1)[0] in kinds]
    )
    return max((tops[key] for key in keys if key in tops), default=-math.inf)


def _recorded_order(run: IndexedRun) -> tuple[bool, float]:
    """Runs of known recorded time first, earliest first."""
    epoch = run.recorded_epoch
    return epoch is None, epoch or 0.0


def _settled_in_time(kept: pa.Table, count: int, unread: IndexedRun) -> bool:
    """Whether no hit of ``unread`` or of any run recorded after it can rank among ``kept``,
    the first ``count`` hits in time order of the runs recorded before it."""
    epoch = unread.recorded_epoch
    if kept.num_rows < count or epoch is None:
        return False
    last = kept.slice(kept.num_rows - 1).select(["recorded_epoch", "start_s"]).to_pylist()[0]
    return last["recorded_epoch"] is not None and last["recorded_epoch"] + last["start_s"] < epoch
