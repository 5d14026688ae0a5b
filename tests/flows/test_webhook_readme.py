"""The receiver example of the webhooks guide (``docs/how-to/webhooks.md``), run exactly as printed
against a real signed delivery of the ``deliver-webhook`` flow, so the example cannot rot."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flows.webhooks import DeliveryParams, deliver_webhook
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from storage.catalog.webhooks.events import emit
from storage.catalog.webhooks.store import WebhookStore
from tests.fixtures.settings_env import export_settings
from tests.fixtures.webhook_receiver import WebhookReceiver
from ves.settings import Settings

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "webhooks.md"


def guide_receiver() -> Callable[..., dict[str, Any]]:
    """``verify_webhook`` as the webhooks guide defines it (its one Python block)."""
    [code] = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/how-to/webhooks.md", "exec"), namespace)
    verify: Callable[..., dict[str, Any]] = namespace["verify_webhook"]
    return verify


def test_the_guides_receiver_verifies_a_real_delivery(
    settings: Settings, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    export_settings(monkeypatch, settings)
    monkeypatch.setenv("VES_ALLOW_PRIVATE_SOURCES", "true")
    tenant_id = TenantStore(catalog).create_tenant("acme").tenant_id
    verify_webhook = guide_receiver()
    with WebhookReceiver() as receiver:
        endpoint = WebhookStore(catalog).create_endpoint(
            tenant_id, receiver.url, ["export.ready"], None, 10
        )
        with catalog.write() as conn:
            [delivery_id] = emit(conn, tenant_id, "export.ready", {"export_id": "exp_1"})
        assert deliver_webhook(DeliveryParams(delivery_id=delivery_id, attempt=1)) == "delivered"
    [got] = receiver.received
    event = verify_webhook(endpoint.secret, got.headers, got.body)
    assert event["type"] == "export.ready" and event["data"] == {"export_id": "exp_1"}
    with pytest.raises(ValueError, match="signature"):
        verify_webhook(endpoint.secret, got.headers, got.body.replace(b"exp_1", b"exp_2"))
    with pytest.raises(ValueError, match="signature"):
        other = WebhookStore(catalog).create_endpoint(
            tenant_id, receiver.url, ["run.failed"], None, 10
        )
        verify_webhook(other.secret, got.headers, got.body)
    stale = {**got.headers, "webhook-timestamp": str(int(got.headers["webhook-timestamp"]) - 3600)}
    with pytest.raises(ValueError, match="timestamp"):
        verify_webhook(endpoint.secret, stale, got.body)
