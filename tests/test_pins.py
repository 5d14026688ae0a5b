"""Every pin below its newest release has a reason, and every reason still holds.

Offline and deterministic: the newest releases are the ones ``constraints-reasons.toml`` records,
the reasons are checked against the installed distributions' metadata and versions
(``testkit.pins``). A new release on PyPI changes nothing here; ``make pins`` is what notices it.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from typing import Any

import pytest

from testkit import pins


def test_every_pin_and_reason_agrees_with_what_is_installed() -> None:
    assert pins.problems() == []


def test_each_exact_pin_of_pyproject_is_the_constraints_pin() -> None:
    constrained = pins.constraint_pins()
    assert {n: v for n, v in pins.pyproject_exact_pins().items() if constrained.get(n) != v} == {}


def _reasons(**held: dict[str, Any]) -> dict[str, Any]:
    """The real reasons file with ``held`` in place of its reasons (``latest`` kept)."""
    reasons = pins.load_reasons()
    reasons["held"] = held
    return reasons


def test_a_requirement_the_installed_distribution_no_longer_has_fails() -> None:
    """prefect requires nothing of pip: holding pip for prefect is a reason that does not hold."""
    reasons = _reasons(pip={"required_by": "prefect"})
    reasons["latest"]["pip"] = "999"
    assert any("allows pip 999" in p for p in pins.problems(reasons))


def test_a_measured_reason_holds_only_for_the_versions_it_was_measured_with() -> None:
    """fastapi held by a behaviour seen with the installed prefect; then prefect moves."""
    newest, prefect = pins.load_reasons()["latest"]["fastapi"], version("prefect")
    measured = {"measured_with": {"fastapi": newest, "prefect": prefect}, "test": "t"}
    assert pins.problems(_reasons(fastapi=measured)) == []
    measured["measured_with"] = {"fastapi": newest, "prefect": "3.0.0"}
    assert pins.problems(_reasons(fastapi=measured)) == [
        f"fastapi: measured with prefect 3.0.0, now {prefect}: measure again"
    ]
    measured["measured_with"] = {"fastapi": "0.151.0", "prefect": prefect}
    assert "measure again" in pins.problems(_reasons(fastapi=measured))[0]


def test_a_pin_below_its_newest_release_without_a_reason_fails() -> None:
    reasons = pins.load_reasons()
    held = next(iter(reasons["held"]))
    del reasons["held"][held]
    assert any(f"{held}==" in p and "has no reason" in p for p in pins.problems(reasons))


@pytest.mark.parametrize(
    ("requires", "expected"),
    [
        (["fastapi<0.151,>=0.139.0"], True),
        (["fastapi<1.0.0,>=0.139.0"], False),
        (["fastapi<0.151; extra == 'ui'"], False),  # only with an extra: not a reason
        (["starlette<0.151"], False),
    ],
)
def test_forbids_reads_unconditional_requirements(requires: list[str], expected: bool) -> None:
    assert pins.forbids(requires, "FastAPI", "0.165.0") is expected


def test_prefect_yaml_names_the_pinned_prefect() -> None:
    """``ves serve`` deploys prefect.yaml; its recorded Prefect version moves with the pin."""
    text = (pins.ROOT / "prefect.yaml").read_text()
    named = re.search(r"^prefect-version: (\S+)$", text, re.MULTILINE)
    assert named is not None and named.group(1) == pins.constraint_pins()["prefect"]
