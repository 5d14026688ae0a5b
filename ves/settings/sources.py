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
    header_max_bytes: int = Field(
        4 * 1024 * 1024,
        gt=0,
        description=(
            "Most bytes a dry run reads of a URL or HLS source to learn its length from its "
            "header (within `VES_SOURCE_TIMEOUT_S` in all): a 10-minute MP4's index is about "
            "0.1 MB, an hour's under 2 MB."
        ),
    )
    max_source_bytes: int = Field(
        2 * GiB, gt=0, description="Largest source a run downloads (URL and HLS sources)."
    )
    read_timeout_s: float = Field(
        30.0, gt=0, description="Longest wait for data from a source while downloading."
    )
