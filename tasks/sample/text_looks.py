"""Which sampled frames are worth reading text on: the sample stage keeps those at full size.

Reading text costs about 150 to 250 ms a frame here, 50 to 100 times what motion costs, so the
OCR looks at few frames, chosen while the video is decoded (full-size pixels exist only then):

* every refresh (the first frame, each scene change): a new scene shows its text at once (when
  the budget below is spent, the new scene is read as soon as it allows: the scene differs from
  the last look and has settled);
* a frame where part of the picture CHANGED since the last look and has SETTLED (the same for
  the last ``settle_s``): new text (a sign put up, a caption, a screen that changed) appears and
  then stays; a person walking by changes the picture but never settles, and the places they
  left return to what the last look saw (or, where it saw them pass, to what they passed in
  front of). An object that stops (a dwell) triggers one look;
* never two looks closer than ``min_gap_s`` (refreshes excepted), and at most
  ``max_per_minute`` in any minute (a sliding window), refreshes included. A look that the
  budget defers happens as soon as it allows, if the change is still there.

The comparison runs on "glances": grey frames about 120 px wide (4x4 block means of the
thumbnail), split into cells of ``cell`` x ``cell`` glance pixels. A cell changed when its mean
absolute difference to the last look exceeds ``changed_level``; it settled when its difference to
the glance ``settle_s`` earlier is below ``settled_level`` (half a second: the inside of a plain
object moving slowly looks settled from one sampled frame to the next). The glances are also kept
on disk (one small strip per run), so the OCR detector can tell how long each text it read
stayed unchanged.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Glance = npt.NDArray[np.uint8]
GLANCE_BLOCK = 4  # a glance pixel is the mean of GLANCE_BLOCK x GLANCE_BLOCK thumbnail pixels


def glance_of(rgb: npt.NDArray[np.uint8]) -> Glance:
    """The grey glance of an RGB thumbnail (block means; the edges that do not fill a block go)."""
    h = rgb.shape[0] // GLANCE_BLOCK * GLANCE_BLOCK
    w = rgb.shape[1] // GLANCE_BLOCK * GLANCE_BLOCK
    grey = rgb[:h, :w].astype(np.uint16).sum(axis=2)  # 0..765
    blocks = grey.reshape(h // GLANCE_BLOCK, GLANCE_BLOCK, w // GLANCE_BLOCK, GLANCE_BLOCK)
    means = blocks.sum(axis=(1, 3)) // (3 * GLANCE_BLOCK * GLANCE_BLOCK)
    return np.asarray(means, dtype=np.uint8)


def cell_differences(a: Glance, b: Glance, cell: int) -> npt.NDArray[np.float32]:
    """Mean absolute difference of two glances per ``cell`` x ``cell`` cell (partial cells too)."""
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16)).astype(np.float32)
    rows, cols = -(-diff.shape[0] // cell), -(-diff.shape[1] // cell)
    padded = np.full((rows * cell, cols * cell), np.nan, dtype=np.float32)
    padded[: diff.shape[0], : diff.shape[1]] = diff
    return np.asarray(np.nanmean(padded.reshape(rows, cell, cols, cell), axis=(1, 3)), np.float32)


@dataclass(frozen=True)
class LookConfig:
    """When to keep a frame for reading text (see the module docstring)."""

    max_per_minute: int = 12
    min_gap_s: float = 1.0
    cell: int = 6
    changed_level: float = 10.0
    settled_level: float = 3.0
    settle_s: float = 0.5


class LookPlanner:
    """Decides, frame by frame in time order, which sampled frames are text looks."""

    def __init__(self, config: LookConfig = LookConfig()) -> None:
        self.config = config
        self.reference: Glance | None = None  # the glance of the last look
        self.still: Glance | None = None  # each cell as it last stood still for ``settle_s``
        self.behind: Glance | None = None  # ``still`` at the last look: what passers-by hid
        self.recent: deque[tuple[float, Glance]] = deque()  # the last ``settle_s`` of glances
        self.looks: deque[float] = deque()  # times of the looks of the last minute

    def wants(self, t_s: float, glance: Glance, refresh: bool) -> bool:
        """Whether the frame at ``t_s`` is a look; call once per sampled frame, in order."""
        before = self._settle_reference(t_s)
        self.recent.append((t_s, glance))
        if self.reference is None or self.reference.shape != glance.shape:
            refresh = True
        if refresh:
            self.recent.clear()
            self.recent.append((t_s, glance))
            self.still = glance  # no history: nothing is known to be passing
        elif not self._new_and_settled(glance, before):
            return False
        if not self._allowed(t_s, refresh):
            return False
        self.reference, self.behind = glance, self.still
        self.looks.append(t_s)
        return True

    def _settle_reference(self, t_s: float) -> Glance | None:
        """The glance about ``settle_s`` ago (None until that much time has been seen)."""
        while len(self.recent) > 1 and self.recent[1][0] <= t_s - self.config.settle_s + 1e-6:
            self.recent.popleft()
        if not self.recent or self.recent[0][0] > t_s - self.config.settle_s + 1e-6:
            return None
        return self.recent[0][1]

    def _new_and_settled(self, glance: Glance, previous: Glance | None) -> bool:
        """Whether a cell has settled on something new since the last look (keeps ``still``).

        New is unlike what the look saw AND unlike ``behind`` (the same, except where the look
        saw something pass): the places a passer-by leaves return to what they hid, not to what
        the look saw. Compared with the look alone, they would call a look that sees the
        passer-by further on, and so on while they are in view.
        """
        if previous is None or previous.shape != glance.shape:
            return False
        if self.reference is None or self.behind is None or self.still is None:
            return False
        cfg = self.config
        settled = cell_differences(glance, previous, cfg.cell) < cfg.settled_level
        pixels = settled.repeat(cfg.cell, axis=0).repeat(cfg.cell, axis=1)
        self.still = np.where(pixels[: glance.shape[0], : glance.shape[1]], glance, self.still)
        changed = (cell_differences(glance, self.reference, cfg.cell) > cfg.changed_level) & (
            cell_differences(glance, self.behind, cfg.cell) > cfg.changed_level
        )
        return bool((changed & settled).any())

    def _allowed(self, t_s: float, refresh: bool) -> bool:
        while self.looks and self.looks[0] <= t_s - 60.0:
            self.looks.popleft()
        if len(self.looks) >= self.config.max_per_minute:
            return False
        # A new scene is read at once; a change waits for the gap since the last look.
        return refresh or not self.looks or t_s - self.looks[-1] >= self.config.min_gap_s
