"""The dependency audit's verdict on pip-audit's reports (the command runs in make stress)."""

from __future__ import annotations

from stress.dependency_audit import run as audit


def test_an_audit_that_could_reach_no_advisory_data_says_so_and_passes() -> None:
    report = {"dependencies": [{"name": "numpy", "skip_reason": "Dependency not found on PyPI"}]}
    assert audit.summarise(report) == (
        "audit: advisory data unreachable (0 of 1 pins audited), skipped",
        True,
    )


def test_a_finding_fails_unless_it_is_named_as_accepted() -> None:
    report = {
        "dependencies": [
            {"name": "numpy", "version": "2.4.6", "vulns": []},
            {"name": "pillow", "version": "13.0.0", "vulns": [{"id": "GHSA-xxxx"}]},
            {"name": "idna", "skip_reason": "Dependency not found on PyPI"},
        ]
    }
    line, passed = audit.summarise(report)
    assert (line, passed) == ("audit: 2 of 3 pins audited, 1 findings, 1 not accepted", False)
    audit.KNOWN["GHSA-xxxx"] = "only reached through a path the service never takes"
    try:
        assert audit.summarise(report) == (
            "audit: 2 of 3 pins audited, 1 findings, 0 not accepted",
            True,
        )
    finally:
        del audit.KNOWN["GHSA-xxxx"]
