"""Synthetic videos with known ground truth: moving boxes, signs and cuts.

``render_frame`` draws a frame, ``ground_truth`` derives the truth from the spec
and ``write_video`` encodes with libx264 so that frame ``i`` shows at ``i / fps``.
"""

from ves.synthetic.encode import write_video
from ves.synthetic.render import render_frame
from ves.synthetic.scene import (
    Box,
    Frame,
    GroundTruth,
    MovingObject,
    ObjectTruth,
    SceneSpec,
    TextSign,
    TextTruth,
    ground_truth,
)
from ves.synthetic.scenes import demo_scene, lobby_scene, scale_scene

__all__ = [
    "Box",
    "Frame",
    "GroundTruth",
    "MovingObject",
    "ObjectTruth",
    "SceneSpec",
    "TextSign",
    "TextTruth",
    "demo_scene",
    "ground_truth",
    "lobby_scene",
    "render_frame",
    "scale_scene",
    "write_video",
]
