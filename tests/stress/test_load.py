"""Short versions of ``stress.load.run`` and ``stress.slow_clients.run`` against ``ves serve``.

One service (as a new user starts it: Prefect server, worker, API) for both, with header and body
deadlines of 2 s so that the slow connections are closed within the test. What is asserted is the
truth, not timing: no error; the run executed beside the load finds what the same clip's run found
alone; the usage counters equal what the clients did; normal requests were answered while every
slow connection was held open; the server closed each slow connection itself, with a 408, no
sooner than its deadline. The only timing bound is a generous ratio of medians.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from stress.load.run import ROUTES, load
from stress.load.world import Service, World, lobby_clip, make_world, served
from stress.slow_clients.run import KINDS, slow_clients

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

DEADLINE_S = 2.0


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data = tmp_path_factory.mktemp("load-data")
    timeouts = {"VES_HEADER_TIMEOUT_S": str(DEADLINE_S), "VES_BODY_TIMEOUT_S": str(DEADLINE_S)}
    with served(data, **timeouts) as running:
        yield running


@pytest.fixture(scope="module")
def world(service: Service, tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(service, lobby_clip(tmp_path_factory.mktemp("clip")), videos=1, runs=1)


def _objects(service: Service, world: World, video_id: str) -> list[tuple[Any, ...]]:
    with service.client(world.key) as client:
        graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
    return sorted((o["class"], o["first_seen_s"], o["last_seen_s"]) for o in graph["objects"])


def test_clients_read_published_runs_beside_a_run_without_error(
    service: Service, world: World
) -> None:
    result = asyncio.run(load(service, world, clients=5, seconds=5, run_bound_s=180))
    print("\n".join(result.report()))
    assert result.tally.error_count() == 0, result.tally.errors
    assert set(result.tally.routes()) == set(ROUTES)  # every route was read
    assert result.runs[0][0] == "succeeded"
    # The run beside the load found exactly what the same clip's run found alone.
    alone, beside = world.videos[0].video_id, world.pending[0]
    assert _objects(service, world, beside) == _objects(service, world, alone)
    assert result.counted == result.happened  # each ask answered counted once, none lost
    assert result.ok()
    assert result.summary().startswith("load: ") and ", 0 errors, " in result.summary()


def test_slow_connections_do_not_starve_others_and_are_closed(
    service: Service, world: World
) -> None:
    result = asyncio.run(
        slow_clients(service, world, connections=30, clients=3, seconds=3, hold_s=60)
    )
    print("\n".join(result.report()))
    assert result.alone.error_count() == 0 and result.beside.error_count() == 0
    assert result.beside.total() > 0  # served while the 30 slow connections were held
    assert {s.kind for s in result.slow} == set(KINDS)
    for slow in result.slow:
        assert slow.answer.startswith("HTTP/1.1 408"), (slow.kind, slow.answer)
        assert slow.lived_s is not None and slow.lived_s >= DEADLINE_S - 0.5, slow  # not sooner
    # Starved would mean most requests wait for the slow ones. The median says that; a p99 of a
    # hundred requests is one request, and one stall of a shared machine moves it either way
    # (x45 and x0.2 both seen), so it is reported by the stress script, not asserted here.
    assert result.ratio(0.5) < 10
    assert result.ok()


def test_a_slow_body_gets_a_408_problem_and_the_connection_is_closed(
    service: Service, world: World
) -> None:
    """The 408 of a body that is too slow is a problem document, and ends the connection."""

    async def trickled() -> bytes:
        host, port = service.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        video = world.videos[0].video_id
        writer.write(
            f"POST /api/product/videos/{video}/ask HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {world.key}\r\nContent-Type: application/json\r\n"
            'Content-Length: 100\r\n\r\n{"question"'.encode()
        )
        answer = await asyncio.wait_for(reader.read(), timeout=30)  # to the server's close
        writer.close()
        return answer

    answer = asyncio.run(trickled())
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer
    assert b"content-type: application/problem+json" in head.lower()
    assert b"connection: close" in head.lower()
    assert b'"code":"request_timeout"' in body
