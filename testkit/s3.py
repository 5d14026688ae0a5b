"""A real S3-compatible server for the tests: moto's, over HTTP on 127.0.0.1, one per session.

moto's server speaks the S3 REST API (signatures, multipart uploads, listing, presigned URLs), so
pyarrow's S3 client, DuckDB-through-pyarrow and botocore's presigner are exercised for real, with
no docker and no network. It cannot start only if the package is broken or the port is refused:
then the tests fail loudly (never skip), since a skipped S3 suite would look like a green one.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from storage.artifacts.blobs import BlobStore, LocalBlobStore, S3BlobStore, S3Target

ACCESS_KEY = "testing"
SECRET_KEY = "testing"  # moto accepts any credentials; these are not secrets
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Server:
    """Where the test S3 server listens."""

    endpoint_url: str

    def target(self, bucket: str, prefix: str = "") -> S3Target:
        return S3Target(bucket, prefix, self.endpoint_url, REGION, ACCESS_KEY, SECRET_KEY)

    def filesystem(self) -> pafs.S3FileSystem:
        """A pyarrow client of the server (it may create buckets)."""
        return pafs.S3FileSystem(
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region=REGION,
            endpoint_override=self.endpoint_url.removeprefix("http://"),
            scheme="http",
            allow_bucket_creation=True,
        )

    def create_bucket(self) -> str:
        """A fresh, empty bucket (one per test keeps tests independent)."""
        bucket = f"ves-{uuid.uuid4().hex[:16]}"
        self.filesystem().create_dir(bucket)
        return bucket

    def store_env(self, bucket: str, prefix: str = "ves") -> dict[str, str]:
        """The ``VES_*`` variables of a process whose store is the bucket."""
        return {f"VES_{k.upper()}": v for k, v in self.settings_overrides(bucket, prefix).items()}

    def settings_overrides(self, bucket: str, prefix: str = "ves") -> dict[str, str]:
        """What ``Settings`` needs to use the bucket as its store."""
        return {
            "storage_url": f"s3://{bucket}/{prefix}",
            "s3_endpoint_url": self.endpoint_url,
            "s3_region": REGION,
            "s3_access_key_id": ACCESS_KEY,
            "s3_secret_access_key": SECRET_KEY,
        }

    def use_fresh_bucket(self, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
        """Settings overrides for a fresh bucket, also exported as ``VES_*`` variables (flows
        read their settings from the environment, as a worker's do)."""
        overrides = self.settings_overrides(self.create_bucket())
        for name, value in overrides.items():
            monkeypatch.setenv(f"VES_{name.upper()}", value)
        return overrides


def start_s3_server() -> Iterator[S3Server]:
    """Start moto's threaded server on a free port; fail the session loudly if it cannot."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    try:
        from moto.server import ThreadedMotoServer

        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
    except Exception as exc:
        pytest.fail(f"the S3 test server (moto) could not start: {exc!r}", pytrace=False)
    try:
        yield S3Server(f"http://{host}:{port}")
    finally:
        server.stop()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    yield from start_s3_server()


@pytest.fixture
def s3_store(s3_server: S3Server) -> S3BlobStore:
    """A store on a fresh bucket, under a prefix (as deployments usually have one)."""
    return S3BlobStore(s3_server.target(s3_server.create_bucket(), "ves"), presign=True)


@pytest.fixture(params=["local", "s3"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    """The same test on the data folder and on a fresh bucket of the S3 server."""
    if request.param == "local":
        return LocalBlobStore(tmp_path / "data")
    server: S3Server = request.getfixturevalue("s3_server")
    return S3BlobStore(server.target(server.create_bucket(), "ves"), presign=True)
