"""Issue 44's judging set: 22 questions in users' own words on the demo video.

The demo video is ``synthetic.demo_scene()`` (the lobby stretched to 30 s, cut at 18 s), titled
as the onboarding route titles it (``api.routes.onboarding.DEMO_TITLE``). Truth by code, as in
the banks; the target is at least 20 right and none wrong. Four questions are the issue's,
verbatim.
"""

from __future__ import annotations

from synthetic import GroundTruth
from tests.ask.bank import (
    Only,
    Quotes,
    Refuse,
    Says,
    colour_of,
    in_view_s,
    leftward,
    most,
    n_not_dwelling,
    waiter,
)
from tests.ask.test_eval import (
    At,
    Check,
    Count,
    During,
    Lasting,
    Zones,
    dwell_length,
    dwell_zones,
    first_appearance,
    last_disappearance,
    n_cuts,
    n_texts,
    only_cut,
    only_dwell,
    text_span,
)
from tests.ask.words_checks import (
    DIFFERENT_THINGS,
    RECAP,
    NotSo,
    Someone,
    appeared_after_cut,
    no_zone,
    nobody_runs,
)

VERBATIM = (
    "How many different objects moved through the lobby?",
    "Did anybody walk through the lobby?",
    "At what moment does the picture switch to another view?",
    "Summarize what happens in the video.",
)


def _waiter_colour(truth: GroundTruth) -> str:
    return colour_of(waiter(truth))


DEMO_SET: list[tuple[str, Check]] = [
    # counts
    ("How many different objects moved through the lobby?", DIFFERENT_THINGS),
    ("How many signs are there in the lobby?", Count(n_texts)),
    ("How many times does the camera cut to a different shot?", Count(n_cuts)),
    ("How many came in after the view changed?", Count(appeared_after_cut)),
    ("How many crossed the lobby without stopping?", Count(n_not_dwelling)),
    # motion and place words; first and last
    ("Did anybody walk through the lobby?", Someone()),
    ("When did the first person walk in?", At(first_appearance)),
    ("When did the last one leave?", At(last_disappearance)),
    ("Which one walked from right to left?", Only(leftward, "any")),
    ("Which one stayed in the lobby the longest?", Only(most(in_view_s), "span")),
    # waits
    ("How long did someone wait by the door?", Lasting(dwell_length, "still")),
    ("Did anyone loiter in the lobby?", During(only_dwell, "still")),
    ("Where in the picture did they stand and wait?", Zones(dwell_zones)),
    ("What colour was the one who waited?", Says(_waiter_colour)),
    # the cut and the signs
    ("At what moment does the picture switch to another view?", At(only_cut)),
    ("What's written on the signs in the lobby?", Quotes()),
    ("When was the EXIT 3 sign on screen?", During(text_span("EXIT 3"), '"EXIT 3"')),
    # a summary
    ("Summarize what happens in the video.", RECAP),
    # unanswerable
    ("Did anybody run through the lobby?", NotSo(nobody_runs, "run")),
    ("Did anyone stop in the north zone?", NotSo(no_zone("north"), "north")),
    ("Who was the man waiting by the door?", Refuse()),
    ("Was the person by the door angry?", Refuse()),
]
