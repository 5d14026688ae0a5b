"""Workspace search latency over 100, 1,000 and 10,000 published runs, as ratios against reading
one video's scene graph.

    .venv/bin/python benchmarks/search.py [--sizes 100 1000 10000] [--seed 1] [--repeats 30]
        [--fresh]

For each size N a workspace is built once and cached in
``benchmarks/.cache/search-n<N>-s<seed>-v<BUILT_BY>/`` (a SQLite catalog and a local blob
store): N videos of the searched tenant, each with one published run of
``testkit.workspace.realistic_run`` (a 10-minute clip's scene graph, ~60 objects, ~8 texts, ~220
events, written as a run writes them with its ``hits.parquet`` and its search index row),
recorded over one week; and N/10 videos of another tenant, which a search must never list nor
read. ``testkit.workspace.plant_many`` builds them (``plant_run`` per video would take about 10
minutes for N = 10,000); the build time is printed and kept.

Then, in this process, one ``search.engine.SearchEngine`` per workspace runs each typical search
(a text substring, an exact text, people in a zone, long dwells, a clock-time window, people by
relevance, a second page, everything) ``--repeats`` times, interleaved with the baseline: the
scene-graph route's read of one video (its objects, events and zones through
``storage.artifacts.reads.ArtifactReader``). Printed: p50, p95 and max per search, how many runs
it read of those listed, and p95 / the baseline's p50. The machine is shared and noisy, so the
ratios are what to compare; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from search.engine import SearchEngine, SearchPage
from search.filters import SearchFilters
from storage.artifacts.blobs import LocalBlobStore
from storage.artifacts.reads import ArtifactReader
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from testkit.workspace import BulkVideo, plant_many, realistic_run
from ves.clock import to_rfc3339

CACHE = Path(__file__).resolve().parent / ".cache"
BUILT_BY = 3  # bumped when a workspace of the same N and seed would be built differently
WEEK_START = datetime(2026, 11, 16, tzinfo=UTC)
NIGHT = datetime(2026, 11, 20, 22, tzinfo=UTC)  # "after 22:00 on 2026-11-20"
BATCH = 500  # videos planted per catalog transaction
SEARCHES: dict[str, SearchFilters] = {
    'text "gate 7"': SearchFilters(text="gate 7", text_match="substring"),
    'exact "GATE 12"': SearchFilters(text="GATE 12", text_match="exact"),
    "person in zone left": SearchFilters(classes=("person",), zones=("left",)),
    "dwell >= 300 s": SearchFilters(event_types=("dwell",), min_dwell_s=300),
    "after 22:00 one day": SearchFilters(
        recorded_after=NIGHT, recorded_before=NIGHT + timedelta(hours=2)
    ),
    "person by relevance": SearchFilters(classes=("person",), sort="relevance"),
    "person, page 2": SearchFilters(classes=("person",)),
    "everything": SearchFilters(),
}
SECOND_PAGE = "person, page 2"


@dataclass(frozen=True)
class Workspace:
    """A built workspace: its catalog, store, the two tenants and one video to read."""

    folder: Path
    tenant_id: str
    other_tenant_id: str
    sample_key: str
    build_s: float

    def open(self) -> tuple[Catalog, LocalBlobStore]:
        return Catalog.open(self.folder / "catalog.sqlite3"), LocalBlobStore(self.folder / "data")


def videos_of(rng: random.Random, count: int, prefix: str) -> Iterator[BulkVideo]:
    """``count`` realistic videos recorded at random times over one week."""
    for i in range(count):
        recorded = WEEK_START + timedelta(seconds=rng.uniform(0, 7 * 86400))
        yield BulkVideo(realistic_run(rng), f"{prefix} {i:05d}", to_rfc3339(recorded))


def build(folder: Path, count: int, seed: int) -> dict[str, Any]:
    """Plant ``count`` videos of one tenant and ``count // 10`` of another into ``folder``."""
    (folder / "data").mkdir(parents=True)
    catalog = Catalog.open(folder / "catalog.sqlite3")
    store = LocalBlobStore(folder / "data")
    tenants = TenantStore(catalog)
    searched, other = tenants.create_tenant("searched"), tenants.create_tenant("other")
    rng = random.Random(seed)
    started = time.perf_counter()
    planted: list[tuple[str, str]] = []
    for tenant_id, total, prefix in (
        (searched.tenant_id, count, "camera"),
        (other.tenant_id, max(10, count // 10), "other"),
    ):
        made = videos_of(rng, total, prefix)
        for first in range(0, total, BATCH):
            batch = [next(made) for _ in range(min(BATCH, total - first))]
            ids = plant_many(catalog, store, tenant_id, batch)
            planted += ids if tenant_id == searched.tenant_id else []
            print(
                f"  planted {first + len(batch):6d} / {total} ({prefix}) "
                f"{time.perf_counter() - started:6.0f} s",
                flush=True,
            )
    video_id, run_id = planted[len(planted) // 2]
    catalog.dispose()
    return {
        "tenant_id": searched.tenant_id,
        "other_tenant_id": other.tenant_id,
        "sample_key": f"artifacts/tenant={searched.tenant_id}/video={video_id}/run={run_id}",
        "build_s": round(time.perf_counter() - started, 1),
    }


def workspace(count: int, seed: int, fresh: bool) -> Workspace:
    """The cached workspace of ``count`` videos and ``seed``, built when absent (or ``fresh``)."""
    folder = CACHE / f"search-n{count}-s{seed}-v{BUILT_BY}"
    record = folder / "workspace.json"
    if fresh:
        shutil.rmtree(folder, ignore_errors=True)
    if not record.exists():
        partial = folder.with_name(f".{folder.name}.partial")
        shutil.rmtree(partial, ignore_errors=True)
        print(f"building {count} videos (+{max(10, count // 10)} of another tenant) in {folder}")
        built = build(partial, count, seed)
        (partial / "workspace.json").write_text(json.dumps(built, indent=2) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
    built = json.loads(record.read_text())
    return Workspace(folder=folder, **built)


def scene_graph_read(reader: ArtifactReader, key: str) -> Callable[[], object]:
    """What the scene-graph route reads of one run: its objects, zones and events."""

    def read() -> object:
        objects = reader.rows(key, "objects", order_by="first_seen_s")
        for obj in objects:
            obj["attributes"] = json.loads(obj["attributes"])
        return objects, reader.rows(key, "zones"), reader.rows(key, "events", "t_s")

    return read


def searching(engine: SearchEngine, tenant_id: str, name: str) -> Callable[[], SearchPage]:
    filters = SEARCHES[name]
    cursor = None
    if name == SECOND_PAGE:
        cursor = engine.search(tenant_id, filters).next_cursor
    return lambda: engine.search(tenant_id, filters, cursor=cursor)


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def p95(samples: list[float]) -> float:
    return (
        statistics.quantiles(samples, n=20, method="inclusive")[18]
        if len(samples) > 1
        else samples[0]
    )


@dataclass(frozen=True)
class Row:
    count: int
    name: str
    samples: list[float]
    read: int
    listed: int
    hits: int


def measure(space: Workspace, count: int, repeats: int) -> tuple[list[Row], list[float]]:
    """Every search ``repeats`` times and the baseline as often, interleaved."""
    catalog, store = space.open()
    engine = SearchEngine(catalog, store)
    reader = ArtifactReader(store)
    calls: dict[str, Callable[[], object]] = {
        name: searching(engine, space.tenant_id, name) for name in SEARCHES
    }
    baseline_call = scene_graph_read(reader, space.sample_key)
    pages = {name: engine.search(space.tenant_id, f) for name, f in SEARCHES.items()}
    check_isolation(engine, space)
    baseline_call()  # warm up DuckDB and the page cache
    samples: dict[str, list[float]] = {name: [] for name in SEARCHES}
    baseline: list[float] = []
    for _ in range(repeats):
        baseline.append(timed(baseline_call))
        for name, call in calls.items():
            samples[name].append(timed(call))
    reader.close()
    catalog.dispose()
    rows = [
        Row(count, name, samples[name], pages[name].read, pages[name].runs, len(pages[name].hits))
        for name in SEARCHES
    ]
    return rows, baseline


def check_isolation(engine: SearchEngine, space: Workspace) -> None:
    """The other tenant's search lists only its own runs; the searched one never sees them."""
    other = engine.search(space.other_tenant_id, SearchFilters(), limit=200)
    mine = engine.search(space.tenant_id, SearchFilters(), limit=200)
    theirs = {h["video_id"] for h in other.hits}
    if theirs & {h["video_id"] for h in mine.hits}:
        raise SystemExit("a search returned another tenant's video")


def print_table(rows: list[Row], baselines: dict[int, list[float]]) -> None:
    print()
    print("| N | search | p50 ms | p95 ms | max ms | runs read / listed | p95 / scene graph |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for count, base in baselines.items():
        b50 = statistics.median(base)
        print(
            f"| {count:,} | baseline: one scene graph | {b50 * 1e3:.1f} | {p95(base) * 1e3:.1f}"
            f" | {max(base) * 1e3:.1f} | 1 / 1 | {p95(base) / b50:.1f}x |"
        )
        for row in (r for r in rows if r.count == count):
            s = row.samples
            print(
                f"| {count:,} | {row.name} | {statistics.median(s) * 1e3:.1f}"
                f" | {p95(s) * 1e3:.1f} | {max(s) * 1e3:.1f} | {row.read:,} / {row.listed:,}"
                f" | {p95(s) / b50:.1f}x |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=(
            "Workspace search p50/p95 over N synthetic published runs, as ratios against reading "
            "one video's scene graph in the same run."
        )
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=30, help="times each search runs")
    parser.add_argument("--fresh", action="store_true", help="rebuild the cached workspaces")
    args = parser.parse_args()
    started = time.perf_counter()
    rows: list[Row] = []
    baselines: dict[int, list[float]] = {}
    for count in args.sizes:
        space = workspace(count, args.seed, args.fresh)
        print(f"N = {count}: workspace built in {space.build_s:.0f} s; measuring", flush=True)
        measured, baselines[count] = measure(space, count, args.repeats)
        rows += measured
    print_table(rows, baselines)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\n(load average {load}; {args.repeats} repeats; total "
        f"{time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
