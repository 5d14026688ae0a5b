"""Where the service keeps things: the data folder, the catalog, blobs, scratch, and how long."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, field_validator

from ves.settings.base import SettingsGroup


class StorageSettings(SettingsGroup):
    """The data folder, the catalog's database, the blob store (local or S3), worker scratch, and
    the retention sweep's own ages (what plans keep is in ``LimitSettings.plans``)."""

    data_dir: Path = Field(Path("./data"), description="Catalog, uploads and artifacts live here.")
    database_url: str | None = Field(
        None,
        description=(
            "Database of the catalog: unset for the SQLite file in the data folder, or "
            "`postgresql://user:password@host/db` (psycopg 3) shared by every worker."
        ),
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

    @field_validator("storage_url")
    @classmethod
    def _known_storage_url(cls, value: str | None) -> str | None:
        if value is not None and (not value.startswith("s3://") or value == "s3://"):
            raise ValueError("storage_url must be unset (the data folder) or s3://bucket/prefix")
        return value

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

    @property
    def artifacts_dir(self) -> Path:
        """Root of the Hive-partitioned artifact tree."""
        return self.data_dir / "artifacts"

    @property
    def work_root(self) -> Path:
        """Where running runs keep their work folders (worker-local, never shared)."""
        return self.work_dir or self.data_dir / "work"
