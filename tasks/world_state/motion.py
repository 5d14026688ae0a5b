"""What a physical track's boxes say about how it moved: its size, speed and heading, and
whether it came in and went out at the picture's edge (or was found and lost inside it).

Boxes are in frame units (0..1 on each axis). A box is AT THE EDGE when its gap to the nearest
side is at most its own width (left, right) or half its height (top, bottom): a person walking
out of the picture is cut by the border or a step from it, while one the tracker lost behind
another person or found again mid-street is not. Ask reads ``ends_at_edge`` to tell leaving
the picture from being lost from view.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tasks.world_state.trajectories import Track


def at_edge(box: npt.NDArray[np.float64]) -> bool:
    """Whether a box (x1, y1, x2, y2) is within its own width of a side or half its height of
    the top or bottom."""
    x1, y1, x2, y2 = (float(v) for v in box)
    width, height = x2 - x1, y2 - y1
    return min(x1, 1.0 - x2) <= width or min(y1, 1.0 - y2) <= height / 2


def measured_motion(track: Track) -> dict[str, float | bool]:
    """Size, speed, heading and edges of a physical track (see ``OBJECTS.attributes``)."""
    boxes = track.boxes.astype(np.float64)
    size = float(np.mean((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])))
    centres = track.centres.astype(np.float64)
    path = float(np.sum(np.linalg.norm(np.diff(centres, axis=0), axis=1))) if len(centres) else 0.0
    seen = float(track.t[-1] - track.t[0])
    heading = float(centres[-1, 0] - centres[0, 0]) if len(centres) else 0.0
    return {
        "size": round(size, 5),
        "speed": round(path / seen, 5) if seen > 0 else 0.0,
        "heading_x": round(heading, 4),
        "starts_at_edge": at_edge(boxes[0]),
        "ends_at_edge": at_edge(boxes[-1]),
    }
