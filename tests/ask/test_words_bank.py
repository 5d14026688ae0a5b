"""The words bank (``tests/ask/words_bank.py``) and issue 44's judging set, asked with titles.

The figures print one row a development-half question (with ``-s``; only that half's failures
may guide the engine) and each half's figures; the judging set prints all its rows and score.

    .venv/bin/pytest -q -s tests/ask/test_words_bank.py -m slow
"""

from __future__ import annotations

import inspect
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from api.routes.onboarding import DEMO_TITLE
from ask.engine import answer_question
from ask.types import Answer
from ask.world import RunWorld
from synthetic import demo_scene, ground_truth, lobby_scene
from tests.ask.bank import BANK, DEV_EXTRA, Case, half_of, hall_scene, judge
from tests.ask.conftest import Processed, process_scene
from tests.ask.demo_set import DEMO_SET, VERBATIM
from tests.ask.street_bank import STREET_BANK
from tests.ask.test_bank import Judged, figures_of, print_rows
from tests.ask.test_eval import citation_problems
from tests.ask.words_bank import TITLES, WORDS_BANK
from tests.ask.words_checks import nobody_runs, truth_of
from tests.ask.words_dev_extra import WORDS_DEV_EXTRA

# Floors at the level measured when issue 44's engine was done (docs/ask.md has the table).
# First run, on the engine of main 7e100b8 (before it took a title or learned these words):
# held 21/125 answerable right (16.8 %), 4 wrong; dev 23/112 (20.5 %), 2 wrong; judging set
# 10/22 right, 0 wrong. Now: held 119/125 (95.2 %), 2 wrong (unanswerables answered: not
# inspected, held out), 30/32; dev with its extension 276/288 (95.8 %), 0 wrong, 92/92;
# judging set 22/22, 0 wrong (issue 44's target: >= 20 right, 0 wrong).
MIN_ANSWERABLE_RIGHT = {"held": 0.95, "dev": 0.95}
MAX_WRONG = {"held": 2, "dev": 0}
MIN_DEMO_RIGHT, MAX_DEMO_WRONG = 20, 0
TARGET_DEMO_RIGHT = 20


def ask(world: RunWorld, question: str, title: str) -> Answer:
    """``answer_question`` with the video's title once the engine takes one (issue 44 adds the
    keyword); until then without it, so the bank runs against either engine."""
    if "title" in inspect.signature(answer_question).parameters:
        with_title: dict[str, Any] = {"title": title}
        return answer_question(world, question, **with_title)
    return answer_question(world, question)


