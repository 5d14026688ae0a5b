"""Which motion boxes the ``person`` detector must look at, and what a look it skips found.

The track stage names a moving thing by the share of its looks that agreed
(``tasks.track.classes``). On active footage most looks repeat what the thing's earlier looks
said: HOG ran around every tall motion box of every sampled frame, and on a 10-minute 1080p clip
two shapes crossing and stopping cost most of the detect stage. Detection runs before tracking,
so the detector follows its boxes itself, frame to frame:

* CHAIN. A tall motion box continues the chain of a box of the previous sampled frame when one
  of the two lies mostly inside the other (``link``), and neither box has another such link. A
  box linked to two (a merge), two boxes linked to one (a split), a box with no box before it
  (new, or back after an occlusion: a frame without the box ends its chain) starts a new chain.
* SETTLED. A chain is settled once its last ``settle_looks`` real looks were all explained by
  people (by the vote's own rule, ``tasks.track.classes.explained_rows``), or its last
  ``settle_not_looks`` all not: HOG misses a turned or half-hidden person far more often than it
  fires on something else (recall 0.73 against precision 0.98 a look on the street clip). A
  settled chain is not looked at while its box keeps its size (within ``resize``) and less than
  ``recheck_s`` has passed since its last real look; otherwise it is looked at again, and a look
  that disagrees unsettles it. The look a second (``recheck_s``) is what keeps the street clip's
  classes: without it (3 and 6 looks to settle, or 3 and 3) a person whose box stayed settled
  through a stretch HOG would have seen otherwise was left ``motion`` (17 of 20 tracks right
  instead of 18 with every look).
* CARRIED. For a box not looked at, the detector gives what its chain's last look found: none
  for a chain settled as no person; for a settled person, that look's people moved and scaled
  with the box (the same place in the box). Every tall row of a track still has one look's
  answer, so the vote's count of looks and its share are the ones it would get if each skipped
  look had seen what the chain's settled looks saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tasks.geometry import inside_share
from tasks.track.classes import INSIDE, explained_rows

FloatArray = npt.NDArray[np.float32]

LINK = 0.5  # share of one box inside the other for a box to continue a chain


@dataclass
class Chain:
    """One box followed over consecutive sampled frames, and its looks."""

    box: FloatArray  # the box of its last frame
    index: int  # its last sampled frame
    agreed: list[bool] = field(default_factory=list)  # each real look: explained by people
    looked_box: FloatArray | None = None  # the box at its last real look
    looked_t: float = 0.0
    people: FloatArray = field(default_factory=lambda: np.zeros((0, 4), np.float32))
    scores: FloatArray = field(default_factory=lambda: np.zeros(0, np.float32))


def explained(box: FloatArray, people: FloatArray) -> bool:
    """Whether ``people`` found around ``box`` explain it (the track vote's rule, one row)."""
    if not len(people):
        return False
    inside = inside_share(people, box[None, :]) >= INSIDE
    return bool(explained_rows(inside, people, box[None, :])[0])


def relative(people: FloatArray, box: FloatArray) -> FloatArray:
    """``people`` in the coordinates of ``box`` (0..1 across its width and height)."""
    origin = np.tile(box[:2], 2)
    size = np.tile(np.maximum(box[2:] - box[:2], 1e-6), 2)
    return np.asarray((people - origin) / size, np.float32)


def absolute(people: FloatArray, box: FloatArray) -> FloatArray:
    """The inverse of ``relative``: box coordinates back to the frame's."""
    origin = np.tile(box[:2], 2)
    size = np.tile(box[2:] - box[:2], 2)
    return np.asarray(np.clip(people * size + origin, 0.0, 1.0), np.float32)


class LookPlanner:
    """Follows the tall motion boxes frame by frame; says which to look at (see the module)."""

    def __init__(
        self, settle_looks: int, resize: float, recheck_s: float, settle_not_looks: int = 0
    ) -> None:
        self.settle_looks = settle_looks
        self.settle_not_looks = settle_not_looks or settle_looks
        self.resize = resize
        self.recheck_s = recheck_s
        self.chains: list[Chain] = []
        self.looks = 0  # boxes looked at
        self.carried = 0  # boxes answered from their chain's settled looks

    def follow(self, index: int, boxes: FloatArray) -> list[Chain]:
        """The chain of each box of sampled frame ``index`` (frames in order, call once each)."""
        before = [c for c in self.chains if c.index == index - 1]
        chains: list[Chain] = []
        if before and len(boxes):
            old = np.stack([c.box for c in before])
            links = (inside_share(old, boxes) >= LINK) | (inside_share(boxes, old).T >= LINK)
        else:
            links = np.zeros((len(before), len(boxes)), bool)
        for b, box in enumerate(boxes):
            sources = np.flatnonzero(links[:, b])
            if len(sources) == 1 and links[sources[0]].sum() == 1:
                chain = before[sources[0]]
                chain.box, chain.index = box, index
            else:  # new, a merge or a split: nothing known
                chain = Chain(box=box, index=index)
            chains.append(chain)
        self.chains = chains
        return chains

    def settled(self, chain: Chain, t_s: float) -> bool:
        """Whether ``chain``'s box needs no look now."""
        if not chain.agreed or chain.looked_box is None:
            return False
        needed = self.settle_looks if chain.agreed[-1] else self.settle_not_looks
        last = chain.agreed[-needed:]
        if len(last) < needed or len(set(last)) != 1:
            return False
        if self.recheck_s and t_s - chain.looked_t >= self.recheck_s:
            return False
        size = np.maximum(chain.looked_box[2:] - chain.looked_box[:2], 1e-6)
        change = np.abs((chain.box[2:] - chain.box[:2]) / size - 1.0)
        return bool((change <= self.resize).all())

    def looked(self, chain: Chain, t_s: float, people: FloatArray, scores: FloatArray) -> None:
        """Record a real look at ``chain``'s box that found ``people``."""
        self.looks += 1
        chain.agreed.append(explained(chain.box, people))
        chain.looked_box, chain.looked_t = chain.box.copy(), t_s
        chain.people, chain.scores = relative(people, chain.box), scores

    def carry(self, chain: Chain) -> tuple[FloatArray, FloatArray]:
        """What the settled ``chain``'s last look found, placed in its box of now."""
        self.carried += 1
        if not chain.agreed[-1]:
            return np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
        return absolute(chain.people, chain.box), chain.scores
