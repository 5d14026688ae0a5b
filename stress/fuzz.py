"""API fuzzing with schemathesis over the served OpenAPI (README, Hardening).

``python -m stress.fuzz [--max-examples N]`` serves the real app on a throwaway data folder
(``stress.fuzz_service``), loads its ``/openapi.json`` over HTTP and lets schemathesis' engine
run every phase (the documented examples, coverage of each parameter's edges, random positive
and negative requests, and stateful sequences along the OpenAPI links: add -> execute -> read)
against every operation, as a real tenant. Each response must pass:

- ``not_a_server_error``: no 5xx, ever;
- ``status_code_conformance``: the status is one the operation documents;
- ``content_type_conformance``: the media type is the documented one for that status
  (``application/problem+json`` for errors);
- ``response_schema_conformance``: the body matches the documented model (``Problem`` for
  errors, the route's response model for 2xx);
- ``response_headers_conformance``: documented headers are present and well-formed.

It prints ``fuzz: N requests, X 5xx, Y schema violations``, a table of failures, and exits 1 on
any failure.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

import schemathesis
from schemathesis.engine import events
from schemathesis.engine.recorder import ScenarioRecorder

from stress.fuzz_service import FuzzTarget, fuzz_target

CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
]
PHASES = ["examples", "coverage", "fuzzing", "stateful"]
FULL_MAX_EXAMPLES = 100
# The harness runs no Prefect server and no worker, so /readyz truthfully answers its documented
# 503 (with its Readiness body, which is still checked); that one 5xx is the contract, not a fault.
NOT_READY = "GET /readyz"
_READYZ_NOT_READY = {
    "include-path": "/readyz",
    "checks": {"not_a_server_error": {"expected-statuses": ["1XX", "2XX", "3XX", "4XX", "503"]}},
}
SHORT_MAX_EXAMPLES = 5


@dataclass(frozen=True)
class FuzzFailure:
    """One distinct failure: which operation, which check, what was answered."""

    operation: str
    check: str
    status: int | None
    message: str


@dataclass
class FuzzReport:
    """What a run saw: requests sent, 5xx answered, distinct failures and the time taken."""

    requests: int = 0
    server_errors: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    failures: dict[tuple[str, str, str], FuzzFailure] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def schema_violations(self) -> int:
        """Distinct failures other than a 5xx (status, media type, body or headers off)."""
        return sum(1 for f in self.failures.values() if f.check != "not_a_server_error")

    @property
    def ok(self) -> bool:
        return not self.failures and not self.errors and self.server_errors == 0

    def summary(self) -> str:
        return (
            f"fuzz: {self.requests} requests, {self.server_errors} 5xx, "
            f"{self.schema_violations} schema violations"
        )


def load_schema(target: FuzzTarget, max_examples: int, seed: int | None) -> schemathesis.BaseSchema:
    """The served OpenAPI, configured to act as the target's tenant with the checks above."""
    config = schemathesis.Config.from_dict({"operations": [_READYZ_NOT_READY]})
    config.update(seed=seed, max_failures=None)
    project = config.projects.override
    project.update(
        base_url=target.base_url,
        headers={"Authorization": f"Bearer {target.api_key}"},
        continue_on_failure=True,
        request_timeout=30,
    )
    project.checks.update(included_check_names=CHECKS)
    project.phases.update(phases=PHASES)
    project.generation.update(max_examples=max_examples, modes=list(schemathesis.GenerationMode))
    return schemathesis.openapi.from_url(f"{target.base_url}/openapi.json", config=config)


def _record(report: FuzzReport, recorder: ScenarioRecorder) -> None:
    """Count the requests of one finished scenario and keep its distinct failures."""
    for interaction in recorder.interactions.values():
        report.requests += 1
        if interaction.response is not None:
            report.statuses[interaction.response.status_code] += 1
            if interaction.response.status_code >= 500 and recorder.label != NOT_READY:
                report.server_errors += 1
    for case_id, checks in recorder.checks.items():
        sent = recorder.interactions.get(case_id)
        response = sent.response if sent else None
        for check in checks:
            if check.failure_info is None:
                continue
            failure = check.failure_info.failure
            operation = failure.operation or recorder.label
            message = f"{failure.title}: {failure.message}".strip()
            status = response.status_code if response else None
            report.failures.setdefault(
                (operation, check.name, failure.title),
                FuzzFailure(operation, check.name, status, message),
            )


def run_fuzz(target: FuzzTarget, max_examples: int, seed: int | None = None) -> FuzzReport:
    """Run every phase over every operation of the target; the report of what happened."""
    report = FuzzReport()
    started = time.monotonic()
    schema = load_schema(target, max_examples, seed)
    for event in schemathesis.engine.from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished | events.FuzzScenarioFinished):
            _record(report, event.recorder)
        elif isinstance(event, events.NonFatalError):
            report.errors.append(f"{event.label}: {event.value!r}")
        elif isinstance(event, events.FatalError):
            report.errors.append(f"fatal: {event.exception!r}")
    report.seconds = time.monotonic() - started
    return report


def render(report: FuzzReport) -> str:
    """The summary line, then one row per distinct failure and per engine error."""
    lines = [report.summary()]
    statuses = ", ".join(f"{code}: {n}" for code, n in sorted(report.statuses.items()))
    lines.append(f"  statuses: {statuses}; {report.seconds:.0f} s")
    if report.failures:
        lines.append(f"  {'operation':<55} {'check':<30} {'status':>6}  message")
        for failure in report.failures.values():
            message = " ".join(failure.message.split())[:160]
            status = "-" if failure.status is None else str(failure.status)
            lines.append(f"  {failure.operation:<55} {failure.check:<30} {status:>6}  {message}")
    lines.extend(f"  error: {error}" for error in report.errors)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stress.fuzz", description=__doc__)
    parser.add_argument(
        "--max-examples",
        type=int,
        default=FULL_MAX_EXAMPLES,
        help=f"examples per operation and phase (default {FULL_MAX_EXAMPLES}: the full run)",
    )
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed, to replay a run")
    args = parser.parse_args(argv)
    with fuzz_target() as target:
        report = run_fuzz(target, args.max_examples, args.seed)
    print(render(report))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
