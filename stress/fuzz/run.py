"""API fuzzing with schemathesis over the served OpenAPI (docs/measured/hardening.md).

``python -m stress.fuzz [--max-examples N]`` serves the real app on a throwaway data folder
(``stress.fuzz.service``), loads its ``/openapi.json`` over HTTP and lets schemathesis' engine
run every phase (the documented examples, coverage of each parameter's edges, random positive
and negative requests, and stateful sequences along the OpenAPI links: add -> execute -> read)
against every operation, as a real tenant. Each response must pass:

- ``not_a_server_error``: no 5xx, ever;
- ``status_code_conformance``: the status is one the operation documents;
- ``content_type_conformance``: the media type is the documented one for that status
  (``application/problem+json`` for errors);
- ``response_schema_conformance``: the body matches the documented model (``Problem`` for
  errors, the route's response model for 2xx);
- ``response_headers_conformance``: documented headers are present and well-formed;
- ``negative_data_rejection``: a request that breaks the schema is refused (4xx), never taken;
- ``positive_data_acceptance``: a request the schema calls valid is taken (2xx) or refused only
  for state (401, 403, 404, 409, 429), but for the few refusals of ``ALLOWED_REFUSALS`` that
  no schema can state;
- ``missing_required_header``, ``unsupported_method`` (405 with ``Allow``),
  ``allow_header_conformance`` and ``ignored_auth`` (no key, or a wrong one, is refused).

When the tenant has a processed video (``stress.fuzz.seed``), every operation on a video is
fuzzed again on that one, so the 2xx answers of its reads are checked too.

It prints ``fuzz: N requests, X 5xx, Y schema violations``, a table of failures, and exits 1 on
any failure.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
import schemathesis
from schemathesis.config import HealthCheck
from schemathesis.core import NotSet
from schemathesis.core.parameters import ParameterLocation
from schemathesis.core.result import Ok
from schemathesis.core.transport import Response
from schemathesis.engine import events
from schemathesis.engine.recorder import ScenarioRecorder

from stress.fuzz.allowed import allowed_refusal
from stress.fuzz.service import FuzzTarget, fuzz_target
from stress.fuzz.wire import valid_on_the_wire

CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    "ignored_auth",
]
PHASES = ["examples", "coverage", "fuzzing", "stateful"]
FULL_MAX_EXAMPLES = 100
SHORT_MAX_EXAMPLES = 5  # the run inside the test suite (tests/stress/test_fuzz.py)
# The operations on one video (and on one webhook endpoint), run again on the seeded ones.
SEEDED_PATHS = r"\{video_id\}|\{webhook_id\}"
# The harness runs no Prefect server and no worker, so /readyz truthfully answers its documented
# 503 (with its Readiness body, which is still checked); that one 5xx is the contract, not a fault.
NOT_READY = "GET /readyz"


@dataclass(frozen=True)
class FuzzFailure:
    """One distinct failure: which operation, which check, what was answered."""

    operation: str
    check: str
    status: int | None
    message: str
    sent: str = ""  # what was sent (query and body), to reproduce it


@dataclass
class FuzzReport:
    """What a run saw: requests sent, 5xx answered, distinct failures and the time taken."""

    requests: int = 0
    server_errors: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    operations: set[str] = field(default_factory=set)
    answered_2xx: set[str] = field(default_factory=set)
    failures: dict[tuple[str, str, str], FuzzFailure] = field(default_factory=dict)
    allowed: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    on_the_wire: Counter[str] = field(default_factory=Counter)  # valid as sent (stress.fuzz.wire)
    spec: dict[str, Any] = field(default_factory=dict)  # the served OpenAPI
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


def load_schema(
    target: FuzzTarget,
    max_examples: int,
    seed: int | None,
    fixed: dict[str, str] | None = None,
    phases: list[str] | None = None,
) -> schemathesis.BaseSchema:
    """The served OpenAPI, configured to act as the target's tenant with the checks above;
    ``fixed``: parameters every request sends with these values (the seeded video's ids)."""
    config = schemathesis.Config()
    # Hypothesis' health checks judge the generator (too slow on a busy machine, too many
    # examples filtered under the seeded run's fixed ids), never the API: they would fail a
    # run that found nothing (the upload route once did, at 3,024 requests).
    config.update(seed=seed, max_failures=None, suppress_health_check=[HealthCheck.all])
    project = config.projects.override
    project.update(
        base_url=target.base_url,
        headers={"Authorization": f"Bearer {target.api_key}"},
        continue_on_failure=True,
        request_timeout=30,
        parameters=fixed,
    )
    project.checks.update(included_check_names=CHECKS)
    # A schema-invalid request is refused by any 4xx the check knows, and by 413 too: an upload
    # declared larger than VES_MAX_UPLOAD_BYTES (the schema's maximum) is payload_too_large.
    rejection = project.checks.negative_data_rejection
    rejection.expected_statuses = [*(rejection.expected_statuses or []), "413"]
    project.phases.update(phases=phases or PHASES)
    project.generation.update(max_examples=max_examples, modes=list(schemathesis.GenerationMode))
    return schemathesis.openapi.from_url(f"{target.base_url}/openapi.json", config=config)


def _record(report: FuzzReport, recorder: ScenarioRecorder) -> None:
    """Count the requests of one finished scenario and keep its distinct failures."""
    for case_id, interaction in recorder.interactions.items():
        report.requests += 1
        if interaction.response is not None:
            report.statuses[interaction.response.status_code] += 1
            if 200 <= interaction.response.status_code < 300:
                case = recorder.cases.get(case_id)  # a stateful step names its own operation
                report.answered_2xx.add(case.value.operation.label if case else recorder.label)
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
            if (operation, check.name, status) == (NOT_READY, "not_a_server_error", 503):
                continue
            case = recorder.cases.get(case_id)
            if check.name == "negative_data_rejection" and _valid_as_sent(
                report.spec, operation, case.value if case else None, sent
            ):
                report.on_the_wire[operation] += 1
                continue
            problem = _problem_of(response)
            if allowed_refusal(operation, check.name, problem):
                report.allowed[operation, check.name, str(problem.get("code"))] += 1
                continue
            account = _sent(case.value if case else None, response)
            report.failures.setdefault(
                (operation, check.name, f"{failure.title} {status} {problem.get('code')}"),
                FuzzFailure(operation, check.name, status, message, account),
            )


def _valid_as_sent(
    spec: dict[str, Any], operation: str, case: schemathesis.Case[Any] | None, sent: Any
) -> bool:
    """Whether a case meant to break only its query was valid as sent (``stress.fuzz.wire``)."""
    meta = case.meta if case is not None else None
    if meta is None or sent is None:
        return False
    data = meta.phase.data
    mutations = getattr(data, "mutations", ())
    where = {m.parameter_location for m in mutations} or {data.parameter_location}
    if where != {ParameterLocation.QUERY}:
        return False
    return valid_on_the_wire(spec, operation, sent.request.uri)


def _problem_of(response: Response | None) -> dict[str, Any]:
    """The problem body of an error answer (empty for anything else)."""
    if response is None or response.status_code < 400:
        return {}
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _sent(case: schemathesis.Case[Any] | None, response: Response | None) -> str:
    """A short account of what ``case`` sent (path parameters, query, body) and of the
    answer's problem ``detail``, to reproduce and understand a failure."""
    if case is None:
        return ""
    body = None if isinstance(case.body, NotSet) else case.body
    parts: dict[str, Any] = {"path": case.path_parameters, "query": case.query, "body": body}
    parts["detail"] = _problem_of(response).get("detail")
    return " ".join(f"{name}={value!r}" for name, value in parts.items() if value)[:400]


def _execute(schema: schemathesis.BaseSchema, report: FuzzReport) -> None:
    """Run the engine over ``schema``, recording into ``report``."""
    for event in schemathesis.engine.from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished | events.FuzzScenarioFinished):
            _record(report, event.recorder)
        elif isinstance(event, events.NonFatalError):
            report.errors.append(f"{event.label}: {event.value!r}")
        elif isinstance(event, events.FatalError):
            report.errors.append(f"fatal: {event.exception!r}")


