"""Tenant isolation matrix: every route, called with tenant B's key on tenant A's ids, answers
exactly as for an unknown id.

    .venv/bin/python -m stress.isolation

The matrix is generated from the app's route table (``app.routes``), so a new route is covered
without a line here: each path (or query) parameter is filled from ``FILLERS`` by its name,
with A's ids (and B's own, mixed with A's: B's video with A's run, say) and, as the control,
well-formed ids nobody has. A route with a parameter ``FILLERS`` does not know, a write route
without ids that is not in ``NO_ID_WRITES``, or a cell whose control does not answer 404 (a
body the route needs and ``BODIES`` lacks) fails the check: it is noticed, not skipped. A cell
is one request shape (route, method, which parameters hold A's ids, ``If-None-Match`` or not);
it holds when B's answers on A's ids and on the unknown ids are the same (status, problem
``type``/``title``/``code``, detail, every header but the request id and date, with the ids
sent written as placeholders) and neither holds anything of A's it was not sent. Routes without
ids are called as B and must hold nothing of A's; both tenants' listings and billing states are
the same before and after. The MCP tools get the same treatment (``stress.isolation.mcp``).

Timing: for each read route, the median latency of A's ids against unknown ids (``--timing``
calls each, interleaved); the largest ratio is printed, never asserted (the machines are shared).
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from secrets import token_urlsafe
from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from pydantic import SecretStr
from starlette.routing import Mount

from api.app import create_app
from api.routes.media import media_secret
from storage.catalog.database import Catalog
from stress.isolation.mcp import check_mcp
from stress.isolation.report import Leak, Report, same_answer
from stress.isolation.world import (
    FILLERS,
    NOT_RECORDS,
    Choice,
    RefusingSubmitter,
    TenantWorld,
    make_tenants,
    with_evidence,
)
from ves.media_url import SOURCE, review_scope, sign_media_token
from ves.settings import Settings

PARAM = re.compile(r"{(\w+)(?::\w+)?}")
# Example bodies of routes that take one; without it a route would answer 422 to both calls.
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/api/product/videos/{video_id}/execute"): {"json": {"detector": "motion"}},
    ("POST", "/api/product/videos/{video_id}/ask"): {"json": {"question": "How many objects?"}},
    ("POST", "/api/product/videos/{video_id}/evidence/{evidence_id}/notes"): {
        "json": {"text": "Checked frame by frame.", "verdict": "confirmed"}
    },
    ("PUT", "/api/videos/{video_id}/content"): {
        "content": b"\0" * 16,
        "headers": {"Content-Type": "application/octet-stream"},
    },
}
# Writes whose request names no id: nothing of A's goes in, so nothing to compare.
NO_ID_WRITES = {
    ("POST", "/api/videos/add"): "registers B's own video from a URL; takes no id",
    ("POST", "/api/public/onboarding/demo-video"): "no key: makes a new tenant; takes no id",
    ("POST", "/api/product/webhooks"): "registers B's own webhook endpoint; takes no id",
}
# Writes without ids that answer from B's own workspace: called as B, they must hold nothing of A's.
NO_ID_ANSWERS: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/api/product/ask"): {"json": {"question": "Which videos show any text?"}},
}
MCP_PATH = "/mcp"  # its tools are checked one by one (stress.isolation.mcp)
# Routes a signed URL authenticates instead of a key (``ves.media_url``): each call carries a
# valid token of the caller's tenant for the path's video, more than B could ever get from the
# API, so a cell holds only if even a genuine signature reaches nothing of A's.
SIGNED_ROUTES = {
    ("GET", "/api/media/videos/{video_id}/source"),
    ("GET", "/api/media/videos/{video_id}/runs/{run_id}/review"),  # scoped to the run's copy
}
_SIGNED_UNTIL = 2**40


def as_deployed(settings: Settings) -> Settings:
    """``settings`` as the service runs for tenants: with an operator token for ``GET /metrics``.

    The metrics name every tenant's id by design (the operators' view). They are open only while
    the API listens on loopback with no ``VES_METRICS_TOKEN``, as ``make run`` starts it for the
    machine's own operator; served to tenants, the token is set, and then B's key must reach
    nothing there (the route is checked as any route without ids)."""
    return settings.model_copy(update={"metrics_token": SecretStr(token_urlsafe(24))})


@dataclass
class Cell:
    """One request shape: B's call on A's ids and the same call on unknown ids."""

    method: str
    template: str
    choices: dict[str, Choice]  # path parameters and query parameters (``query``) alike
    headers: dict[str, str] = field(default_factory=dict)
    query: tuple[str, ...] = ()
    secret: bytes | None = None  # the media URL key, for a route in SIGNED_ROUTES

    def _values(self, control: bool) -> dict[str, str]:
        return {k: c.control if control else c.value for k, c in self.choices.items()}

    def path(self, control: bool) -> str:
        values = self._values(control)
        return self.template.format(**{k: v for k, v in values.items() if k not in self.query})

    def params(self, control: bool, tenant_id: str) -> dict[str, str]:
        values = self._values(control)
        params = {k: v for k, v in values.items() if k in self.query}
        if self.secret is not None:
            video_id, run_id = values["video_id"], values.get("run_id")
            scope = SOURCE if run_id is None else review_scope(run_id)
            params["token"] = sign_media_token(
                self.secret, tenant_id, video_id, _SIGNED_UNTIL, scope
            )
        return params

    @property
    def names_a_record(self) -> bool:
        """Whether one of A's records is named (the control must then be 404)."""
        return any(c.of_a and k not in NOT_RECORDS for k, c in self.choices.items())

    def sent(self) -> dict[str, str]:
        """What the two calls sent differently, each with the placeholder both are read with."""
        return {
            v: f"<{k}>" for k, c in self.choices.items() if c.of_a for v in (c.value, c.control)
        }

    @property
    def label(self) -> str:
        which = ",".join(f"{k}={c.tag}" for k, c in self.choices.items())
        extra = " If-None-Match" if self.headers else ""
        return f"{self.method} {self.template} [{which}]{extra}"


