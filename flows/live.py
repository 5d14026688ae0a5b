"""Live HLS in the ``process-video`` flow: a live stream processed window by window.

An HLS video whose playlist has no ``#EXT-X-ENDLIST`` is live. The flow then follows it from its
live edge (``tasks.decode.live``) for one window of ``window_s`` (the plan's ``live_window_s`` by
default), analyses the window as a chunk (``tasks.chunk.window``), joins every window of the
session so far, runs the later stages over the joined whole and publishes. With ``follow`` it
goes on: the window's run succeeds and the next window's run starts in the same transaction
(``storage.catalog.runs.live``), and the next window begins at the next media sequence number. The
session ends when a stop is asked (``POST .../runs/{run_id}/stop``: the window closes at once and
publishes what it has), when the plan's processed seconds this month run out (the window stops
before passing them), when the run's duration bound is reached (which bounds the joins), or when
the stream ends (``#EXT-X-ENDLIST``) or stalls for three target durations.

Whatever stops a window, its run fails with a reason (the windows published before stay
published), its work folder goes, and the session's folder of window samples goes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefect import get_run_logger

from flows.later_stages import Analysis, Billing, Stopwatch, run_later_stages
from flows.outcome import fail_run
from flows.reporting import index_for_search
from flows.webhook_dispatch import hand_over
from storage.artifacts.layout import publish, published_bytes, write_rows
from storage.catalog.database import Catalog
from storage.catalog.retention import RetentionStore
from storage.catalog.runs.live import LiveRunStore
from tasks.activity.stage import GatePlan
from tasks.chunk.join import join_chunks
from tasks.chunk.stage import ChunkResult
from tasks.chunk.window import analyse_window, linked
from tasks.context import RunContext, beat_every_s, beating
from tasks.decode.live import LiveFollower, WindowBytes, is_live
from tasks.decode.stage import SourceInfo, hls_limits, note_recorded_at
from tasks.detect.detectors.ocr import OcrConfig
from tasks.detect.stage import record_detections
from tasks.options import live_window
from tasks.retention import own_key
from tasks.sample.frames import FRAMES_DIR, still_stretches
from ves.clock import now_rfc3339
from ves.errors import SourceInvalid, VesError

_STOP_POLL_S = 0.5  # how often a following window looks for a stop while it waits


def live_stream(ctx: RunContext) -> bool:
    """Whether the run's source is a live HLS stream (a playlist that cannot be read is not
    judged here: the decode stage reports it as for any stream)."""
    if ctx.source.kind != "hls" or not ctx.source.url:
        return False
    try:
        return is_live(ctx.source.url, hls_limits(ctx.settings, ctx.max_duration_s))
    except VesError:
        return False


@dataclass
class _Session:
    """The windows of one live session so far (samples kept on the worker between publishes)."""

    folder: Path
    results: list[ChunkResult] = field(default_factory=list)
    sources: list[SourceInfo] = field(default_factory=list)
    digest: Any = field(default_factory=hashlib.sha256)
    run_id: str = ""  # the window's run now (the heartbeat beats it)
    windows: int = 0  # windows begun (one per run of the session)

    def add(self, source: SourceInfo, result: ChunkResult) -> None:
        self.sources.append(source)
        self.results.append(result)
        self.digest.update(source.sha256.encode())

    def source(self, duration_s: float) -> SourceInfo:
        """The session as one source: its duration, the last window's picture."""
        last = self.sources[-1]
        size = sum(s.size_bytes for s in self.sources)
        return dataclasses.replace(
            last, sha256=self.digest.hexdigest(), size_bytes=size, duration_s=duration_s
        )