def _a_span(target: FuzzTarget) -> dict[str, str]:
    """``{"evidence_id": ..., "name": ...}`` of a span of the seeded run's evidence view and a
    thumbnail it links to (none if it has none), so that the 2xx of the routes that name them
    (a thumbnail, a span's review notes) are fuzzed too."""
    assert target.seeded is not None
    url = f"{target.base_url}/api/product/videos/{target.seeded.video_id}/evidence-view"
    headers = {"Authorization": f"Bearer {target.api_key}"}
    view = httpx.get(url, headers=headers, timeout=30)
    for span in view.json().get("spans", []) if view.status_code == 200 else []:
        for frame in span["frames"]:
            name = frame["thumbnail_url"].rsplit("/", 1)[-1]
            return {"evidence_id": span["evidence_id"], "name": name}
    return {}


def run_fuzz(
    target: FuzzTarget,
    max_examples: int,
    seed: int | None = None,
    phases: list[str] | None = None,
) -> FuzzReport:
    """Every phase over every operation of the target, then, when the tenant has a processed
    video, every operation on that video again (a random id is almost never one, so its 2xx
    answers would go unchecked); the report of what happened."""
    report = FuzzReport()
    started = time.monotonic()
    report.spec = httpx.get(f"{target.base_url}/openapi.json", timeout=30).json()
    schema = load_schema(target, max_examples, seed, phases=phases)
    loaded = schema.get_all_operations()
    report.operations = {result.ok().label for result in loaded if isinstance(result, Ok)}
    _execute(schema, report)
    if target.seeded is not None:
        if target.seeded.state != "succeeded":
            report.errors.append(f"the seeded run ended {target.seeded.state}")
        fixed = {"video_id": target.seeded.video_id, "run_id": target.seeded.run_id}
        if target.seeded.webhook_id:
            fixed.update(webhook_id=target.seeded.webhook_id, delivery_id=target.seeded.delivery_id)
        fixed.update(_a_span(target))
        schema = load_schema(target, max(1, max_examples // 2), seed, fixed, phases)
        _execute(schema.include(path_regex=SEEDED_PATHS), report)
    report.seconds = time.monotonic() - started
    return report


def render(report: FuzzReport) -> str:
    """The summary line, then one row per distinct failure and per engine error."""
    lines = [report.summary()]
    statuses = ", ".join(f"{code}: {n}" for code, n in sorted(report.statuses.items()))
    lines.append(f"  statuses: {statuses}; {report.seconds:.0f} s")
    never = sorted(report.operations - report.answered_2xx)
    answered = len(report.operations) - len(never)
    never_text = f" (never: {', '.join(never)})" if never else ""
    lines.append(f"  operations: {len(report.operations)}, answered 2xx: {answered}{never_text}")
    if report.failures:
        lines.append(f"  {'operation':<55} {'check':<30} {'status':>6}  message")
        for failure in report.failures.values():
            message = " ".join(failure.message.split())[:160]
            status = "-" if failure.status is None else str(failure.status)
            lines.append(f"  {failure.operation:<55} {failure.check:<30} {status:>6}  {message}")
            if failure.sent:
                lines.append(f"      sent: {failure.sent}")
    if report.allowed:
        lines.append("  allowed refusals (ALLOWED_REFUSALS):")
        for (operation, check, code), count in sorted(report.allowed.items()):
            lines.append(f"    {operation} {check} {code}: {count}")
    if report.on_the_wire:
        lines.append("  meant to break the query, valid as sent (not counted; stress.fuzz.wire):")
        for operation, count in sorted(report.on_the_wire.items()):
            lines.append(f"    {operation}: {count}")
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
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="skip processing a video first (its reads are then only fuzzed as not ready)",
    )
    parser.add_argument(
        "--phases",
        default=",".join(PHASES),
        help=f"comma-separated phases to run (default: all, {','.join(PHASES)})",
    )
    args = parser.parse_args(argv)
    phases = [phase.strip() for phase in args.phases.split(",") if phase.strip()]
    unknown = sorted(set(phases) - set(PHASES))
    if unknown:
        parser.error(f"unknown phases: {', '.join(unknown)} (known: {', '.join(PHASES)})")
    with fuzz_target(with_run=not args.no_run) as target:
        report = run_fuzz(target, args.max_examples, args.seed, phases)
    print(render(report))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