Endpoint = tuple[str, str, tuple[str, ...]]  # method, path template, query parameters


def http_routes(app: FastAPI) -> Iterator[Endpoint]:
    """(method, path template, query parameter names) of every HTTP route the app serves but
    ``/mcp``, included routers' routes too (``iter_route_contexts``, as FastAPI's OpenAPI walks
    them); a kind of route this does not know yields method ``?``, which fails the check."""
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, Mount):
            yield "GET", route.path + "/{path}", ()  # static files: no tenant data
        elif context.path is not None and context.methods is not None:
            dependant = getattr(route, "dependant", None)
            query = tuple(p.name for p in dependant.query_params) if dependant else ()
            if context.path != MCP_PATH:
                yield from ((m, context.path, query) for m in sorted(context.methods - {"HEAD"}))
        else:
            yield "?", f"{type(route).__name__} {context.path}", ()


def cells_of(endpoint: Endpoint, a: TenantWorld, b: TenantWorld) -> list[Cell] | str:
    """The cells of one route, or why it cannot be checked (an unknown parameter). Query
    parameters are filled too when ``FILLERS`` knows them; one named like an id must be known."""
    method, template, query_names = endpoint
    if method == "?":
        return "a kind of route the matrix cannot read: teach http_routes about it"
    names = PARAM.findall(template)
    unknown = [n for n in names if n not in FILLERS]
    unknown += [q for q in query_names if q.endswith("_id") and q not in FILLERS]
    if template.endswith("/{path}") and unknown == ["path"]:
        return []  # a static mount
    if unknown:
        return f"no filler for parameter(s) {unknown}: add them to FILLERS"
    query = tuple(q for q in query_names if q in FILLERS)
    options = [FILLERS[n](a, b) for n in (*names, *query)]
    cells = []
    for combo in itertools.product(*options):
        if any(c.of_a for c in combo):
            choices = dict(zip((*names, *query), combo, strict=True))
            cells.append(Cell(method, template, choices, query=query))
            if method == "GET":  # a cached answer must not be revalidated across tenants
                cells.append(Cell(method, template, choices, {"If-None-Match": "*"}, query))
    return cells


def _call(http: httpx.Client, cell: Cell, who: TenantWorld, control: bool) -> httpx.Response:
    body = BODIES.get((cell.method, cell.template), {})
    headers = {**who.headers, **cell.headers, **body.get("headers", {})}
    extra = {k: v for k, v in body.items() if k != "headers"}
    params = cell.params(control, who.tenant_id)
    return http.request(cell.method, cell.path(control), params=params, headers=headers, **extra)


def check_cell(http: httpx.Client, cell: Cell, a: TenantWorld, b: TenantWorld) -> str:
    """'' when the cell holds, else what differs or leaks. A read on A's ids alone is also made
    as A: it must find them (else the cell would prove nothing)."""
    if cell.method == "GET" and all(c.tag == "A" for c in cell.choices.values()):
        owner = _call(http, cell, a, control=False)
        if owner.status_code == 404:
            return "A's own ids answer 404 to A: the cell proves nothing"
    secrets = a.secrets()
    on_a = _call(http, cell, b, control=False)
    on_unknown = _call(http, cell, b, control=True)
    if cell.names_a_record and on_unknown.status_code != 404:
        return f"the control answers {on_unknown.status_code}, not 404: add a body to BODIES"
    return same_answer(on_a, on_unknown, cell.sent(), secrets)


