"""Synthetic videos with known ground truth: moving boxes, signs, cuts and lighting.

``render_frame`` draws a frame, ``ground_truth`` derives the truth from the spec
and ``write_video`` encodes with libx264 so that frame ``i`` shows at ``i / fps``.
``random_scene(seed)`` draws a varied scene, with exact truth, for benchmarks;
``random_case_scene(seed)`` one built around the cases that family lacks (picture changes,
returns, non-rigid shapes, shadows, photos, pairs).
"""

from synthetic.cases import CASES, random_case_scene
from synthetic.encode import write_video
from synthetic.lighting import LightingChange
from synthetic.patterns import OBJECT_PATTERNS
from synthetic.random_scene import RandomScene, random_scene, random_scenes
from synthetic.render import render_frame
from synthetic.scene import (
    Box,
    Frame,
    GroundTruth,
    MovingObject,
    ObjectTruth,
    SceneSpec,
    TextSign,
    TextTruth,
)
from synthetic.scenes import demo_scene, lobby_scene, scale_scene
from synthetic.signs import SIGN_STYLES
from synthetic.truth import ground_truth

__all__ = [
    "CASES",
    "OBJECT_PATTERNS",
    "SIGN_STYLES",
    "Box",
    "Frame",
    "GroundTruth",
    "LightingChange",
    "MovingObject",
    "ObjectTruth",
    "RandomScene",
    "SceneSpec",
    "TextSign",
    "TextTruth",
    "demo_scene",
    "ground_truth",
    "lobby_scene",
    "random_case_scene",
    "random_scene",
    "random_scenes",
    "render_frame",
    "scale_scene",
    "write_video",
]
