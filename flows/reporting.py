"""What a run shows on its page in the Prefect UI: the cost report and the event table."""

from __future__ import annotations

from typing import Any

from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from storage.artifacts.blobs import BlobStore
from storage.artifacts.layout import read_published_rows
from storage.catalog.search_index import index_published
from tasks.context import RunContext

_MAX_EVENT_ROWS = 500


def cost_markdown(cost: dict[str, Any]) -> str:
    """``cost.json`` as a short markdown report."""
    stages = "\n".join(f"| {name} | {seconds:.3f} |" for name, seconds in cost["stages"].items())
    fallback = cost["fallback"]["reason"] if cost["fallback"]["used"] else "no"
    return (
        f"# Cost of run {cost['run_id']}\n\n"
        f"- video: `{cost['video_id']}`, detector mode: **{cost['detector_mode']}**,"
        f" fallback: {fallback}\n"
        f"- duration {cost['duration_s']:.1f} s, processed {cost['processed_s']:.1f} s;"
        f" frames decoded {cost['frames']['decoded']}, sampled {cost['frames']['sampled']}\n"
        f"- cost: {cost['cost']['units']} {cost['cost']['unit']} = {cost['cost']['amount']}"
        f" {cost['cost']['currency']}; kept until {cost['retention']['expires_at']}\n\n"
        f"| stage | compute s |\n|---|---|\n{stages}\n"
    )


def index_for_search(ctx: RunContext, key: str) -> None:
    """Record what the succeeded run holds in the search index. Not being indexed now costs a
    search a little more later (it indexes runs it meets unindexed), so it never fails the run."""
    try:
        index_published(ctx.runs.catalog, ctx.store, ctx.tenant_id, ctx.video_id, ctx.run_id, key)
    except Exception:
        get_run_logger().exception("run %s: not indexed for search yet", ctx.run_id)


def publish_prefect_artifacts(
    ctx: RunContext, store: BlobStore, run_key: str, cost: dict[str, Any]
) -> None:
    """Attach the cost report and the events to the flow run (keys are per video)."""
    key = ctx.video_id.replace("_", "-")
    create_markdown_artifact(
        markdown=cost_markdown(cost), key=f"cost-{key}", description="cost.json of the run"
    )
    events = read_published_rows(store, run_key, "events")[:_MAX_EVENT_ROWS]
    table = [
        {k: e[k] for k in ("t_s", "type", "object_id", "zone_id", "confidence")} for e in events
    ]
    create_table_artifact(table=table, key=f"events-{key}", description="Events of the run")
