"""Offline person tracking (``tasks.track.people``) where one box holds two people.

A detector that sees two people close together often gives ONE box for both: a person behind
another, or two merged by its suppression of overlapping boxes. Which person such a box is, or
whether it is a mixture, is not known, so a track must not take it: the box lies on neither
person, and a track that took it would claim a place for its person that is half someone else's.
Scenes and truth as in ``test_people``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tasks.track.people_tracklets import shared_boxes
from tests.tasks.track.test_people import Walker, follows, frames_of, one_frame_each, run, scene

MERGED = frozenset({10, 11})  # frames where the detector gives one box for both walkers


def test_one_box_for_two_people_continues_neither_and_both_are_estimated() -> None:
    # Side by side, a fifth of a width apart (predicted apart: IoU 0 < 0.3), one colour. On the
    # merged frames the only box is both people's (IoU 0.45 with each, near both predictions).
    walkers = [
        Walker(x=0.1, vx=0.1, hidden=MERGED),
        Walker(x=0.22, vx=0.1, y=0.3, hidden=MERGED),
    ]
    merged = [(f, [*walkers[0].box(f)[:2], *walkers[1].box(f)[2:]], 0.9) for f in sorted(MERGED)]
    s = scene(walkers, noise=merged)
    tracks, estimated = run(s, looks=False)  # the box's look would refuse both: places alone
    owner = follows(tracks, s)  # every row on one walker: the merged box is in no track
    assert sorted(owner.values()) == [0, 1]
    for track in owner:
        assert frames_of(tracks, track) == list(range(30))
        rows = tracks.track_ids == track
        assert sorted(tracks.frame_index[rows & estimated].tolist()) == sorted(MERGED)
    one_frame_each(tracks)


def test_a_box_is_shared_only_when_it_is_the_only_one_two_tracklets_could_take() -> None:
    near = np.array([[True, False], [True, False]])  # box 0: the only one for both
    assert shared_boxes(near).tolist() == [True, False]
    near = np.array([[True, False], [True, True]])  # the second could take box 1: assignment
    assert not shared_boxes(near).any()
    near = np.array([[True, False], [False, True]])  # one box each
    assert not shared_boxes(near).any()


def test_a_person_who_walked_out_is_not_linked_to_someone_coming_in_where_they_left() -> None:
    # The first walks out at the right edge (last seen at 2.8 s); 2.4 s later someone dressed
    # alike comes in there, walking back. Near enough for a walk over the gap, but the first's
    # line is out of the picture by then: whoever comes in is a return, not the same track.
    leaving = Walker(x=0.6, vx=0.1, last=14)
    coming = Walker(x=1.06, vx=-0.05, first=26, last=39)  # at x 0.8 at frame 26
    s = scene([leaving, coming], frames=40)
    tracks, estimated = run(s)
    assert follows(tracks, s) == {1: 0, 2: 1}
    assert not estimated.any()


def test_a_box_over_where_a_hidden_person_is_known_to_be_is_neither_persons() -> None:
    # The second walker passes behind the first: hidden on frames 10..16 (1.6 s: its tracklet
    # has ended by frame 15, so pass 1 sees only the first there). On frame 15 the detector
    # gives one box for both, in place of the first's own. Pass 1 gave it to the first; linking
    # shows the second was there all along, so the box is neither's and both are estimated.
    front = Walker(x=0.3, vx=0.05, y=0.35)
    behind = Walker(x=0.9, vx=-0.15, colour=6, hidden=frozenset(range(10, 17)))
    both = [
        *np.minimum(front.box(15), behind.box(15))[:2],
        *np.maximum(front.box(15), behind.box(15))[2:],
    ]
    s = scene([replace(front, hidden=frozenset({15})), behind], noise=[(15, both, 0.9)])
    tracks, estimated = run(s, looks=False)  # the box's look would refuse both: places alone
    owner = follows(tracks, s)
    assert sorted(owner.values()) == [0, 1]
    for track in owner:
        assert frames_of(tracks, track) == list(range(30))
        assert estimated[(tracks.track_ids == track) & (tracks.frame_index == 15)].all()
    one_frame_each(tracks)


def test_a_gap_two_people_were_seen_in_at_once_links_neither_to_who_comes_out() -> None:
    # The first walks behind a sign (hidden from frame 15, seen once more at 18) and stays
    # there; at frame 18 someone else is seen beside her, and from frame 22 that someone walks
    # on along the first's very line. Motion alone would join the first to whoever comes out;
    # two people seen at once in the gap say it could be either, so no track joins them.
    first = Walker(x=0.2, vx=0.1, last=18, hidden=frozenset({15, 16, 17}))
    second = Walker(x=0.2, vx=0.1, first=22)
    beside = (first.box(18) + np.array([0.04, 0, 0.04, 0])).tolist()  # IoU 0.43: two people
    s = scene([first, second], noise=[(18, beside, 0.9)])
    tracks, _ = run(s, looks=False)
    owner = follows(tracks, s)  # fails if a track holds the first and then the second
    assert sorted(set(owner.values())) == [0, 1]
