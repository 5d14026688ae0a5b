"""The isolation matrix over the MCP tools: generated from the tools the server lists, so a new
tool is covered (or, with an id argument nobody knows how to fill, noticed).

Each tool with id arguments is called in one session of tenant B, with A's ids and with unknown
ids (``FILLERS``, by argument name); the two results must be the same tool error (structured
problem and text, with the ids sent as placeholders) and hold nothing else of A's. Read tools
without ids are called as B and must hold nothing of A's. And a session is bound to its tenant:
B sending A's session id must be answered as B sending a session id nobody has.
"""

from __future__ import annotations

import itertools
import json
import uuid
from typing import Any

import anyio
import httpx
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Tool

from stress.isolation.report import Leak, Report, leaked, same_answer, shape
from stress.isolation.world import FILLERS, NOT_RECORDS, Choice, TenantWorld

# Example values of the tools' other required arguments.
ARGUMENTS: dict[str, Any] = {
    "question": "How many objects appeared?",
    "text": "Checked frame by frame.",
    "verdict": "confirmed",
}
# Tools that write without taking an id: nothing of A's goes in.
NO_ID_WRITES = {"add_video": "registers B's own video from a URL; takes no id"}
# Tools that write without ids but answer from B's own workspace: B's result holds nothing of A's.
NO_ID_ANSWERS = {"ask_workspace": {"question": "Which videos show any text?"}}
_ACCEPT = {"Accept": "application/json, text/event-stream"}
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "isolation", "version": "0"},
    },
}


def _observed(result: CallToolResult, sent: dict[str, str]) -> Any:
    """What the agent sees of a result, ids sent as placeholders and the request id dropped."""
    document = {
        "is_error": result.is_error,
        "structured": result.structured_content,
        "text": [getattr(c, "text", None) for c in result.content],
    }
    text = json.dumps(document, sort_keys=True)
    for value, placeholder in sent.items():
        text = text.replace(value, placeholder)
    observed = json.loads(text)
    if isinstance(observed["structured"], dict):
        observed["structured"].pop("request_id", None)
    return observed


async def _tool_cells(session: ClientSession, tool: Tool, a: TenantWorld, b: TenantWorld) -> Report:
    report, secrets = Report(), a.secrets()
    properties = tool.input_schema.get("properties", {})
    ids = [name for name in properties if name.endswith("_id") or name in FILLERS]
    unknown = [name for name in ids if name not in FILLERS]
    if unknown:
        report.add(Leak("mcp", tool.name, f"no filler for argument(s) {unknown}: add to FILLERS"))
        return report
    required = set(tool.input_schema.get("required", []))
    others = {k: ARGUMENTS[k] for k in required - set(ids) if k in ARGUMENTS}
    if not ids:
        read_only = bool(tool.annotations and tool.annotations.read_only_hint)
        if tool.name in NO_ID_ANSWERS:
            others = NO_ID_ANSWERS[tool.name]
        elif not read_only:
            known = tool.name in NO_ID_WRITES
            report.count(
                "mcp", "" if known else "a write without ids: add to NO_ID_WRITES", tool.name
            )
            return report
        result = await session.call_tool(tool.name, others)
        found = leaked(json.dumps(_observed(result, {})), secrets, {})
        report.count("mcp", f"B's result holds A's {found}" if found else "", tool.name)
        return report
    for combo in itertools.product(*(FILLERS[name](a, b) for name in ids)):
        if any(c.of_a for c in combo):
            choices = dict(zip(ids, combo, strict=True))
            problem = await _compare(session, tool.name, choices, others, secrets)
            which = ",".join(f"{k}={c.tag}" for k, c in choices.items())
            report.count("mcp", problem, f"{tool.name} [{which}]")
    return report


async def _compare(
    session: ClientSession,
    tool: str,
    choices: dict[str, Choice],
    others: dict[str, Any],
    secrets: dict[str, str],
) -> str:
    """'' when the tool answers A's ids exactly as unknown ids, else what differs."""
    sent = {v: f"<{k}>" for k, c in choices.items() if c.of_a for v in (c.value, c.control)}
    on_a = await session.call_tool(tool, {**others, **{k: c.value for k, c in choices.items()}})
    control = await session.call_tool(
        tool, {**others, **{k: c.control for k, c in choices.items()}}
    )
    names_a_record = any(c.of_a and k not in NOT_RECORDS for k, c in choices.items())
    not_found = control.is_error and (control.structured_content or {}).get("code") == "not_found"
    if names_a_record and not not_found:
        return "the control is no not_found tool error: add its arguments to ARGUMENTS"
    if _observed(on_a, sent) != _observed(control, sent):
        return f"results differ: {_observed(on_a, sent)} vs {_observed(control, sent)}"
    found = leaked(json.dumps(_observed(on_a, {})), secrets, sent)
    return f"the result holds A's {found}" if found else ""


async def _session_cells(base_url: str, a: TenantWorld, b: TenantWorld) -> Report:
    """Every tool, called in one session of B."""
    report = Report()
    async with (
        httpx2.AsyncClient(headers=b.headers, timeout=60) as http,
        streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for tool in (await session.list_tools()).tools:
            report.merge(await _tool_cells(session, tool, a, b))
    return report


_LISTING = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _open_session(http: httpx.Client, world: TenantWorld) -> str:
    """A session of ``world``'s tenant, initialised over plain HTTP; its id ('' on failure)."""
    opened = http.post("/mcp", json=_INITIALIZE, headers={**world.headers, **_ACCEPT})
    session_id = str(opened.headers.get("mcp-session-id", ""))
    if session_id:
        headers = {**world.headers, **_ACCEPT, "Mcp-Session-Id": session_id}
        http.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
    return session_id


def _session_binding(base_url: str, a: TenantWorld, b: TenantWorld) -> Report:
    """B with A's session id, by every method of the transport (a message, the event stream,
    ending the session), answers as B with a session id nobody has, and A's session lives on."""
    report = Report()
    with httpx.Client(base_url=base_url, timeout=10) as http:
        session_id = _open_session(http, a)
        if not session_id:
            report.add(Leak("mcp", "session id of A", "A could not open a session"))
            return report
        nobody = uuid.uuid4().hex[: len(session_id)].ljust(len(session_id), "0")

        def as_b(method: str, session: str) -> httpx.Response:
            headers = {**b.headers, **_ACCEPT, "Mcp-Session-Id": session}
            return http.request(
                method, "/mcp", headers=headers, json=_LISTING if method == "POST" else None
            )

        for method in ("POST", "GET", "DELETE"):
            on_a, on_unknown = as_b(method, session_id), as_b(method, nobody)
            sent = {session_id: "<session>", nobody: "<session>"}
            problem = same_answer(on_a, on_unknown, sent, a.secrets())
            if on_unknown.status_code < 400:
                problem = f"a session id nobody has answers {shape(on_unknown, {})}"
            report.count("mcp", problem, f"{method} with the session id of A")
        own = {**a.headers, **_ACCEPT, "Mcp-Session-Id": session_id}
        alive = http.post("/mcp", json=_LISTING, headers=own).status_code == 200
        report.count("mcp", "" if alive else "B ended A's session", "A's session after B")
    return report


def check_mcp(base_url: str, a: TenantWorld, b: TenantWorld) -> Report:
    """The MCP part of the matrix."""
    report: Report = anyio.run(_session_cells, base_url, a, b)
    report.merge(_session_binding(base_url, a, b))
    return report
