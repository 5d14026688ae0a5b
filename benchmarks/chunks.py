"""Long videos in chunks: the same truth as one piece, and the time on 1 and 2 processes.

    .venv/bin/python benchmarks/chunks.py [--scenes 12] [--seed 0] [--chunk-s 10] [--skip-speed]

1. Truth: random long scenes (``synthetic.random_scene``, 30..60 s, profile "long") are
   processed whole and in chunks of ``--chunk-s`` (10 s: three to six borders per scene, each
   crossed by objects and signs), and both are scored against the scenes' truth as
   ``benchmarks/perception.py`` does. A join that loses, doubles or renames what crosses a
   border shows as a lower score in the chunked column.
2. Speed: the 10 min 1080p noisy clip of ``benchmarks/pipeline.py`` (x264 B-frames, ~4 Mbit/s),
   default detectors, in one run: the plain decode (PyAV, every frame, no conversion); the flow
   whole (``VES_CHUNK_S=0``); in 2 min chunks on Prefect's thread pool (the default, 2 threads);
   and on a local Dask cluster (prefect-dask) of 1 and then 2 worker processes. Each flow runs in
   a fresh process after a warm-up (see ``pipeline.measure_in_child``); the Dask workers'
   memory is not in "peak MiB" (only the flow's process).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._clips import ClipSpec, make_clip
from benchmarks.pipeline import DEFAULT_MODE, clip, measure_in_child, plain_decode
from synthetic import random_scene
from synthetic.summary import summarise

CACHE = Path(__file__).resolve().parent / ".cache" / "perception"
TRUTH_MODE = "motion+ocr"
SPEED_CONFIGS = (
    ("whole (no chunks)", {"VES_CHUNK_S": "0"}),
    ("2 min chunks, threads (default)", {"VES_TASK_RUNNER": "threads"}),
    ("2 min chunks, Dask, 1 process", {"VES_TASK_RUNNER": "dask", "VES_CHUNK_WORKERS": "1"}),
    ("2 min chunks, Dask, 2 processes", {"VES_TASK_RUNNER": "dask", "VES_CHUNK_WORKERS": "2"}),
)


def truth(scenes: int, seed: int, chunk_s: float) -> None:
    """Random long scenes whole and chunked, scored against their truth."""
    from prefect.settings import PREFECT_LOGGING_TO_API_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    from storage.artifacts.reads import ArtifactReader
    from testkit.perception import run_scene

    seeds = [seed * 100_000 + i for i in range(scenes)]
    scores: dict[str, list] = {"whole": [], "chunks": []}
    with (
        tempfile.TemporaryDirectory() as tmp,
        temporary_settings({PREFECT_LOGGING_TO_API_ENABLED: False}),
        prefect_test_harness(server_startup_timeout=180),
    ):
        os.environ["VES_DATA_DIR"] = tmp
        CACHE.mkdir(parents=True, exist_ok=True)
        (Path(tmp) / "media").symlink_to(CACHE)
        reader = ArtifactReader()
        for n, s in enumerate(seeds, 1):
            scene = random_scene(s, profile="long")
            for split, chunk in (("whole", "0"), ("chunks", str(chunk_s))):
                os.environ["VES_CHUNK_S"] = chunk
                done = run_scene(scene, s, TRUTH_MODE, Path(tmp), reader)
                scores[split].append(done.score)
            whole, chunked = scores["whole"][-1], scores["chunks"][-1]
            print(
                f"  [{n}/{len(seeds)}] seed {s} ({scene.spec.duration_s:.0f} s): objects "
                f"{whole.predicted_objects} whole, {chunked.predicted_objects} chunked, "
                f"truth {whole.truth_objects}; texts {whole.predicted_texts} / "
                f"{chunked.predicted_texts}, truth {whole.truth_texts}",
                flush=True,
            )
    rows = {split: summarise(found).rows() for split, found in scores.items()}
    print(f"\ntruth, {scenes} random long scenes, `{TRUTH_MODE}`, {chunk_s:g} s chunks")
    print("| figure | whole | in chunks | target |\n|---|---|---|---|")
    for (figure, whole_v, target), (_, chunked_v, _) in zip(
        rows["whole"], rows["chunks"], strict=True
    ):
        print(f"| {figure} | {whole_v} | {chunked_v} | {target} |")


def speed() -> None:
    """The 10 min 1080p clip: plain decode, then the flow whole, on threads and on Dask."""
    path, tiny = make_clip(ClipSpec(600, 1080)), clip(2, False)
    decode_s, frames = plain_decode(path)
    print(f"\nspeed, {time.strftime('%Y-%m-%d', time.gmtime())}, {os.cpu_count()} cores")
    print(f"10 min 1080p noisy, `{DEFAULT_MODE}`: plain decode {decode_s:.1f} s ({frames} frames)")
    print("| flow | s | flow / plain decode | whole / this | peak MiB |\n|---|---|---|---|---|")
    whole_s = 0.0
    for label, env in SPEED_CONFIGS:
        saved = {name: os.environ.get(name) for name in env}
        os.environ.update(env)
        try:
            result = measure_in_child(path, tiny, {"detector": DEFAULT_MODE}, timeout_s=2400)
        finally:
            for name, value in saved.items():
                os.environ.pop(name) if value is None else os.environ.update({name: value})
        flow_s = result["flow_s"]
        whole_s = whole_s or flow_s
        print(
            f"| {label} | {flow_s:.1f} | {flow_s / decode_s:.2f} | {whole_s / flow_s:.2f} "
            f"| {result['added_mib']:.0f} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenes", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk-s", type=float, default=10.0)
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-truth", action="store_true")
    args = parser.parse_args()
    if not args.skip_truth:
        truth(args.scenes, args.seed, args.chunk_s)
    if not args.skip_speed:
        speed()


if __name__ == "__main__":
    main()
