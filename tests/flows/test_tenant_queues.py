"""Fair queues: each tenant's runs go to a Prefect work queue limited to its plan's runs at once.

Against a real (temporary) Prefect server: the queue is created on a tenant's first run, its
limit follows the plan, and two API processes creating it at once end with one queue.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate

from flows.orchestrator import WORK_POOL, PrefectSubmitter, serve_tenant_last, tenant_queue


@pytest.fixture(scope="module")
def pool(prefect_harness: None) -> Iterator[None]:
    async def create() -> None:
        async with get_client() as client:
            await client.create_work_pool(
                WorkPoolCreate(name=WORK_POOL, type="process"), overwrite=True
            )

    asyncio.run(create())
    yield


async def _limit_of(name: str) -> int | None:
    async with get_client() as client:
        queue = await client.read_work_queue_by_name(name, work_pool_name=WORK_POOL)
    return queue.concurrency_limit


async def _ensure(submitter: PrefectSubmitter, name: str, limit: int) -> None:
    async with get_client() as client:
        await submitter._ensure_queue(client, name, limit)


def test_a_tenants_queue_is_made_with_its_plans_limit_and_follows_a_plan_change(
    pool: None,
) -> None:
    submitter, name = PrefectSubmitter(), tenant_queue("ten_plan_change")
    asyncio.run(_ensure(submitter, name, 2))
    assert asyncio.run(_limit_of(name)) == 2
    asyncio.run(_ensure(submitter, name, 5))  # the tenant moved to a bigger plan
    assert asyncio.run(_limit_of(name)) == 5
    asyncio.run(_ensure(PrefectSubmitter(), name, 1))  # another API process, another plan
    assert asyncio.run(_limit_of(name)) == 1


def test_two_processes_creating_the_same_queue_at_once_end_with_one(pool: None) -> None:
    name = tenant_queue("ten_race")

    async def race() -> None:
        await asyncio.gather(*(_ensure(PrefectSubmitter(), name, 3) for _ in range(4)))

    asyncio.run(race())

    async def queues() -> list[str]:
        async with get_client() as client:
            found = await client.read_work_queues(work_pool_name=WORK_POOL)
        return [q.name for q in found if q.name == name]

    assert asyncio.run(queues()) == [name]
    assert asyncio.run(_limit_of(name)) == 3


async def _priorities(names: list[str]) -> list[int]:
    async with get_client() as client:
        found = await client.read_work_queues(work_pool_name=WORK_POOL)
    return [q.priority for name in names for q in found if q.name == name]


def test_a_tenant_whose_run_started_goes_to_the_back_so_tenants_take_turns(pool: None) -> None:
    names = [tenant_queue(t) for t in ("ten_first", "ten_second")]
    for name in names:
        asyncio.run(_ensure(PrefectSubmitter(), name, 2))
    first, second = asyncio.run(_priorities(names))
    assert first < second  # made first, served first
    serve_tenant_last("ten_first")  # a run of the first tenant started
    first, second = asyncio.run(_priorities(names))
    assert second < first
    serve_tenant_last("ten_second")
    first, second = asyncio.run(_priorities(names))
    assert first < second
    serve_tenant_last("ten_without_a_queue")  # nothing to move; never an error