def follow_live(ctx: RunContext) -> str:
    """Process the live stream of ``ctx``'s run window by window; returns the last publish."""
    live = LiveRunStore(Catalog.from_settings(ctx.settings, migrate=False))
    session = _Session(ctx.settings.work_root / "live" / ctx.run_id, run_id=ctx.run_id)
    assert ctx.source.url is not None
    follower = LiveFollower(
        ctx.source.url,
        hls_limits(ctx.settings, ctx.max_duration_s),
        sleep=lambda seconds: _wait(live, session, seconds),
        stopped=lambda: live.stop_requested(session.run_id),
        lead_s=ctx.settings.chunk_lead_s,
    )
    window_s = live_window(ctx.options.window_s, ctx.plan)
    final = ""
    try:
        with _heartbeat(ctx, session):
            while True:
                run = dataclasses.replace(ctx, run_id=session.run_id)
                final, next_run = _window(run, live, session, follower, window_s)
                if next_run is None:
                    return final
                session.run_id = next_run
    finally:
        shutil.rmtree(session.folder, ignore_errors=True)


def _heartbeat(ctx: RunContext, session: _Session) -> AbstractContextManager[None]:
    """The session's one heartbeat (``tasks.context.beating``), for whichever window run is
    current."""
    name = f"heartbeat-live-{ctx.run_id}"
    return beating(lambda: ctx.runs.beat(session.run_id), beat_every_s(ctx.settings), name)


def _window(
    ctx: RunContext,
    live: LiveRunStore,
    session: _Session,
    follower: LiveFollower,
    window_s: float,
) -> tuple[str, str | None]:
    """One window of the session, published: (its key, the next window's run or None)."""
    index = len(session.results)
    session.windows += 1
    ctx.layout.prepare()
    session.folder.mkdir(parents=True, exist_ok=True)
    try:
        hard = _room(ctx, live, follower)
        _say(ctx, session, "following", 0.0)
        window = follower.window(session.folder / f"window_{index:04d}.bin", window_s, hard)
        if window.segments:
            if window.start_s == 0:  # the session's time 0: only its first window sets the clock
                note_recorded_at(ctx, window.started_at)
            _say(ctx, session, "analysing", 0.5)
            folder = session.folder / f"{index:04d}"
            session.add(*analyse_window(ctx, window, index, folder))
        window.path.unlink(missing_ok=True)  # its samples are kept; the bytes are not needed
        if not session.results:
            raise SourceInvalid("the live HLS stream delivered no segment")
        _say(ctx, session, "publishing", 0.9)
        final = _publish(ctx, session, window, follower.session_s)
    except BaseException as exc:
        fail_run(ctx, exc)
        raise
    return final, _close(ctx, live, follower, window, final)


def _close(
    ctx: RunContext, live: LiveRunStore, follower: LiveFollower, window: WindowBytes, final: str
) -> str | None:
    """Record the window's run as succeeded; start the next window's when the session goes on."""
    kept = published_bytes(ctx.store, final)
    why = _end_reason(ctx, live, follower, window)
    try:
        return _record(ctx, live, window, final, kept, why)
    finally:
        hand_over(ctx.runs.catalog)  # the window's run.succeeded webhooks


def _record(
    ctx: RunContext, live: LiveRunStore, window: WindowBytes, final: str, kept: int, why: str | None
) -> str | None:
    """The catalog's side of ``_close`` (the next window's run id, or None)."""
    logger = get_run_logger()
    if why is None:
        stage = f"window {len(live.chain(ctx.run_id)) + 1}: following"
        next_run = live.follow_on(ctx.run_id, final, window.duration_s, kept, stage)
        if next_run is not None:
            logger.info("window of run %s published; window run %s follows", ctx.run_id, next_run)
            index_for_search(ctx, final)
            _retire_superseded(ctx, live)
            return next_run
    elif ctx.runs.succeed(ctx.run_id, final, window.duration_s, kept):
        logger.info("live session ends after run %s: %s", ctx.run_id, why)
        index_for_search(ctx, final)
        _retire_superseded(ctx, live)
        return None
    ctx.store.delete_prefix(final)  # failed meanwhile: its artifacts must not outlive that
    logger.warning("run %s was failed while it ran; its artifacts were withdrawn", ctx.run_id)
    return None


