"""Redaction of faces in exports: recall on packaged photos, collateral, and cost per frame.

    .venv/bin/python benchmarks/redaction.py [--faces 100]

lfw_subset's 100 faces (``testkit/face_truth.py``) are pasted at 100, 50 and 25 px
on 1280 px canvases (a clip's largest frame), and at thumbnail scale: the same canvases shrunk to
320 px wide as the sample stage makes thumbnails (area averaging), so a 100 px face becomes 25 px
and a 50 px face 12.5 px. A face is redacted when >= 90 % of its true box's pixels changed
(``testkit/redaction_truth.py``); collateral is the share of the other pixels changed.
Cost: ms per frame of ``Redactor.frame`` (faces and text) at 320 x 180 and 1280 x 720.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tasks.export.redact import Redactor, TextBox
from testkit.redaction_truth import score_redaction

CANVAS = 1280
THUMB_WIDTH = 320
CASES = ((100, None), (50, None), (25, None), (100, THUMB_WIDTH), (50, THUMB_WIDTH))


def recall_table(redactor: Redactor, faces: int) -> None:
    print("| face side (px) | picture | recall | collateral |")
    print("|---|---|---|---|")
    for side, thumb in CASES:
        score = score_redaction(
            lambda image: redactor.frame(image, 0.0)[0], side, CANVAS, thumb, faces=faces
        )
        shown = side * thumb / CANVAS if thumb else side
        picture = f"{thumb} px thumbnail" if thumb else f"{CANVAS} px frame"
        print(f"| {shown:g} | {picture} | {score.recall:.2f} | {score.collateral:.2%} |")


def ms_per_frame(redactor: Redactor, width: int, height: int, repeats: int = 10) -> float:
    rng = np.random.default_rng(0)
    frame = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    redactor.frame(frame, 1.0)  # the model's session is loaded once per process
    start = time.perf_counter()
    for _ in range(repeats):
        redactor.frame(frame, 1.0)
    return (time.perf_counter() - start) / repeats * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faces", type=int, default=100, help="lfw_subset faces to paste")
    args = parser.parse_args()
    text = TextBox("obj_text", (0.1, 0.1, 0.4, 0.2), 0.0, 10.0)
    redactor = Redactor(frozenset({"faces", "text"}), [text])
    recall_table(Redactor(frozenset({"faces"})), args.faces)
    for width, height in ((320, 180), (1280, 720)):
        print(f"{width} x {height}: {ms_per_frame(redactor, width, height):.0f} ms per frame")


if __name__ == "__main__":
    main()
