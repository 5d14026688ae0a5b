"""The reload clock both HLS readers share: a stall is counted by the waits between reloads."""

from __future__ import annotations

import pytest

from tasks.decode.reload import ReloadClock


@pytest.mark.parametrize(
    ("waits", "strictly", "stalled"),
    [
        ([2.0, 2.0], False, False),
        ([2.0, 2.0, 2.0], False, True),  # three target durations of 2 s
        ([1.0] * 6, True, False),  # the whole-file fetch waits for MORE than three
        ([1.0] * 7, True, True),
    ],
)
def test_a_stall_is_three_target_durations_without_growth(
    waits: list[float], strictly: bool, stalled: bool
) -> None:
    clock = ReloadClock()
    for seconds in waits:
        clock.waited(seconds)
    assert clock.stalled(2.0, strictly=strictly) is stalled
    assert clock.waited_s == sum(waits)


def test_growth_starts_a_stall_over_but_not_the_total_wait() -> None:
    clock = ReloadClock()
    clock.waited(5.0)
    clock.grew()
    clock.waited(1.0)
    assert not clock.stalled(2.0)
    assert (clock.waited_s, clock.since_growth_s) == (6.0, 1.0)
