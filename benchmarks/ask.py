"""Ask Video latency on the artifacts of an hour of video, as ratios against a plain read.

    .venv/bin/python benchmarks/ask.py [--fresh] [--reprocess] [--sample-fps N] [--repeats 20]

A 60-minute 320x240 10 fps clip is built by repeating the 20 s lobby story of
``synthetic.lobby_scene`` 180 times (repeat k's objects, its "EXIT 3" sign and its scene cut
shifted by 20*k s; one "LOBBY" sign for the whole hour) and cached as
``benchmarks/.cache/ask-hour.mp4`` (rendering takes a few minutes, once). The real
``process-video`` flow processes it once, in a fresh process under a temporary Prefect server,
with the service's default detector mode (motion+ocr) and sample rate unless ``--sample-fps``
says otherwise; its data folder is kept in ``benchmarks/.cache/ask-hour-data/`` and the published
run folder is recorded in ``run.json`` there, so later runs of this script only measure.

Then, in this process, against one ``storage.artifacts.reads.ArtifactReader``:
  * baseline: a plain DuckDB read of the run's ``events.parquet`` (median of 20);
  * cold: ``ask.world.load_world`` on the run, what the first question on a run pays (median
    of 5);
  * warm: about twenty representative questions (counts, first/last, when, how long, zones,
    texts, a time window, refused ones) each asked ``--repeats`` times with
    ``ask.engine.answer_question`` on the loaded world: p50 and p95 over all of them, and the
    p50 per intent.
Every figure is printed in ms and as a ratio to the baseline measured in the same run: the
machines are shared and noisy, so the ratios are what to compare, and nothing is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ask.engine import answer_question
from ask.types import Answer
from ask.world import RunWorld, load_world
from storage.artifacts.layout import COST
from storage.artifacts.reads import ArtifactReader
from synthetic import MovingObject, SceneSpec, TextSign, lobby_scene, write_video

CACHE = Path(__file__).resolve().parent / ".cache"
VIDEO = CACHE / "ask-hour.mp4"
DATA = CACHE / "ask-hour-data"
RECORD = DATA / "run.json"
REPEATS = 180  # 180 x 20 s = 60 min
STORY_S = 20.0
FLOW_TIMEOUT_S = 3 * 3600

QUESTIONS = (
    "How many objects appeared?",
    "How many objects entered the right zone?",
    "How many times did something stay still?",
    "How many scene changes were there?",
    "When did the first object appear?",
    "When did the last object disappear?",
    "When did someone stay still?",
    "When did an object enter the left zone?",
    'When was "EXIT 3" shown?',
    "How long did someone stay still?",
    "How long was the text LOBBY visible?",
    "Where did objects stay still?",
    "Which zones did the objects enter?",
    "What text is visible?",
    "What does the sign say?",
    'Was "EXIT 3" ever shown?',
    "What happened between 10:00 and 10:30?",
    "What happened at the scene change?",
    "List the objects seen in the first 60 seconds",
    "When were the most people in view, and how many?",
    "Did people walk together?",
    "How many things walked from left to right?",
    "Who stood still for longer than 5 seconds, and where?",
    "How many objects were in view at 30:00?",
    "Did anybody walk through the lobby?",
    "Did a helicopter land?",
    "What colour was the car?",
    "What is the capital of France?",
)


def hour_scene() -> SceneSpec:
    """The lobby story 180 times over, at 320x240 10 fps; repeat k's objects are ``name-k``."""
    lobby = lobby_scene()
    exit_sign = next(s for s in lobby.signs if s.text == "EXIT 3")
    lobby_sign = next(s for s in lobby.signs if s.text == "LOBBY")
    objects: list[MovingObject] = []
    signs: list[TextSign] = [replace(lobby_sign, end_s=REPEATS * STORY_S)]
    cuts: list[float] = []
    for k in range(REPEATS):
        shift = STORY_S * k
        for obj in lobby.objects:
            keys = tuple((t + shift, x, y) for t, x, y in obj.keyframes)
            objects.append(replace(obj, name=f"{obj.name}-{k:03d}", keyframes=keys))
        signs.append(
            replace(exit_sign, start_s=exit_sign.start_s + shift, end_s=exit_sign.end_s + shift)
        )
        cuts.extend(c + shift for c in lobby.scene_cuts)
    return replace(
        lobby,
        width=320,
        height=240,
        fps=10,
        duration_s=REPEATS * STORY_S,
        objects=tuple(objects),
        signs=tuple(signs),
        scene_cuts=tuple(cuts),
    )


