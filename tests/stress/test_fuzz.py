"""The short fuzz run (a few hundred requests): every operation of the served OpenAPI, as a real
tenant, answers no 5xx and nothing its description does not promise. The full run is
``python -m stress.fuzz`` (docs/measured/hardening.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from schemathesis import checks as schemathesis_checks

import api.openapi_doc
from api.app import create_app
from api.openapi_doc import PROBLEM_EXAMPLES
from stress.fuzz.allowed import ALLOWED_REFUSALS
from stress.fuzz.run import CHECKS, SHORT_MAX_EXAMPLES, render, run_fuzz
from stress.fuzz.service import fuzz_target
from stress.fuzz.wire import valid_on_the_wire
from ves.settings import Settings

pytestmark = pytest.mark.slow


def test_a_short_fuzz_run_finds_nothing() -> None:
    with fuzz_target() as target:
        report = run_fuzz(target, SHORT_MAX_EXAMPLES, seed=15)
    assert report.ok, render(report)
    assert report.requests >= 300, render(report)
    assert len(report.operations) >= 16
    # Every operation's 2xx was checked, but the upload's (fuzzed bytes never match a declared
    # size and hash), /readyz's (no Prefect here: its 503 is checked instead) and a bundle's
    # download and a clip's (the fuzz service's orchestrator takes exports and never makes
    # them: their 409),
    # and a webhook's registration (its URL must resolve to a public address, and the fuzzed
    # service resolves none: no private addresses allowed, and no DNS is relied on here),
    # and a live session's stop (no live stream runs there: its 404 and 409 are checked).
    # and the media source and review copy (a fuzzed token is never a signed one: its 403 is
    # checked).
    never = {
        "GET /api/media/videos/{video_id}/source",
        "HEAD /api/media/videos/{video_id}/source",
        "GET /api/media/videos/{video_id}/runs/{run_id}/review",
        "HEAD /api/media/videos/{video_id}/runs/{run_id}/review",
        "POST /api/product/videos/{video_id}/runs/{run_id}/stop",
        "PUT /api/videos/{video_id}/content",
        "GET /readyz",
        "GET /api/product/videos/{video_id}/exports/{export_id}/bundle",
        "GET /api/product/videos/{video_id}/exports/{export_id}/clips/{evidence_id}",
        "POST /api/product/webhooks",
    }
    assert report.operations - report.answered_2xx <= never, render(report)


# The checks that need more than one answer to judge (a second user, a deleted resource, a
# sequence of calls); every other check schemathesis registers is stateless and must run.
STATEFUL_ONLY = {"use_after_free", "ensure_resource_availability", "object_level_authorization"}


def test_the_fuzz_runs_every_stateless_check() -> None:
    registered = set(schemathesis_checks.CHECKS.get_all_names())
    assert registered >= STATEFUL_ONLY  # the names are still schemathesis's own
    assert set(CHECKS) == registered - STATEFUL_ONLY


def test_the_allowed_refusals_are_few_and_each_documented() -> None:
    assert len({entry.reason for entry in ALLOWED_REFUSALS}) <= 10  # some over several routes
    kinds = Counter(entry.kind for entry in {e.reason: e for e in ALLOWED_REFUSALS}.values())
    assert kinds == {"earlier calls": 4, "the network": 1, "two values": 4, "free text": 1}
    documented = {code for examples in PROBLEM_EXAMPLES.values() for code in examples}
    for entry in ALLOWED_REFUSALS:
        assert entry.check in CHECKS, entry
        assert entry.code in documented, entry  # shown with an example on every such status
        assert len(entry.reason) > 30, entry


def test_the_served_description_documents_problems_headers_and_links() -> None:
    with fuzz_target(with_run=False) as target:
        spec = httpx.get(f"{target.base_url}/openapi.json", timeout=30).json()
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                assert "X-Request-ID" in response["headers"], (method, path, status)
                if int(status) >= 400 and not path.startswith("/readyz"):
                    assert set(response["content"]) == {"application/problem+json"}
                    if int(status) in {402, 404, 409, 429}:  # a state refusal: its example
                        assert response["content"]["application/problem+json"]["examples"]
            if operation.get("security"):
                assert "401" in operation["responses"], (method, path)
    add = spec["paths"]["/api/videos/add"]["post"]["responses"]["201"]
    assert {"GetVideo", "ExecuteVideo", "UploadContent"} <= set(add["links"])
    ids = {op["operationId"] for ops in spec["paths"].values() for op in ops.values()}
    for operations in spec["paths"].values():
        for operation in operations.values():
            for response in operation["responses"].values():
                for link in response.get("links", {}).values():
                    assert link["operationId"] in ids, link
    assert "HTTPValidationError" not in spec["components"]["schemas"]


_REAL_OPENAPI = api.openapi_doc.exact_openapi


def _lying(app: Any, settings: Any = None) -> dict[str, Any]:
    """The real description, except that a problem's ``code`` is said to be a number."""
    spec: dict[str, Any] = _REAL_OPENAPI(app, settings)
    spec["components"]["schemas"]["Problem"]["properties"]["code"] = {"type": "integer"}
    return spec


def test_the_fuzzer_catches_an_answer_its_description_does_not_promise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(api.openapi_doc, "exact_openapi", _lying)
    with fuzz_target(with_run=False) as target:
        report = run_fuzz(target, 2, seed=15)
    assert not report.ok
    checks = {failure.check for failure in report.failures.values()}
    assert "response_schema_conformance" in checks, render(report)
    assert render(report).startswith(f"fuzz: {report.requests} requests, 0 5xx, ")


@pytest.mark.parametrize(
    ("query", "valid"),
    [
        ("class=false&text=true", True),  # text: ['true'] in the case, ?text=true on the wire
        ("class=person&class=text&limit=5&run=all", True),
        ("limit=0", False),  # limit >= 1
        ("limit=abc", False),
        ("title=a&title=b", False),  # one value only
        ("run=some", False),  # latest or all
        ("event=explode", False),  # an enum's items
    ],
)
def test_a_query_is_judged_as_the_service_reads_it(tmp_path: Path, query: str, valid: bool) -> None:
    spec = create_app(Settings(data_dir=tmp_path)).openapi()
    uri = f"http://127.0.0.1/api/product/search?{query}"
    assert valid_on_the_wire(spec, "GET /api/product/search", uri) is valid
