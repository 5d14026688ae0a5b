"""How the service delivers webhooks: timeouts, the retry schedule, endpoints per workspace."""

from __future__ import annotations

from pydantic import Field

from ves.settings.base import SettingsGroup


class WebhookSettings(SettingsGroup):
    """One delivery's timeout, the backoff between its attempts and how long it is retried, and
    how many endpoints a workspace may register (issue 17, webhooks part)."""

    webhook_timeout_s: float = Field(
        10.0, gt=0, description="Seconds a webhook receiver has to answer one delivery attempt."
    )
    webhook_retry_base_s: float = Field(
        30.0,
        gt=0,
        description="Wait before a failed delivery's second attempt; it doubles (jittered) after.",
    )
    webhook_retry_max_s: float = Field(
        3600.0, gt=0, description="Longest wait between two attempts of one delivery."
    )
    webhook_retry_for_s: float = Field(
        86400.0,
        gt=0,
        description="How long after its first attempt a delivery is retried before it is failed.",
    )
    webhook_endpoints_max: int = Field(
        10, ge=1, description="Webhook endpoints a workspace may register."
    )
