"""Service settings, read once from the environment (prefix ``VES_``) at the entry point.

No module builds a ``Settings()`` at import time: the entry point (``ves serve``, the flow, a test)
builds one and passes it down, so tests can build their own without touching the environment.

``Settings`` is composed by inheritance of one class per domain (``SETTINGS_GROUPS``, one module
each), so every variable stays ``VES_<FIELD>`` and ``settings.field`` reads any of them. Each field
is declared in exactly one group; a rule that spans groups lives on ``Settings`` itself.
"""

from __future__ import annotations

from pathlib import Path

from pydantic_settings import SettingsConfigDict

from ves.settings.ask import AskSettings
from ves.settings.base import SettingsGroup
from ves.settings.limits import LimitSettings
from ves.settings.processing import ProcessingSettings
from ves.settings.service import ServiceSettings
from ves.settings.sources import SourceSettings
from ves.settings.storage import StorageSettings
from ves.settings.webhooks import WebhookSettings

__all__ = [
    "SETTINGS_GROUPS",
    "AskSettings",
    "LimitSettings",
    "ProcessingSettings",
    "ServiceSettings",
    "Settings",
    "SettingsGroup",
    "SourceSettings",
    "StorageSettings",
    "WebhookSettings",
]


class Settings(
    ServiceSettings,
    StorageSettings,
    SourceSettings,
    ProcessingSettings,
    LimitSettings,
    WebhookSettings,
    AskSettings,
):
    """Every knob of the service; docs/reference/configuration.md is rendered from them."""

    model_config = SettingsConfigDict(
        env_prefix="VES_", extra="ignore", frozen=True, populate_by_name=True
    )

    @property
    def models_root(self) -> Path:
        """Where the ONNX models that execute may name live (processing's folder, else storage's
        data folder)."""
        return self.models_dir or self.data_dir / "models"


# (title, class, purpose) in the order a reader meets them, which is also Settings' MRO: the
# configuration reference (docs/gen_reference.py) groups the fields by the class that declares each.
SETTINGS_GROUPS: tuple[tuple[str, type[SettingsGroup], str], ...] = (
    (
        "Service",
        ServiceSettings,
        "Where the API and Prefect listen, the workers, logs and the evidence signing key.",
    ),
    (
        "Storage",
        StorageSettings,
        "The data folder, the catalog's database, blobs (local or S3), scratch and retention ages.",
    ),
    (
        "Sources",
        SourceSettings,
        "How URLs given to the service are guarded, probed and downloaded.",
    ),
    (
        "Processing",
        ProcessingSettings,
        "How a run analyses a video: bounds, sampling, decoding, chunks, detectors and models.",
    ),
    (
        "Limits and prices",
        LimitSettings,
        "Plans, request bounds and timeouts, rate limits, queued runs, price and cost model.",
    ),
    (
        "Webhooks",
        WebhookSettings,
        "Delivery timeout, retry schedule and endpoints per workspace.",
    ),
    (
        "Ask Video",
        AskSettings,
        "The optional language-model endpoint that may phrase answers.",
    ),
)