@contextmanager
def ticking(say: Callable[[float], str], every_s: float = 30.0) -> Iterator[None]:
    """Print ``say(elapsed)`` every ``every_s`` seconds while the block runs."""
    stop, started = threading.Event(), time.perf_counter()

    def tick() -> None:
        while not stop.wait(every_s):
            print(f"  ... {say(time.perf_counter() - started)}", flush=True)

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def hour_video(fresh: bool) -> Path:
    """The cached hour clip, rendered (a few minutes) when absent or ``fresh``."""
    if VIDEO.exists() and not fresh:
        return VIDEO
    CACHE.mkdir(exist_ok=True)
    partial = VIDEO.with_name(f".{VIDEO.name}.partial")  # where write_video writes meanwhile

    def written(elapsed: float) -> str:
        size = partial.stat().st_size / 2**20 if partial.exists() else 0.0
        return f"{elapsed:4.0f} s, {size:5.1f} MiB encoded"

    print(f"rendering {REPEATS} x {STORY_S:.0f} s lobby = 60 min at 320x240 10 fps to {VIDEO}")
    started = time.perf_counter()
    with ticking(written):
        write_video(hour_scene(), VIDEO)
    size = VIDEO.stat().st_size / 2**20
    print(f"rendered in {time.perf_counter() - started:.0f} s ({size:.1f} MiB)")
    return VIDEO


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def child(path: Path, options: dict[str, Any]) -> None:
    """Process ``path`` once with the real flow (in this fresh process) into ``DATA``."""
    from prefect.testing.utilities import prefect_test_harness

    from flows.process_video import ProcessVideoParams, process_video
    from storage.catalog.database import Catalog
    from storage.catalog.runs.store import RunStore
    from storage.catalog.tenants import TenantStore
    from storage.catalog.videos import NewVideo, VideoStore

    catalog = Catalog.open(DATA / "catalog.sqlite3")
    tenants = TenantStore(catalog)
    tenant = tenants.find_tenant("bench") or tenants.create_tenant("bench")
    videos = VideoStore(catalog)
    video = videos.create(NewVideo(tenant.tenant_id, path.name, "upload", None, {"filename": "x"}))
    videos.complete_upload(
        tenant.tenant_id,
        video.video_id,
        path=str(path),
        sha256=sha256_of(path),
        size=path.stat().st_size,
    )
    runs = RunStore(catalog)
    run = runs.create(tenant.tenant_id, video.video_id, options)

    def progress(elapsed: float) -> str:
        now = runs.get(run.run_id)
        return f"{elapsed:5.0f} s, stage {now.stage or '-'}, {now.progress:4.0%}"

    with prefect_test_harness(server_startup_timeout=180), ticking(progress):
        started = time.perf_counter()
        published = process_video(ProcessVideoParams(run_id=run.run_id))
        flow_s = time.perf_counter() - started
    finished = runs.get(run.run_id)
    if finished.state != "succeeded":
        raise SystemExit(f"run {run.run_id} ended {finished.state}: {finished.error_message}")
    record = {
        "run_dir": str(DATA / published),  # a key of the local store in DATA
        "video_id": video.video_id,
        "run_id": run.run_id,
        "options": options,
        "video_sha256": sha256_of(path),
        "flow_s": round(flow_s, 1),
    }
    print("RESULT " + json.dumps(record), flush=True)


