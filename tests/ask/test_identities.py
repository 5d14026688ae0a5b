"""Counting things or their appearances, on a world whose identities are known: person A
walks through, leaves and comes back; person B walks through once; a sign is read."""

from __future__ import annotations

import pytest

from ask.engine import answer_question
from ask.identities import APPEARANCES, IDENTITIES, counting_of, identities_of
from ask.types import Citation, Coverage
from ask.world import RunWorld, Thing

SPANS = {
    "ev_a1": Citation("ev_a1", 1.0, 9.0),
    "ev_b": Citation("ev_b", 4.0, 12.0),
    "ev_a2": Citation("ev_a2", 20.0, 30.0),
    "ev_t": Citation("ev_t", 2.0, 6.0),
}


def person(object_id: str, first: float, last: float, identity: str | None) -> Thing:
    evidence = "ev_" + object_id.split("_")[1]
    return Thing(object_id, "person", first, last, 0.9, (), None, evidence, identity_id=identity)


def street(identities: tuple[str | None, str | None, str | None]) -> RunWorld:
    a1, b, a2 = identities
    things = [
        person("obj_a1", 1.0, 9.0, a1),
        person("obj_b", 4.0, 12.0, b),
        person("obj_a2", 20.0, 30.0, a2),
        Thing("obj_t", "text", 2.0, 6.0, 0.9, (), "EXIT", "ev_t"),
    ]
    coverage = Coverage(30.0, 150, "motion+person+ocr")
    known = frozenset({"person", "motion", "text"})
    return RunWorld("vid_1", "run_1", coverage, things, [], SPANS, [], known)


RETURNED = street(("idn_a", "idn_b", "idn_a"))


@pytest.mark.parametrize(
    ("question", "counting"),
    [
        ("How many people appeared?", IDENTITIES),
        ("How many different people appeared?", IDENTITIES),
        ("how many people were there", IDENTITIES),
        ("how many people passed by", IDENTITIES),
        ("How many times did people pass?", APPEARANCES),
        ("how many times did people appear", APPEARANCES),
        ("how many times did someone enter", APPEARANCES),
        ("how many appearances were there", APPEARANCES),  # of any thing: objects
    ],
)
def test_a_count_of_things_says_what_it_counted(question: str, counting: str) -> None:
    answer = answer_question(RETURNED, question)
    assert answer.grounded and answer.interpreted is not None
    assert answer.interpreted["counted"] == counting
    head, second = answer.claims[0], answer.claims[1]
    if "objects" in question or "appearances" in question:
        assert head.text == "Objects came into view 3 times." and head.counts == (3,)
        assert second.text == "That is 2 different objects."
    elif counting == IDENTITIES:
        assert head.text == "2 different people appeared." and head.counts == (2,)
        assert {c.evidence_id for c in head.citations} == {"ev_a1", "ev_b"}  # first appearances
        assert second.counts == (3,) and "came into view 3 times" in second.text
    else:
        assert head.text == "People came into view 3 times." and head.counts == (3,)
        assert second.text == "That is 2 different people." and second.counts == (2,)


def test_where_nothing_came_back_the_count_reads_as_before() -> None:
    answer = answer_question(street(("idn_a", "idn_b", "idn_c")), "How many people appeared?")
    assert answer.answer.startswith("3 people appeared.")
    assert answer.interpreted is not None and answer.interpreted["counted"] == IDENTITIES


def test_objects_of_older_runs_without_identities_count_once_each() -> None:
    world = street((None, None, None))
    assert [len(group) for group in identities_of(world.physical)] == [1, 1, 1]
    assert answer_question(world, "How many people appeared?").answer.startswith("3 people")


def test_other_counts_carry_no_counted() -> None:
    for question in ("How many signs were there?", "How many times did a person stop?"):
        answer = answer_question(RETURNED, question)
        assert answer.interpreted is None or "counted" not in answer.interpreted


def test_counting_of_reads_the_words() -> None:
    assert counting_of("how often did people appear") == APPEARANCES
    assert counting_of("how many people appeared") == IDENTITIES


def test_the_summary_counts_as_the_count_answer_does() -> None:
    """One count everywhere: A came back, so 2 different things came into view 3 times, in the
    summary as in "how many objects appeared?" (it once said 3 objects there)."""
    summary = answer_question(RETURNED, "Summarize what happens in the video.")
    counted = answer_question(RETURNED, "How many objects appeared?")
    assert [c.counts for c in summary.claims[:2]] == [(2,), (3,)]
    assert [c.counts for c in counted.claims[:2]] == [(2,), (3,)]
    assert summary.claims[0].text == counted.claims[0].text == "2 different objects appeared."
