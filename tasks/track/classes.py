"""What a moving object is: the class its looks agree on over its whole track.

Motion finds things that move but not what they are; the ``person`` detector looks around the
motion boxes of each sampled frame. One look can miss a person (turned, half hidden, blurred) or
fire on a shadow, so no single look decides: a track is a ``person`` when at least ``min_share``
of its LOOKS (its rows tall enough for the detector to have looked, see
``PersonConfig.min_height``) had a person inside its box. The share is kept as the class's
confidence; a track no look agreed on keeps the physical detector's class (``motion``).

A look agrees only when the people inside the box EXPLAIN it: together they span at least
``MIN_WIDTH_COVER`` of its width. The motion box of a person is about as wide as the person
(arms and legs included), and people walking side by side are found side by side, so real looks
span most of the box; a hit HOG makes on the edge of a big square blob is a person-shaped window
(about 0.4 of its height wide) in a corner of a box as wide as tall, and spans a third of it
(issue 30: a 186x176 rounded blob was named ``person``). The figure comes from HOG's training
geometry (a 40x96 person in its 64x128 window), not from fitting a video.

Faces are objects of their own (tracked like any box), linked to the person whose box holds
them (``part_of``, in the world state).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.geometry import INSIDE, explained_rows, inside_share

FloatArray = npt.NDArray[np.float32]

MIN_SHARE = 0.5  # a majority of the looks


@dataclass(frozen=True)
class ClassVote:
    """The outcome for one track: its class, the share of looks that agreed, how many looks."""

    name: str
    share: float
    looks: int


def agreeing_rows(tracks: Detections, found: Detections) -> npt.NDArray[np.bool_]:
    """Per row of ``tracks``: boxes of ``found`` in the same frame lie mostly inside it and
    together explain its width (see the module docstring)."""
    agree = np.zeros(len(tracks), dtype=bool)
    if not len(found):
        return agree
    for index in np.intersect1d(np.unique(tracks.frame_index), found.frame_index):
        rows = np.flatnonzero(tracks.frame_index == index)
        hits = found.boxes[found.frame_index == index]
        inside = inside_share(hits, tracks.boxes[rows]) >= INSIDE
        agree[rows] = explained_rows(inside, hits, tracks.boxes[rows])
    return agree


def vote_classes(
    tracks: Detections, found: Detections, name: str, min_height: float
) -> dict[int, ClassVote]:
    """The vote of every track of ``tracks`` on class ``name``, from the boxes ``found``."""
    agree = agreeing_rows(tracks, found)
    looked = (tracks.boxes[:, 3] - tracks.boxes[:, 1]) >= min_height
    votes: dict[int, ClassVote] = {}
    for track_id in np.unique(tracks.track_ids):
        rows = tracks.track_ids == track_id
        looks = int((rows & looked).sum())
        share = float((rows & looked & agree).sum()) / looks if looks else 0.0
        own = tracks.class_names[int(np.bincount(tracks.class_ids[rows]).argmax())]
        won = name if looks and share >= MIN_SHARE else own
        votes[int(track_id)] = ClassVote(won, share, looks)
    return votes


def join_classes(parts: Sequence[Detections]) -> Detections:
    """The rows of ``parts`` one after the other, each keeping its class name (the parts may
    name their classes differently: motion tracks and person tracks)."""
    names = tuple(dict.fromkeys(n for part in parts for n in part.class_names)) or ("motion",)
    remapped = [
        Detections(
            p.boxes,
            p.scores,
            np.asarray([names.index(p.class_names[c]) for c in p.class_ids], dtype=np.int64),
            p.frame_index,
            p.t_s,
            p.track_ids,
            names,
            p.texts,
        )
        for p in parts
    ]
    return Detections.concatenate(remapped) if remapped else Detections.empty(names)
