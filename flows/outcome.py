"""How a run ends when something stops it: the failure a user reads, and its bookkeeping.

One place for the runs of a video file (``flows.video_file``) and the window runs of a live
session (``flows.live``): an error of the service's hierarchy keeps its code and detail, a stop
signal under the run says the processing was stopped, and anything else is an internal error
that names the Prefect flow run whose logs tell the rest.
"""

from __future__ import annotations

from prefect.exceptions import TerminationSignal
from prefect.runtime import flow_run

from flows.webhook_dispatch import hand_over
from storage.artifacts.layout import discard_run
from storage.catalog.runs.store import RunFailure
from tasks.context import RunContext
from ves.errors import VesError


def failure_of(exc: BaseException, flow_run_id: str) -> RunFailure:
    """The failure a run that ``exc`` stopped ends with (code and message a user can act on).

    Args:
        exc: what stopped the run.
        flow_run_id: the Prefect flow run an internal error's message names.
    """
    if isinstance(exc, VesError) and type(exc) is not VesError:
        return RunFailure(exc.code, exc.detail)
    if isinstance(exc, TerminationSignal | KeyboardInterrupt | SystemExit):
        # The process is being shut down under the run (a stop signal, which Prefect's engine
        # turns into one of these): the run did nothing wrong.
        how = f" by signal {exc.signal}" if isinstance(exc, TerminationSignal) else ""
        return RunFailure(
            "processing_stopped",
            f"the processing was stopped{how} (the worker or the service was stopped or"
            " killed); execute the video again",
        )
    return RunFailure(
        "internal",
        f"an internal error stopped the processing (flow run {flow_run_id}); it has been logged",
    )


def current_flow_run_id() -> str:
    """The id of the Prefect flow run this code runs in (``unknown`` outside one)."""
    return str(flow_run.get_id() or "unknown")


def fail_run(ctx: RunContext, exc: BaseException) -> None:
    """End ``ctx``'s run ``failed`` for ``exc``: its failure recorded (billed as its plan says),
    its work folder and any uploads removed, its ``run.failed`` webhooks handed over."""
    failure = failure_of(exc, current_flow_run_id())
    ctx.runs.fail(ctx.run_id, failure, ctx.plan.bill_failed_runs)
    discard_run(ctx.layout, ctx.store)
    hand_over(ctx.runs.catalog)  # its run.failed webhooks (written with the failure)
