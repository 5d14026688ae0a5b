"""People and faces against hand-made truth, and what naming them costs.

    .venv/bin/python benchmarks/classes.py [--seconds 60] [--skip-speed]

1. ``vtest.avi`` (OpenCV's pedestrian sample, fetched from Debian's ``opencv-doc``; see
   ``testkit/vtest.py``) is processed by the real flow in the default mode
   (``motion+person+ocr``) and scored against the 40 hand-labelled frames of
   ``testkit/data/vtest_people.json`` (``testkit/people_truth.py``): person precision and
   recall at IoU 0.5 per frame, for the person detector's own boxes and for the scene graph's
   person objects' boxes, and track-level class accuracy (moving objects whose class is right).
2. Faces: CenterFace on scikit-image's packaged photos (the astronaut's hand-drawn face box;
   lfw_subset's 100 faces and 100 non-faces pasted at known places).
3. Cost: each plugin's ms per frame it looked at (from ``cost.json``), and the flow's x-realtime
   on the 60 s 720p clip of ``benchmarks/pipeline.py`` and on ``vtest.avi`` with ``motion+ocr``,
   ``motion+person+ocr`` and ``motion+person+face+ocr``, each in a fresh process, back to back.
Targets: track-level person accuracy >= 90 % on vtest.avi; the default mode >= 6x realtime on
the 60 s 720p clip. The share of synthetic blobs named ``person`` is measured by
``benchmarks/perception.py`` (its last row).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.pipeline import clip, measure_in_child, run_flow
from testkit.face_truth import ASTRONAUT_FACE, lfw_recall, photo
from testkit.people_truth import load_labels, score_boxes, score_tracks
from testkit.vtest import vtest_path

MODES = ("motion+ocr", "motion+person+ocr", "motion+person+face+ocr")
VTEST_FPS = 10.0
IDENTITIES = Path(__file__).resolve().parent.parent / "testkit" / "data" / "vtest_identities.json"


def vtest_accuracy(path: Path) -> None:
    from prefect.testing.utilities import prefect_test_harness

    from ask.engine import answer_question
    from ask.world import load_world
    from storage.artifacts.layout import read_rows
    from storage.artifacts.reads import ArtifactReader

    with tempfile.TemporaryDirectory() as tmp, prefect_test_harness(server_startup_timeout=180):
        os.environ["VES_DATA_DIR"] = tmp
        _, cost, run_dir = run_flow(Path(tmp), path, {"detector": "motion+person+ocr"})
        asked = answer_question(
            load_world(ArtifactReader(), run_dir, "video", "run"), "How many people appeared?"
        ).answer.split(".")[0]
        detections = read_rows(run_dir, "detections")
        tracks = read_rows(run_dir, "tracks")
        objects = read_rows(run_dir, "objects")
    labels = load_labels()
    raw = score_boxes(labels, [d for d in detections if d["detector"] == "person"], VTEST_FPS)
    named = [t for t in tracks if t["detector"] == "motion" and t["class"] == "person"]
    graph = score_boxes(labels, named, VTEST_FPS)
    moving = score_tracks(labels, [t for t in tracks if t["detector"] == "motion"], VTEST_FPS)
    classes = [o["class"] for o in objects]
    people = sum(len(f.boxes) - int(f.difficult.sum()) for f in labels)
    print(f"vtest.avi, {len(labels)} labelled frames, {people} people (+ difficult ones)")
    print("| boxes | precision | recall |")
    print("|---|---|---|")
    print(f"| person detector (HOG) | {raw.precision:.3f} | {raw.recall:.3f} |")
    print(f"| scene graph person objects | {graph.precision:.3f} | {graph.recall:.3f} |")
    print(
        f"track-level class accuracy: {moving.accuracy:.1%} ({moving.correct}/{moving.scored} "
        f"tracks; {moving.unscored} seen on no labelled frame)  target >= 90%"
    )
    print(f"objects: {classes.count('person')} person, {classes.count('motion')} motion")
    identities = json.loads(IDENTITIES.read_text())
    people = [o for o in objects if o["class"] == "person"]
    distinct = len({o["identity_id"] for o in people})
    print(
        f'"How many people appeared?" -> "{asked}." Truth (testkit/data/vtest_identities.json): '
        f"{identities['distinct_people']} distinct people, visible in 21 stretches (most leave "
        "and come back; some walk in pairs)"
    )
    print(f"person identities {distinct} (target within 1 of 12), person objects {len(people)}")
    for wrong in moving.wrong:
        print(f"  wrong: {wrong}")
    print(f"detectors: {cost['detectors']}")


def face_figures() -> None:
    from tasks.detect.detectors.face import find_faces
    from tasks.geometry import box_iou

    faces = find_faces(photo("astronaut"))
    iou = float(box_iou(faces.boxes, np.array([ASTRONAUT_FACE])).max()) if len(faces.boxes) else 0
    print(f"astronaut: {len(faces.boxes)} face(s), IoU with the hand-drawn box {iou:.2f}")
    for side in (100, 50, 25):
        figures = lfw_recall(lambda image: find_faces(image).boxes, side=side)
        print(
            f"lfw_subset faces pasted at {side} px: recall {figures['recall']:.2f}, "
            f"non-faces with a face found {figures['fp_rate']:.2f}"
        )


def speed(name: str, path: Path, seconds: float, tiny: Path) -> None:
    print(f"\n{name}: x realtime of the flow, and each plugin's ms per frame it looked at")
    print("| mode | flow s | x realtime | person ms/frame | face ms/frame | ocr ms/frame |")
    print("|---|---|---|---|---|---|")
    for mode in MODES:
        done: dict[str, Any] = measure_in_child(path, tiny, {"detector": mode})
        det = done["cost"]["detectors"]

        def per_frame(plugin: str, det: dict[str, Any] = det) -> str:
            stats = det.get(plugin)
            if not stats or not stats["frames"]:
                return "-"
            return f"{1000 * stats['seconds'] / stats['frames']:.1f} ({stats['frames']} frames)"

        flow_s = done["flow_s"]
        print(
            f"| {mode} | {flow_s:.2f} | {seconds / flow_s:.1f}x | {per_frame('person')} | "
            f"{per_frame('face')} | {per_frame('ocr')} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args()
    path = vtest_path()
    vtest_accuracy(path)
    face_figures()
    if not args.skip_speed:
        tiny = clip(2, False)
        speed(f"{args.seconds} s 720p clip", clip(args.seconds, False), args.seconds, tiny)
        speed("vtest.avi (79.5 s, 768x576, crowded)", path, 79.5, tiny)


if __name__ == "__main__":
    main()