def check_no_id_route(
    http: httpx.Client, method: str, template: str, b: TenantWorld, secrets: dict[str, str]
) -> str:
    """A route without ids: a read, or a write answering from B's own workspace, as B holds
    nothing of A's; any other write must be known."""
    answers = NO_ID_ANSWERS.get((method, template))
    if method != "GET" and answers is None:
        known = (method, template) in NO_ID_WRITES
        return "" if known else "a write without ids: add it to NO_ID_WRITES with a reason"
    response = http.request(method, template, headers=b.headers, **(answers or {}))
    if answers is not None and response.status_code != 200:
        return f"B's own call answers {response.status_code}: {response.text[:200]}"
    found = [what for what, value in secrets.items() if value and value in response.text]
    return f"B's answer holds A's {found}" if found else ""


def _timing(http: httpx.Client, cell: Cell, b: TenantWorld, calls: int) -> float:
    """Median latency on A's ids over that on unknown ids (interleaved calls)."""
    samples: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(calls):
        for control in (False, True):
            start = time.perf_counter()
            _call(http, cell, b, control)
            samples[control].append(time.perf_counter() - start)
    return statistics.median(samples[False]) / statistics.median(samples[True])


def _ledgers(base_url: str, *worlds: TenantWorld) -> list[Any]:
    """Every tenant's listing and billing state (what a leak or a side effect would change),
    but the counts of searches and asks: B's searches and questions of its own workspace are
    counted in B's usage (B's asks of A's videos are 404s, compared cell by cell)."""
    with httpx.Client(base_url=base_url, timeout=60) as http:
        ledgers = [
            http.get(path, headers=w.headers).json()
            for w in worlds
            for path in ("/api/product/videos", "/api/product/billing/state")
        ]
    for ledger in ledgers:
        for part in ("usage", "remaining"):
            for counted in ("searches", "asks", "asks_this_month"):
                ledger.get(part, {}).pop(counted, None)
    return ledgers


def check_rest(app: FastAPI, base_url: str, a: TenantWorld, b: TenantWorld, timing: int) -> Report:
    """Every REST cell of ``app``, called over HTTP at ``base_url``."""
    report, secrets = Report(), a.secrets()
    media_key = media_secret(app.state.settings)
    with httpx.Client(base_url=base_url, timeout=60) as http:
        for endpoint in http_routes(app):
            method, template, _ = endpoint
            cells = cells_of(endpoint, a, b)
            if isinstance(cells, str):
                report.add(Leak("rest", f"{method} {template}", cells))
                continue
            if (method, template) in SIGNED_ROUTES:
                cells = [replace(cell, secret=media_key) for cell in cells]
            if not PARAM.search(template):
                report.count(
                    "rest", check_no_id_route(http, method, template, b, secrets), template
                )
            for cell in cells:
                report.count("rest", check_cell(http, cell, a, b), cell.label)
            if timing and method == "GET" and cells:
                report.ratios[template] = _timing(http, cells[0], b, timing)
    return report


def check_all(
    app: FastAPI, base_url: str, worlds: tuple[TenantWorld, TenantWorld], timing: int
) -> Report:
    """The REST matrix and the MCP tools; A's evidence ids are read first, as A. Both tenants'
    listings and billing states must be the same afterwards (one more cell)."""
    a, b = (with_evidence(w, base_url) for w in worlds)
    before = _ledgers(base_url, a, b)
    report = check_rest(app, base_url, a, b, timing)
    report.merge(check_mcp(base_url, a, b))
    changed = _ledgers(base_url, a, b) != before
    report.count("rest", "changed while B called A's ids" if changed else "", "listings, billing")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timing", type=int, default=20, help="calls per read route (0: none)")
    args = parser.parse_args(argv)
    from prefect.settings import PREFECT_LOGGING_TO_API_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    from testkit.live_server import serve_app

    with tempfile.TemporaryDirectory(prefix="ves-isolation-") as tmp:
        settings = Settings(data_dir=Path(tmp) / "data")
        os.environ["VES_DATA_DIR"] = str(settings.data_dir)  # the flow reads it, as a worker
        catalog = Catalog.from_settings(settings)
        with (
            temporary_settings({PREFECT_LOGGING_TO_API_ENABLED: False}),
            prefect_test_harness(server_startup_timeout=180),
        ):
            worlds = make_tenants(catalog, Path(tmp) / "media")
        app = create_app(as_deployed(settings), catalog, submitter=RefusingSubmitter())
        with serve_app(app) as url:
            report = check_all(app, url, worlds, args.timing)
        catalog.dispose()
    print(report.render())
    return 0 if not report.leaks else 1


if __name__ == "__main__":
    sys.exit(main())
