from __future__ import annotations

import time

from ves.ids import is_id, new_id


def test_ids_carry_their_prefix_and_shape() -> None:
    video_id = new_id("vid")
    assert video_id.startswith("vid_")
    assert is_id(video_id, "vid")
    assert not is_id(video_id, "run")
    assert not is_id("vid_../../etc", "vid")


def test_ids_sort_by_creation_time() -> None:
    first = new_id("vid")
    time.sleep(0.002)
    second = new_id("vid")
    assert first < second


def test_ids_are_unique() -> None:
    assert len({new_id("run") for _ in range(10_000)}) == 10_000