def process_once(path: Path, options: dict[str, Any], reprocess: bool) -> dict[str, Any]:
    """The recorded run of ``path`` with ``options``; processes it (in a child) if there is none."""
    digest = sha256_of(path)
    if RECORD.exists() and not reprocess:
        record: dict[str, Any] = json.loads(RECORD.read_text())
        same = record["video_sha256"] == digest and record["options"] == options
        if same and Path(record["run_dir"], "manifest.json").exists():
            print(f"reusing the processed run {record['run_dir']}")
            return record
    shutil.rmtree(DATA, ignore_errors=True)
    DATA.mkdir(parents=True)
    env = {
        **os.environ,
        "VES_DATA_DIR": str(DATA),
        # The default bounds are 10 min: the settings' and the sandbox plan's (a tenant's plan
        # caps the processed stretch too, so the hour needs both lifted).
        "VES_MAX_DURATION_S": str(REPEATS * STORY_S + 60),
        "VES_PLANS": json.dumps(
            {"sandbox": {"max_video_s": REPEATS * STORY_S + 60, "processed_s_per_month": 1e9}}
        ),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
    }
    log = DATA / "flow.log"
    print(f"processing the hour with the flow (options {options or 'defaults'}); log: {log}")
    with log.open("w") as err:
        child_proc = subprocess.Popen(
            [sys.executable, __file__, "--child", str(path), json.dumps(options)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        assert child_proc.stdout is not None
        result = None
        for line in child_proc.stdout:
            if line.startswith("RESULT "):
                result = json.loads(line.removeprefix("RESULT "))
            else:
                print(line, end="", flush=True)
        child_proc.wait(timeout=FLOW_TIMEOUT_S)
    if child_proc.returncode != 0 or result is None:
        raise SystemExit(f"processing failed (exit {child_proc.returncode}); see {log}")
    RECORD.write_text(json.dumps(result, indent=2) + "\n")
    print(f"published run folder: {result['run_dir']} (flow {result['flow_s']:.0f} s)")
    return dict(result)


def timed(call: Callable[[], object], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def asking(world: RunWorld, question: str) -> Callable[[], Answer]:
    return lambda: answer_question(world, question)


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[18] if len(samples) > 1 else samples[0]


def measure(record: dict[str, Any], repeats: int, show_answers: bool) -> None:
    reader = ArtifactReader()
    run_dir = Path(record["run_dir"])
    video_id, run_id = record["video_id"], record["run_id"]

    def read_events() -> object:
        return reader.rows(run_dir, "events")

    def load() -> RunWorld:
        return load_world(reader, run_dir, video_id, run_id)

    read_events()  # warm up DuckDB and the page cache
    baseline = timed(read_events, 20)
    cold = timed(load, 5)
    world = load()
    answers: dict[str, Answer] = {q: answer_question(world, q) for q in QUESTIONS}
    per_question = {q: timed(asking(world, q), repeats) for q in QUESTIONS}
    cost = reader.document(run_dir, COST)
    reader.close()

    base = statistics.median(baseline)
    warm = [s for samples in per_question.values() for s in samples]
    by_intent: dict[str, list[float]] = defaultdict(list)
    asked: dict[str, int] = defaultdict(int)
    for q, samples in per_question.items():
        by_intent[answers[q].intent].extend(samples)
        asked[answers[q].intent] += 1

    def row(name: str, p50_s: float, p95_s: float | None = None) -> None:
        tail = f"p95 {p95_s * 1e3:8.3f} ms" if p95_s is not None else " " * 15
        print(f"  {name:34s} p50 {p50_s * 1e3:8.3f} ms  {tail}  x{p50_s / base:7.3f}")

    print()
    print(
        f"Ask Video on a {cost['processed_s'] / 60:.0f}-minute run "
        f"(detectors {cost['detector_mode']}, {cost['frames']['analysed']} frames analysed, "
        f"options {record['options'] or 'defaults'}, flow took {record['flow_s']:.0f} s)"
    )
    print(
        f"world: {len(world.physical)} objects + {len(world.texts)} texts, "
        f"{len(world.events)} events, {len(world.spans)} evidence spans, "
        f"zones {', '.join(world.zones)}"
    )
    grounded = sum(a.grounded for a in answers.values())
    print(
        f"questions: {len(QUESTIONS)}, grounded {grounded}, refused {len(QUESTIONS) - grounded}; "
        f"each asked {repeats} times"
    )
    print("  (ratio = p50 / baseline p50)")
    row("baseline: read events.parquet", base, p95(baseline))
    row("cold: load_world (first ask)", statistics.median(cold), p95(cold))
    row(f"warm asks, all ({len(warm)})", statistics.median(warm), p95(warm))
    for intent in sorted(by_intent):
        row(f"  intent {intent} ({asked[intent]} q)", statistics.median(by_intent[intent]))
    if show_answers:
        print()
        for q, a in answers.items():
            verdict = "grounded" if a.grounded else f"refused: {a.refusal_reason}"
            print(f"- [{a.intent}, {verdict}, {len(a.citations)} cited] {q}\n    {a.answer[:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=(
            "Ask Video p50/p95 latency on the artifacts of a 60-minute synthetic video, as ratios "
            "against a plain DuckDB read of its events measured in the same run."
        )
    )
    parser.add_argument(
        "--fresh", action="store_true", help="re-render the hour clip (and so reprocess it)"
    )
    parser.add_argument(
        "--reprocess", action="store_true", help="process the cached clip again with the flow"
    )
    parser.add_argument(
        "--sample-fps",
        type=float,
        default=None,
        help="frames analysed per second by the flow (default: the service's, 5)",
    )
    parser.add_argument(
        "--repeats", type=int, default=20, help="times each question is asked (default 20)"
    )
    parser.add_argument(
        "--show-answers", action="store_true", help="print each question's intent and answer"
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), json.loads(args.child[1]))
        return
    started = time.perf_counter()
    path = hour_video(args.fresh)
    options = {} if args.sample_fps is None else {"sample_fps": args.sample_fps}
    record = process_once(path, options, args.reprocess or args.fresh)
    measure(record, args.repeats, args.show_answers)
    print(f"\n(total {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
