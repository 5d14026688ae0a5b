"""The MCP preview endpoint, driven by the SDK's own client over real HTTP against a live API."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from synthetic import ground_truth, lobby_scene
from testkit.media_server import MediaServer
from tests.api.helpers import PROBLEM

TRUTH = ground_truth(lobby_scene())
TOOLS = {
    "list_videos",
    "add_video",
    "execute_video",
    "get_scene_graph",
    "get_timeline",
    "get_evidence",
    "get_cost",
    "ask_video",
    "add_review_note",
    "export_evidence",
    "search_videos",
    "ask_workspace",
}
Executed = tuple[httpx.Client, str, dict[str, Any]]
T = TypeVar("T")


def with_session(client: httpx.Client, work: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Run ``work`` in an initialised MCP session of ``client``'s tenant (its bearer key)."""

    async def main() -> T:
        key = client.headers.get("Authorization")
        headers = {"Authorization": key} if key else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(f"{client.base_url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)

    return anyio.run(main)


def call(client: httpx.Client, tool: str, **arguments: Any) -> CallToolResult:
    """One tool call in its own session."""

    async def work(session: ClientSession) -> CallToolResult:
        return await session.call_tool(tool, arguments)

    return with_session(client, work)


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    document: dict[str, Any] = result.structured_content
    return document


def refused(result: CallToolResult, code: str) -> dict[str, Any]:
    assert result.is_error
    problem: dict[str, Any] = result.structured_content
    assert problem["code"] == code, problem
    assert problem["detail"] and code in result.content[0].text  # type: ignore[union-attr]
    return problem


def test_every_tool_is_listed_with_a_description_and_an_input_schema(
    client: httpx.Client,
) -> None:
    async def work(session: ClientSession) -> list[Any]:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in with_session(client, work)}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40
        assert tool.input_schema["type"] == "object"
        assert "ctx" not in tool.input_schema.get("properties", {})
    assert tools["ask_video"].input_schema["required"] == ["video_id", "question"]
    assert tools["add_video"].input_schema["required"] == ["url", "title"]
    assert tools["execute_video"].input_schema["required"] == ["video_id"]
    assert tools["get_scene_graph"].annotations.read_only_hint is True


@pytest.mark.parametrize("authorization", [None, "Bearer ves_nope_nope", "Basic abc"])
def test_a_missing_or_wrong_key_is_refused_before_any_tool(
    anon: httpx.Client, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    response = anon.post("/mcp", json=initialize, headers={**headers, **accept})
    assert response.status_code == 401, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["code"] == "unauthorized"


def test_the_sdk_client_cannot_connect_without_a_valid_key(anon: httpx.Client) -> None:
    with httpx.Client(base_url=anon.base_url, headers={"Authorization": "Bearer ves_x_y"}) as wrong:
        for client in (wrong, anon):
            with pytest.raises(ExceptionGroup) as caught:
                call(client, "list_videos")
            assert caught.group_contains(MCPError, match="error response", depth=2)


@pytest.mark.slow
def test_an_executed_video_is_read_and_asked_over_mcp(executed: Executed) -> None:
    client, video_id, _ = executed
    (listed,) = ok(call(client, "list_videos"))["data"]
    assert listed["video_id"] == video_id and listed["state"] == "succeeded"
    assert listed["latest_run"]["progress"] == 1.0
    rest = "/api/product/videos/" + video_id
    graph = ok(call(client, "get_scene_graph", video_id=video_id))
    assert graph == client.get(f"{rest}/scene-graph").json()
    assert len([o for o in graph["objects"] if o["class"] != "text"]) == len(TRUTH.objects)
    assert (
        ok(call(client, "get_timeline", video_id=video_id)) == client.get(f"{rest}/timeline").json()
    )
    evidence = ok(call(client, "get_evidence", video_id=video_id))
    assert evidence == client.get(f"{rest}/evidence-view").json()
    assert ok(call(client, "get_cost", video_id=video_id)) == client.get(f"{rest}/cost").json()
    spans = {s["evidence_id"]: s for s in evidence["spans"]}

    count = ok(call(client, "ask_video", video_id=video_id, question="How many objects appeared?"))
    assert count["grounded"] is True and count["answer"].startswith(f"{len(TRUTH.objects)} ")
    assert count["citations"] and all(c["evidence_id"] in spans for c in count["citations"])
    assert count["ask_id"].startswith("ask_") and count["video_id"] == video_id
    helicopter = ok(call(client, "ask_video", video_id=video_id, question="Did a helicopter land?"))
    assert helicopter["grounded"] is False and helicopter["citations"] == []
    assert helicopter["refusal_reason"] == "outside_detectors"


@pytest.mark.slow
def test_another_tenants_video_is_not_visible(executed: Executed, processing: Any) -> None:
    _, video_id, _ = executed
    other = processing("other")
    assert ok(call(other, "list_videos"))["data"] == []
    for tool in ("get_scene_graph", "get_timeline", "get_evidence", "get_cost"):
        refused(call(other, tool, video_id=video_id), "not_found")
    refused(call(other, "ask_video", video_id=video_id, question="How many?"), "not_found")
    refused(call(other, "execute_video", video_id=video_id), "not_found")


@pytest.mark.slow
def test_a_video_is_added_and_executed_over_mcp(processing: Any, lobby_media: MediaServer) -> None:
    client = processing("acme")
    url = lobby_media.url("lobby.mp4")
    refused(call(client, "add_video", url="file:///etc/passwd", title="x"), "source_rejected")
    added = ok(call(client, "add_video", url=url, title="Lobby"))
    video_id = added["video_id"]
    assert added["state"] == "registered" and added["title"] == "Lobby"
    refused(call(client, "get_scene_graph", video_id=video_id), "not_ready")
    bad = refused(
        call(client, "execute_video", video_id=video_id, detector="x"), "validation_error"
    )
    assert bad["errors"]
    estimate = ok(call(client, "execute_video", video_id=video_id, dry_run=True))
    assert estimate["dry_run"] is True and estimate["estimate"]["compute_s"] > 0
    assert client.get(f"/api/product/videos/{video_id}").json()["latest_run"] is None
    accepted = ok(call(client, "execute_video", video_id=video_id, detector="motion"))
    assert accepted["state"] == "queued" and accepted["video_id"] == video_id
    deadline = time.monotonic() + 120
    while (video := client.get(f"/api/product/videos/{video_id}").json())["state"] != "succeeded":
        assert video["state"] != "failed" and time.monotonic() < deadline, video
        time.sleep(0.2)
    assert video["latest_run"]["run_id"] == accepted["run_id"]
    assert ok(call(client, "get_cost", video_id=video_id))["detector_mode"] == "motion"
