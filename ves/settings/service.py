"""The service's own processes: the API's address, the Prefect server and workers, logs, signing."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr, field_validator

from ves.settings.base import MiB, SettingsGroup


class ServiceSettings(SettingsGroup):
    """Where the API and Prefect listen, how many runs a worker takes, logs and the signing key."""

    host: str = Field("127.0.0.1", description="Address the API listens on.")
    port: int = Field(8000, ge=1, le=65535, description="Port of the API.")
    metrics_token: SecretStr | None = Field(
        None,
        description="Operator bearer token for `GET /metrics`. Without one, `/metrics` answers "
        "only while the API listens on loopback (as `make run` starts it).",
    )
    public_url: str | None = Field(
        None, description="Base URL clients use to reach the API (default http://host:port)."
    )
    read_cache_bytes: int = Field(
        256 * MiB,
        ge=0,
        description="Memory the API keeps for the rendered artifacts and thumbnails of published "
        "runs (least recently used dropped first); 0 turns the cache off.",
    )
    prefect_port: int = Field(4200, ge=1, le=65535, description="Port of the local Prefect server.")
    prefect_host: str = Field(
        "127.0.0.1",
        description="Address the local Prefect server listens on (`0.0.0.0` to let workers on "
        "other machines reach it).",
    )
    prefect_database_url: str | None = Field(
        None,
        description="Database of the local Prefect server: unset for SQLite in the data folder, or "
        "`postgresql+asyncpg://user:password@host/db` (Prefect's advice beyond one machine).",
    )
    local_worker: bool = Field(
        True, description="`ves serve` also starts a worker here (false: workers run elsewhere)."
    )
    warm_start: bool = Field(
        True,
        description="Workers started by `ves serve`/`ves worker` fork each run from a process that"
        " has imported the flow's code once (`flows.warm_start`), instead of a new interpreter.",
    )
    worker_limit: int = Field(
        2, ge=1, le=64, description="Runs one local worker processes at once (2 cores: 2)."
    )
    heartbeat_timeout_s: float = Field(
        90.0, gt=0, description="A running run silent this long is failed as stopped."
    )
    signing_key_file: Path | None = Field(
        None,
        description="PEM Ed25519 private key that signs evidence bundles, shared by every machine;"
        " unset: `data_dir/keys/active.pem`, created on first use (docs/how-to/exports.md).",
    )
    c2pa_tsa_url: str | None = Field(
        None,
        description="RFC 3161 timestamp authority asked to timestamp the Content Credentials (C2PA)"
        " of exported clips; unset: none, signing never needs the network"
        " (docs/how-to/content-credentials.md).",
    )
    log_level: str = Field("info", description="Log level of the service processes.")

    @field_validator("log_level")
    @classmethod
    def _known_log_level(cls, value: str) -> str:
        level = value.lower()
        if level not in {"critical", "error", "warning", "info", "debug"}:
            raise ValueError("log_level must be one of critical, error, warning, info, debug")
        return level

    @property
    def base_url(self) -> str:
        """The URL clients use to reach the API, without a trailing slash."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = "127.0.0.1" if self.host in {"0.0.0.0", "::"} else self.host  # noqa: S104
        return f"http://{host}:{self.port}"
