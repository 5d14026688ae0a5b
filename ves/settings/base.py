"""What every group of settings shares: the ``VES_`` prefix, frozen values, and the byte units."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict

MiB = 1024 * 1024
GiB = 1024 * MiB


class SettingsGroup(BaseSettings):
    """Base of each group class; declares no field, so each field's group is the class that does.

    The groups are composed by inheritance into ``ves.settings.Settings``; the same config here
    keeps a group usable alone (``ProcessingSettings()`` reads the same ``VES_<FIELD>`` names).
    """

    model_config = SettingsConfigDict(
        env_prefix="VES_", extra="ignore", frozen=True, populate_by_name=True
    )
