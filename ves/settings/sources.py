"""How the service reaches a URL it is given: a recording's source, and a webhook receiver."""

from __future__ import annotations

from pydantic import Field

from ves.settings.base import GiB, SettingsGroup


class SourceSettings(SettingsGroup):
    """The address guard (SSRF) on every URL the server contacts, the probe at registration, and
    the bounds of a run's download."""

    allow_private_sources: bool = Field(
        False,
        description=(
            "Allow source URLs that resolve to loopback or private addresses. Link-local "
            "(169.254.0.0/16, fe80::/10), multicast, reserved addresses and file: stay refused."
        ),
    )
    probe_sources: bool = Field(
        True, description="Contact a source URL at registration to refuse unreachable ones early."
    )
    source_timeout_s: float = Field(
        5.0, gt=0, le=120, description="Connect/read timeout for contacting a source URL."
    )
    max_source_bytes: int = Field(
        2 * GiB, gt=0, description="Largest source a run downloads (URL and HLS sources)."
    )
    read_timeout_s: float = Field(
        30.0, gt=0, description="Longest wait for data from a source while downloading."
    )
