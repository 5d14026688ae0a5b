"""The detector recipe of docs/how-to/develop.md, followed step by step (issue 45 item 6).

Step 1 writes a plugin (a config with its own ``type``, a class with ``name``, ``frames_seen`` and
``detect``); step 2 registers it (one entry in ``REGISTRY``); step 3 names it in a detector mode.
Then a synthetic video whose red square's every position is known goes through the real sample
stage and the real detect stage's core, and the plugin's boxes are checked against that truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
from pydantic import BaseModel, ConfigDict

from synthetic import MovingObject, SceneSpec, ground_truth, write_video
from tasks.detect.detectors import registry
from tasks.detect.detectors.base import FrameView
from tasks.detect.detectors.motion import MotionConfig
from tasks.detect.stage import detect_frames, detections_table
from tasks.detections import Detections
from tasks.sample.sampler import SampleConfig
from tasks.sample.stage import SampledFrames, sample_video
from tests.tasks.sample.test_stage import probe
from ves.detector_mode import DetectorMode
from ves.settings import Settings

RED = (230, 30, 30)
SIZE = (320, 240)
SCENE = SceneSpec(
    width=SIZE[0],
    height=SIZE[1],
    fps=10,
    duration_s=3.0,
    objects=(MovingObject("square", RED, (40, 40), ((0.0, 60.0, 120.0), (3.0, 260.0, 120.0))),),
)


# Step 1: the plugin (in the product: tasks/detect/detectors/red_square.py).
class RedSquareConfig(BaseModel):
    """Settings of the ``red_square`` detector: how red a pixel must be to count."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["red_square"] = "red_square"
    min_red: int = 150
    max_other: int = 100


class RedSquareDetector:
    """One box around the red pixels of each frame (none where there are none)."""

    name = "red_square"
    class_names = ("red_square",)

    def __init__(self, config: RedSquareConfig) -> None:
        self.config = config
        self.frames_seen = 0

    def detect(self, frames: Sequence[FrameView]) -> Detections:
        rows = [(view, box) for view in frames if (box := self._box(view)) is not None]
        self.frames_seen = len(frames)
        if not rows:
            return Detections.empty(self.class_names)
        return Detections(
            boxes=np.array([box for _, box in rows]),
            scores=np.ones(len(rows), dtype=np.float32),
            class_ids=np.zeros(len(rows), dtype=np.int64),
            frame_index=np.array([view.index for view, _ in rows]),
            t_s=np.array([view.t_s for view, _ in rows]),
            class_names=self.class_names,
        )

    def _box(self, view: FrameView) -> tuple[float, float, float, float] | None:
        """The red pixels' extent, normalised ``x1, y1, x2, y2``."""
        rgb = view.thumbnail().astype(np.int16)
        red = (rgb[..., 0] >= self.config.min_red) & (
            rgb[..., 1:].max(axis=2) <= self.config.max_other
        )
        ys, xs = np.nonzero(red)
        if len(xs) < 4:
            return None
        h, w = red.shape
        return (xs.min() / w, ys.min() / h, (xs.max() + 1) / w, (ys.max() + 1) / h)


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Step 2: the plugin's line in ``REGISTRY`` (in the product: written in registry.py)."""
    monkeypatch.setitem(registry.REGISTRY, "red_square", RedSquareDetector)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> SampledFrames:
    root = tmp_path_factory.mktemp("red_square")
    write_video(SCENE, root / "square.mp4")
    source = probe(root / "square.mp4", Settings(data_dir=root))
    return sample_video(source, SampleConfig(5.0, 600.0, 160, 320, 0.3), root / "scratch")


def iou(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    inner = max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(
        0.0, min(a[3], b[3]) - max(a[1], b[1])
    )
    area = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1])
    return inner / (area - inner)


def test_a_registered_plugin_is_built_by_its_type(registered: None) -> None:
    # The product's plugin also joins the ``DetectorConfig`` union (step 2); this one only the
    # registry, so the type checker does not know its config.
    config = RedSquareConfig()
    assert isinstance(registry.create(config), RedSquareDetector)  # type: ignore[arg-type]


def test_the_recipes_plugin_finds_the_square_where_the_truth_says(
    registered: None, sampled: SampledFrames
) -> None:
    # Step 3: a mode naming the plugin, motion first (it gates the rest).
    mode = DetectorMode("motion", ("red_square",))
    configs = (MotionConfig(), RedSquareConfig())
    found, report = detect_frames(sampled, list(sampled.rows), configs, mode)

    assert str(report.mode) == "motion+red_square" and report.fallback_reason is None
    squares = found["red_square"]
    assert report.detectors["red_square"] == {
        "frames": sampled.count,
        "boxes": len(squares),
        "seconds": report.detectors["red_square"]["seconds"],
    }
    truth = ground_truth(SCENE).objects[0]
    assert len(squares) == sampled.count == 15  # the square is on screen in every sampled frame
    scale = np.array([*SIZE, *SIZE], dtype=np.float32)
    for box, t_s in zip(squares.boxes, squares.t_s, strict=True):
        expected = np.array(truth.boxes[round(float(t_s) * SCENE.fps)]) / scale
        assert iou(box, expected) > 0.8, (t_s, box, expected)

    table = detections_table(found)
    assert set(table.column("detector").to_pylist()) == {"motion", "red_square"}
    assert table.column("class").to_pylist().count("red_square") == len(squares)


def test_the_recipe_names_the_files_this_test_follows() -> None:
    recipe = (Path(__file__).parents[3] / "docs" / "how-to" / "develop.md").read_text()
    for step in (
        "tasks/detect/detectors/",
        "REGISTRY",
        "ves/detector_mode.py",
        Path(__file__).name,
    ):
        assert step in recipe, step
