"""Which motion boxes the ``person`` detector need not look at again.

Between sweeps the person network looks at crops around the motion boxes. A moving thing that is
no person (a cart, a door, a synthetic blob) would cost a look on every sampled frame for as long
as it moves, so the detector follows its motion boxes itself, frame to frame:

* CHAIN. A motion box continues the chain of a box of the previous sampled frame when one of the
  two lies mostly inside the other (``link``), and neither box has another such link. A box
  linked to two (a merge), two boxes linked to one (a split), a box with no box before it (new,
  or back after an occlusion) starts a new chain.
* SETTLED. A chain is settled once its last ``settle_not_looks`` real looks all found no people
  explaining its box (the rule of ``tasks.geometry.explained_rows``). A settled chain is not
  looked at while its box keeps its size (within ``resize``) and less than its wait has passed
  since its last real look; otherwise it is looked at again, and a look that finds a person
  unsettles it. The wait is ``recheck_s`` after the look that settled it and doubles with each
  recheck that again found nobody, up to ``recheck_max_s``: a thing that held nobody for many
  seconds at the same size costs a look every few seconds, not every second (on the active
  10-minute clip, rechecks of long-settled blobs were two thirds of the target looks). Chains
  that held people never settle (``settle_looks`` is set out of reach): a person's box is
  wanted on every frame, for tracking by detection.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tasks.geometry import INSIDE, explained_rows, inside_share

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


def explained(box: FloatArray, people: FloatArray) -> bool:
    """Whether ``people`` found around ``box`` explain it (the track vote's rule, one row)."""
    if not len(people):
        return False
    inside = inside_share(people, box[None, :]) >= INSIDE
    return bool(explained_rows(inside, people, box[None, :])[0])


class LookPlanner:
    """Follows the tall motion boxes frame by frame; says which to look at (see the module)."""

    def __init__(
        self,
        settle_looks: int,
        resize: float,
        recheck_s: float,
        settle_not_looks: int = 0,
        recheck_max_s: float = 0.0,
    ) -> None:
        self.settle_looks = settle_looks
        self.settle_not_looks = settle_not_looks or settle_looks
        self.resize = resize
        self.recheck_s = recheck_s
        self.recheck_max_s = max(recheck_max_s, recheck_s)
        self.chains: list[Chain] = []

    def follow(self, index: int, boxes: FloatArray) -> list[Chain]:
        """The chain of each box of sampled frame ``index`` (the frames looked at, in order,
        called once each: a held frame, never looked at, does not part a chain)."""
        before = self.chains
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
        if self.recheck_s and t_s - chain.looked_t >= self.wait_s(chain.agreed, needed):
            return False
        size = np.maximum(chain.looked_box[2:] - chain.looked_box[:2], 1e-6)
        change = np.abs((chain.box[2:] - chain.box[:2]) / size - 1.0)
        return bool((change <= self.resize).all())

    def wait_s(self, agreed: list[bool], needed: int) -> float:
        """How long a chain settled by its last ``needed`` looks waits for its next look:
        ``recheck_s``, doubled for each further look in a row that agreed with them."""
        streak = next((n for n, a in enumerate(reversed(agreed)) if a != agreed[-1]), len(agreed))
        rechecks = min(max(streak - needed, 0), 16)
        return float(min(self.recheck_s * 2**rechecks, self.recheck_max_s))

    def looked(self, chain: Chain, t_s: float, people: FloatArray) -> None:
        """Record a real look at ``chain``'s box that found ``people``."""
        chain.agreed.append(explained(chain.box, people))
        chain.looked_box, chain.looked_t = chain.box.copy(), t_s
