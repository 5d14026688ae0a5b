"""What a client may ask of the service, and what it costs: plans, request bounds, rate limits,
queued runs, the price and the cost model behind estimates and caps."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from ves.plans import DEFAULT_PLANS, PlanLimits
from ves.settings.base import GiB, MiB, SettingsGroup


class LimitSettings(SettingsGroup):
    """Per-tenant plans, the bounds and timeouts of a client's requests, the rate limits, the
    queue, and the price and cost model of ``cost.json`` and execute's estimates."""

    plans: dict[str, PlanLimits] = Field(
        default_factory=lambda: dict(DEFAULT_PLANS),
        description=(
            'Plans by name, as JSON (`{"sandbox": {"videos": 25, ...}}`); see `ves/plans.py`. '
            "New tenants get `sandbox`."
        ),
    )
    max_body_bytes: int = Field(
        1 * MiB, gt=0, description="Largest JSON request body accepted (413 above)."
    )
    max_upload_bytes: int = Field(
        2 * GiB, gt=0, description="Largest uploaded recording accepted (413 above)."
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        description="Seconds a connection has to send a request's line and headers, counted from "
        "its opening or from the end of its previous answer; then the API answers 408 and closes "
        "it (slowloris: headers sent a byte at a time would hold the connection forever).",
    )
    body_timeout_s: float = Field(
        20.0,
        gt=0,
        description="Seconds a request body may take, plus one more second for every "
        "`VES_BODY_MIN_RATE` bytes received (the upload's too); then 408 and the connection is "
        "closed.",
    )
    body_min_rate: int = Field(
        1024,
        gt=0,
        description="Bytes per second a request body must average past `VES_BODY_TIMEOUT_S` "
        "(1 KiB/s: a 2 GiB upload may take 24 days, a body sent a byte a second is cut at about "
        "`VES_BODY_TIMEOUT_S`).",
    )
    max_queued_runs: int = Field(
        20,
        ge=1,
        le=10_000,
        description="Runs one tenant may have waiting in line (beyond its plan's concurrent_runs);"
        " one more is refused with 429 and Retry-After.",
    )
    demo_rate_limit: int = Field(
        3, ge=1, description="Demo workspaces one client address may create per window."
    )
    demo_rate_window_s: float = Field(600.0, gt=0, description="That window, in seconds.")
    auth_fail_limit: int = Field(
        20,
        ge=1,
        description="Failed authentications (a key that is unknown or revoked) one client address "
        "may make per window; above it every request from that address answers 429 (per API "
        "process).",
    )
    auth_fail_window_s: float = Field(
        60.0, gt=0, description="That window, in seconds (a sliding window)."
    )
    price_per_video_minute: float = Field(
        0.0, ge=0, description="Price of one processed minute of video, for cost.json."
    )
    # Estimates and caps (issue 17, part "estimates and caps"; docs/how-to/estimates.md).
    cost_model_runs: int = Field(
        200,
        ge=1,
        le=10_000,
        description="Newest succeeded runs of this installation the cost model is fitted on.",
    )
    cost_model_min_runs: int = Field(
        3,
        ge=1,
        le=1000,
        description="Runs of a detector mode needed before its stages are fitted; fewer: the "
        "documented fallback constants (tasks/cost/model.py).",
    )

    @model_validator(mode="after")
    def _refuse_unsafe_combinations(self) -> Self:
        if self.max_body_bytes > self.max_upload_bytes:
            raise ValueError("max_body_bytes must not exceed max_upload_bytes")
        return self

    def plan(self, name: str) -> PlanLimits:
        """The limits of a plan; an unknown name gets ``sandbox``'s (never unlimited)."""
        return self.plans.get(name) or self.plans.get("sandbox") or PlanLimits()
