"""Operation 9: the tenant's plan, what it has used this period, and what remains."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import CatalogDep, SettingsDep, TenantDep
from api.problems import problem_responses
from api.schemas.billing import BillingState, PlanPublic, UsagePublic
from storage.catalog.usage import UsageStore
from ves.clock import now_rfc3339

router = APIRouter(tags=["billing"])


@router.get(
    "/api/product/billing/state",
    summary="Billing state: plan, usage, remaining",
    description=(
        "The tenant's plan and its limits, usage in the current period (calendar month, UTC; "
        "asks count per UTC day; videos and storage are what is held now), what `remaining` of "
        "each limit, and `status`: `active`, or `limited` when a limit is used up (its actions "
        "answer 402 `plan_limit_exceeded` until the period turns or retention frees storage)."
    ),
    responses=problem_responses(401),
)
def billing_state(tenant: TenantDep, settings: SettingsDep, catalog: CatalogDep) -> BillingState:
    limits = settings.plan(tenant.plan)
    usage = UsageStore(catalog).of(tenant.tenant_id, now_rfc3339())
    remaining = usage.remaining(limits)
    exhausted = sorted(name for name, left in remaining.items() if left <= 0)
    return BillingState(
        plan=PlanPublic(name=tenant.plan, limits=limits.model_dump()),
        usage=UsagePublic(
            period_start=usage.period_start,
            period_end=usage.period_end,
            videos=usage.videos,
            executions=usage.executions,
            processed_s=round(usage.processed_s, 3),
            asks=usage.asks,
            asks_this_month=usage.asks_month,
            searches=usage.searches,
            storage_bytes=usage.storage_bytes,
            active_runs=usage.active_runs,
        ),
        remaining=remaining,
        status="limited" if exhausted else "active",
        exhausted=exhausted,
    )