def _retire_superseded(ctx: RunContext, live: LiveRunStore) -> None:
    """Expire the session's window runs older than the last two: each holds a subset of what
    the newer ones hold, and keeping them all would store the stream's artifacts once per
    window. The previous window is kept, so a reader that just picked it can finish."""
    retention = RetentionStore(live.catalog)
    for old in live.chain(ctx.run_id)[:-2]:
        run = ctx.runs.get(old)
        if run.state != "succeeded" or run.expired_at is not None:
            continue
        key = own_key(ctx.store, run.tenant_id, run.video_id, run.run_id, run.artifacts_path)
        if retention.expire(run.run_id, now_rfc3339()) is not None and key is not None:
            ctx.store.delete_prefix(key)


def _end_reason(
    ctx: RunContext, live: LiveRunStore, follower: LiveFollower, window: WindowBytes
) -> str | None:
    """Why the session ends after this window (None: it follows on)."""
    if not ctx.options.follow:
        return "one window was asked (follow is off)"
    if window.stopped or live.stop_requested(ctx.run_id):
        return "a stop was asked"
    if window.ended:
        return f"the stream {window.ended}"
    segment_s = window.duration_s / max(window.segments, 1)
    if _room(ctx, live, follower, window.duration_s) < max(segment_s, 1e-3):
        return "the plan's processed seconds or the run's duration bound are reached"
    return None


def _room(
    ctx: RunContext, live: LiveRunStore, follower: LiveFollower, pending_s: float = 0.0
) -> float:
    """Seconds the next window may hold: the plan's processed seconds left this month (less
    ``pending_s`` not counted yet) and what is left of the run's duration bound."""
    budget = live.processed_left(ctx.tenant_id, ctx.plan.processed_s_per_month) - pending_s
    return max(0.0, min(budget, ctx.max_duration_s - follower.session_s))


def _publish(ctx: RunContext, session: _Session, window: WindowBytes, total_s: float) -> str:
    """Join every window so far, run the later stages over the whole, publish atomically.

    This run's compute is its own window's sampling and detection, and the publish over all
    windows so far, booked as ``join`` (the join and the later stages: what grows with the
    session).
    """
    own = session.results[-1].seconds if window.segments else {}
    clock = Stopwatch(book_as="join", run_id=ctx.run_id)
    clock.stages.update({stage: own.get(stage, 0.0) for stage in ("sample", "detect")})
    analysis = clock.run("join", lambda: _join(ctx, session, window, total_s))
    run_later_stages(ctx, analysis, clock, Billing.of_window(window.duration_s))
    shutil.rmtree(ctx.layout.scratch_dir / "windows", ignore_errors=True)
    ctx.report("publish")
    return publish(ctx.layout, ctx.store)


def _join(ctx: RunContext, session: _Session, window: WindowBytes, total_s: float) -> Analysis:
    """Every window so far as one video: its samples and boxes written, this window billed."""
    scratch = ctx.layout.scratch_dir
    copies = [linked(r, scratch / "windows" / f"{r.chunk.index:04d}") for r in session.results]
    source = session.source(total_s)
    joined = join_chunks(copies, source, scratch / FRAMES_DIR, OcrConfig().max_gap_s)
    rows = list(joined.sampled.rows)
    write_rows(ctx.layout.out_dir, "frames", rows)
    ctx.runs.processed(ctx.run_id, window.duration_s)  # billed: this window's seconds only
    still = tuple(still_stretches(rows))
    sampled = dataclasses.replace(joined.sampled, rows=(), still_spans=still)
    detected = record_detections(ctx, joined.found, joined.report)
    gate = GatePlan(None, {"used": True, "fallback": None}) if ctx.skip_still else GatePlan.off()
    return Analysis(source, sampled, detected, gate)


def _say(ctx: RunContext, session: _Session, doing: str, progress: float) -> None:
    """The run's stage as a user reads it: ``window 3: following``."""
    ctx.runs.progress(ctx.run_id, f"window {session.windows}: {doing}", progress)


def _wait(live: LiveRunStore, session: _Session, seconds: float) -> None:
    """Sleep ``seconds``, or less when a stop is asked meanwhile."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(_STOP_POLL_S, left))
        if live.stop_requested(session.run_id):
            return
