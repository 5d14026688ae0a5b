"""Service settings, read once from the environment (prefix ``VES_``) at the entry point.

No module builds a ``Settings()`` at import time: the entry point (``ves serve``, the flow, a test)
builds one and passes it down, so tests can build their own without touching the environment.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

from ves.plans import DEFAULT_PLANS, PlanLimits
from ves.settings_processing import GiB, MiB, ProcessingSettings


class Settings(ProcessingSettings):
    """Every knob of the service; docs/reference/configuration.md is rendered from them."""

    model_config = SettingsConfigDict(
        env_prefix="VES_", extra="ignore", frozen=True, populate_by_name=True
    )

    host: str = Field("127.0.0.1", description="Address the API listens on.")
    port: int = Field(8000, ge=1, le=65535, description="Port of the API.")
    data_dir: Path = Field(Path("./data"), description="Catalog, uploads and artifacts live here.")
    database_url: str | None = Field(
        None,
        description=(
            "Database of the catalog: unset for the SQLite file in the data folder, or "
            "`postgresql://user:password@host/db` (psycopg 3) shared by every worker."
        ),
    )
    public_url: str | None = Field(
        None, description="Base URL clients use to reach the API (default http://host:port)."
    )
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
    max_queued_runs: int = Field(
        20,
        ge=1,
        le=10_000,
        description="Runs one tenant may have waiting in line (beyond its plan's concurrent_runs);"
        " one more is refused with 429 and Retry-After.",
    )
    ask_llm_url: str | None = Field(
        None,
        description=(
            "OpenAI-compatible endpoint (base URL, e.g. http://127.0.0.1:8080/v1) that may phrase "
            "answers from the retrieved evidence; off when unset. Its answers pass the same "
            "guardrail, else the rule-based answer is returned."
        ),
    )
    ask_llm_model: str = Field("gpt-4o-mini", description="Model name sent to that endpoint.")
    ask_llm_api_key: SecretStr | None = Field(None, description="Bearer key for that endpoint.")
    ask_llm_timeout_s: float = Field(
        10.0, gt=0, le=120, description="Longest wait for that endpoint before answering alone."
    )
    heartbeat_timeout_s: float = Field(
        90.0, gt=0, description="A running run silent this long is failed as stopped."
    )
    plans: dict[str, PlanLimits] = Field(
        default_factory=lambda: dict(DEFAULT_PLANS),
        description=(
            'Plans by name, as JSON (`{"sandbox": {"videos": 25, ...}}`); see `ves/plans.py`. '
            "New tenants get `sandbox`."
        ),
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
    # Blob storage: uploads, sources, thumbnails and artifacts (``storage/artifacts/blobs.py``).
    storage_url: str | None = Field(
        None,
        description=(
            "Where uploads and artifacts live: unset for the data folder, or "
            "`s3://bucket/prefix` for an S3-compatible object store shared by every worker."
        ),
    )
    work_dir: Path | None = Field(
        None,
        description="Worker-local scratch of running runs, never shared (default `data_dir/work`).",
    )
    s3_endpoint_url: str | None = Field(
        None,
        validation_alias=AliasChoices("VES_S3_ENDPOINT_URL", "AWS_ENDPOINT_URL"),
        description="Endpoint of the object store (e.g. http://127.0.0.1:9000); AWS when unset.",
    )
    s3_region: str | None = Field(
        None,
        validation_alias=AliasChoices("VES_S3_REGION", "AWS_REGION", "AWS_DEFAULT_REGION"),
        description="Region of the bucket (default us-east-1).",
    )
    s3_access_key_id: str | None = Field(
        None,
        validation_alias=AliasChoices("VES_S3_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"),
        description="Access key of the object store.",
    )
    s3_secret_access_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("VES_S3_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"),
        description="Secret key of the object store.",
    )
    s3_presign: bool = Field(
        False,
        description="Answer thumbnail requests with a 307 to a presigned URL instead of the bytes.",
    )
    orphan_after_s: float = Field(
        3600.0,
        gt=0,
        description=(
            "Age after which an artifact prefix without a manifest (a run that died while "
            "publishing) is deleted by the retention sweep."
        ),
    )
    audit_retention_days: int = Field(
        365,
        ge=1,
        description=(
            "Days audit records are kept (whatever the plan keeps artifacts): the retention sweep "
            "deletes older ones from the start of each chain, leaving a checkpoint."
        ),
    )
    signing_key_file: Path | None = Field(
        None,
        description="PEM Ed25519 private key that signs evidence bundles, shared by every machine;"
        " unset: `data_dir/keys/active.pem`, created on first use (docs/how-to/exports.md).",
    )
    log_level: str = Field("info", description="Log level of the service processes.")

    # --- Webhooks (issue 17, webhooks part) ---
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

    @field_validator("storage_url")
    @classmethod
    def _known_storage_url(cls, value: str | None) -> str | None:
        if value is not None and (not value.startswith("s3://") or value == "s3://"):
            raise ValueError("storage_url must be unset (the data folder) or s3://bucket/prefix")
        return value

    @field_validator("log_level")
    @classmethod
    def _known_log_level(cls, value: str) -> str:
        level = value.lower()
        if level not in {"critical", "error", "warning", "info", "debug"}:
            raise ValueError("log_level must be one of critical, error, warning, info, debug")
        return level

    @model_validator(mode="after")
    def _refuse_unsafe_combinations(self) -> Settings:
        if self.max_body_bytes > self.max_upload_bytes:
            raise ValueError("max_body_bytes must not exceed max_upload_bytes")
        return self

    @property
    def base_url(self) -> str:
        """The URL clients use to reach the API, without a trailing slash."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = "127.0.0.1" if self.host in {"0.0.0.0", "::"} else self.host  # noqa: S104
        return f"http://{host}:{self.port}"

    @property
    def catalog_path(self) -> Path:
        """The embedded SQLite catalog file (used when ``database_url`` is unset)."""
        return self.data_dir / "catalog.sqlite3"

    @property
    def catalog_url(self) -> str:
        """The catalog's database: ``database_url``, else the SQLite file in the data folder."""
        return self.database_url or f"sqlite:///{self.catalog_path}"

    @property
    def keys_dir(self) -> Path:
        """The signing keys' records (and the active key when no file is given)."""
        return self.data_dir / "keys"

    @property
    def uploads_dir(self) -> Path:
        """Where uploaded recordings are stored, one folder per tenant and video."""
        return self.data_dir / "uploads"

    def plan(self, name: str) -> PlanLimits:
        """The limits of a plan; an unknown name gets ``sandbox``'s (never unlimited)."""
        return self.plans.get(name) or self.plans.get("sandbox") or PlanLimits()

    @property
    def models_root(self) -> Path:
        """Where the ONNX models that execute may name live."""
        return self.models_dir or self.data_dir / "models"

    @property
    def artifacts_dir(self) -> Path:
        """Root of the Hive-partitioned artifact tree."""
        return self.data_dir / "artifacts"

    @property
    def work_root(self) -> Path:
        """Where running runs keep their work folders (worker-local, never shared)."""
        return self.work_dir or self.data_dir / "work"

    # --- Estimates and caps (issue 17, part "estimates and caps"; docs/how-to/estimates.md) ---
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