@pytest.fixture(scope="module")
def hall_titled(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Processed:
    """The question bank's 60 s hall, titled as the words bank asks it."""
    return process_scene(hall_scene(), Path(tmp_path_factory.mktemp("hall")), TITLES["hall"])


@pytest.fixture(scope="module")
def lobby_titled(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Processed:
    """The lobby (``synthetic.lobby_scene``), titled as the words bank asks it."""
    return process_scene(lobby_scene(), Path(tmp_path_factory.mktemp("lobby")), TITLES["lobby"])


@pytest.fixture(scope="module")
def demo_world(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Processed:
    """The onboarding demo video (``synthetic.demo_scene``), titled as the route titles it."""
    return process_scene(demo_scene(), Path(tmp_path_factory.mktemp("demo")), DEMO_TITLE)


# --- The banks' shape (fast: truth only, no video) ------------------------------------------


def test_the_words_bank_is_big_new_and_split_by_the_banks_rule() -> None:
    questions = {c.question for c in WORDS_BANK}
    halves = Counter(half_of(q) for q in questions)
    assert len(questions) >= 150
    assert len({(c.scene, c.question) for c in WORDS_BANK}) == len(WORDS_BANK)
    assert not questions & {c.question for c in [*BANK, *DEV_EXTRA]}
    assert min(halves.values()) >= 0.4 * len(questions)
    assert len({c.question for c in WORDS_BANK if not c.check.answerable}) >= 25
    assert all(c.half == half_of(c.question) for c in WORDS_BANK)


def test_every_case_holds_on_its_scenes_truth() -> None:
    """No check says "CASE IS WRONG" (a premise the scene does not hold), and nothing runs."""
    wrong = [c for c in WORDS_BANK if "CASE IS WRONG" in c.check.expect(truth_of(c.scene))]
    assert wrong == []
    demo = ground_truth(demo_scene())
    assert all("CASE IS WRONG" not in check.expect(demo) for _, check in DEMO_SET)
    assert nobody_runs(demo) and all(nobody_runs(truth_of(s)) for s in TITLES)


def test_the_words_extension_is_new_and_never_held_out() -> None:
    extension = {c.question for c in WORDS_DEV_EXTRA}
    known = {c.question for c in [*WORDS_BANK, *BANK, *DEV_EXTRA]} | {
        c.question for c in STREET_BANK
    }
    assert len(extension) >= 100 and not known & extension
    assert len({(c.scene, c.question) for c in WORDS_DEV_EXTRA}) == len(WORDS_DEV_EXTRA)
    assert all(c.half == "dev" for c in WORDS_DEV_EXTRA)
    assert len({c.question for c in WORDS_DEV_EXTRA if not c.check.answerable}) >= 20
    assert not [c for c in WORDS_DEV_EXTRA if "CASE IS WRONG" in c.check.expect(truth_of(c.scene))]


def test_the_judging_set_is_the_issues() -> None:
    questions = [q for q, _ in DEMO_SET]
    assert len(questions) == len(set(questions)) == 22
    assert set(VERBATIM) <= set(questions)
    assert 3 <= sum(not check.answerable for _, check in DEMO_SET) <= 4


# --- Figures (slow: the real flow processes each scene once) ---------------------------------


def ask_words(runs: dict[str, Processed], half: str) -> list[Judged]:
    """The half's cases; the development half with the extension (``WORDS_DEV_EXTRA``)."""
    judged = []
    for case in [*WORDS_BANK, *WORDS_DEV_EXTRA]:
        if case.half != half:
            continue
        run = runs[case.scene]
        answer = ask(run.world, case.question, TITLES[case.scene])
        trusted = not citation_problems(answer, run)
        judged.append(Judged(case, answer, judge(case.check, answer, run.truth, trusted)))
    return judged


@pytest.mark.slow
@pytest.mark.parametrize("half", ["held", "dev"])
def test_words_figures(half: str, hall_titled: Processed, lobby_titled: Processed) -> None:
    runs = {"hall": hall_titled, "lobby": lobby_titled}
    judged = ask_words(runs, half)
    figures = figures_of(judged)
    if half == "dev":
        print_rows(judged, runs)  # only the development half's failures are read
    print(f"\nwords {half}: {figures}")
    assert figures.right_share >= MIN_ANSWERABLE_RIGHT[half]
    assert figures.wrong <= MAX_WRONG[half]


@pytest.mark.slow
def test_the_judging_set_on_the_demo_video(demo_world: Processed) -> None:
    judged = []
    for question, check in DEMO_SET:
        answer = ask(demo_world.world, question, DEMO_TITLE)
        trusted = not citation_problems(answer, demo_world)
        verdict = judge(check, answer, demo_world.truth, trusted)
        judged.append(Judged(Case("demo", question, check), answer, verdict))
    for j in judged:
        got = j.answer.answer if j.answer.grounded else f"refused: {j.answer.refusal_reason}"
        print(f"{j.verdict:7} {j.case.question!r}")
        if j.verdict != "right":
            print(f"        expected {j.case.check.expect(demo_world.truth)}; got {got[:200]}")
    verdicts = Counter(j.verdict for j in judged)
    print(
        f"\njudging set: {verdicts['right']}/{len(judged)} right, {verdicts['wrong']} wrong "
        f"(target: {TARGET_DEMO_RIGHT} right, none wrong)"
    )
    assert verdicts["right"] >= MIN_DEMO_RIGHT and verdicts["wrong"] <= MAX_DEMO_WRONG
