"""The guardrail: a claim is said only if its spans exist and carry every number it writes."""

from __future__ import annotations

import pytest

from ask.guardrail import claim_problems, passing, written_numbers
from ask.types import Citation, Claim

SPANS = {
    "ev_a": Citation("ev_a", 0.8, 8.2),
    "ev_b": Citation("ev_b", 1.4, 11.6),
    "ev_c": Citation("ev_c", 13.4, 19.2),
}
A, B, C = SPANS["ev_a"], SPANS["ev_b"], SPANS["ev_c"]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("An object appeared at 0.8 s.", [0.8]),
        ("3 objects appeared.", [3.0]),
        ("It stayed still for 6.0 s, from 3.4 s to 9.4 s.", [6.0, 3.4, 9.4]),
        ("The scene changed at 1:05.2.", [65.2]),
        ('The text "EXIT 3" was seen.', []),  # quoted text is the text read, not a claim
        ("A moving object (obj_01m7zd8x43) appeared.", []),  # ids are no numbers
    ],
)
def test_written_numbers(text: str, numbers: list[float]) -> None:
    assert written_numbers(text) == pytest.approx(numbers)


def test_a_true_claim_passes() -> None:
    claims = [
        Claim("3 objects appeared.", (A, B, C), counts=(3,), counted=3),
        Claim("An object appeared at 0.8 s.", (A,), times=(0.8,)),
        Claim("It was in view for 7.4 s, from 0.8 s to 8.2 s.", (A,), (0.8, 8.2), durations=(7.4,)),
    ]
    kept, problems = passing(claims, SPANS)
    assert (kept, problems) == (claims, [])


@pytest.mark.parametrize(
    ("claim", "problem"),
    [
        (Claim("An object appeared at 0.8 s.", (), times=(0.8,)), "cites nothing"),
        (
            Claim("An object appeared at 0.8 s.", (Citation("ev_zzz", 0.8, 8.2),), times=(0.8,)),
            "not a span of this run",
        ),
        (  # a known id with other times is a forgery, not a citation
            Claim("An object appeared at 0.8 s.", (Citation("ev_a", 0.0, 99.0),), times=(0.8,)),
            "not a span of this run",
        ),
        (Claim("An object appeared at 12.0 s.", (A,), times=(12.0,)), "outside its spans"),
        (Claim("4 objects appeared.", (A, B, C), counts=(4,), counted=4), "count 4 but 3 spans"),
        (Claim("3 objects appeared.", (A, B), counts=(3,), counted=3), "count 3 but 2 spans"),
        (Claim("It appeared at 0.8 s, 2 times.", (A,), times=(0.8,)), "writes 2.0"),
        (
            Claim("It stayed for 9.0 s.", (A,), times=(0.8, 8.2), durations=(9.0,)),
            "duration 9.0",
        ),
        (Claim("An object appeared at 0.9 s.", (A,), times=(0.8,)), "writes 0.9"),
    ],
)
def test_a_claim_that_its_evidence_does_not_carry_is_dropped(claim: Claim, problem: str) -> None:
    assert any(problem in p for p in claim_problems(claim, SPANS)), claim_problems(claim, SPANS)
    kept, problems = passing([claim, Claim("Fine at 0.8 s.", (A,), times=(0.8,))], SPANS)
    assert [c.text for c in kept] == ["Fine at 0.8 s."] and problems
