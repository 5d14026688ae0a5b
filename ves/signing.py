"""The service's Ed25519 signing key, which signs evidence bundles, and its public keys.

The active private key is ``<data>/keys/active.pem`` (PKCS#8 PEM, mode 0600), created on first
use, or the file named by ``VES_SIGNING_KEY_FILE`` (how many machines share one key). Every key
the service has signed with keeps a record ``<data>/keys/<hex>.json`` (its public key, when it was
created and retired), so a bundle signed before a rotation still verifies against the keys
``GET /api/public/signing-keys`` lists.

Creation is safe when two processes start at once: a key is written complete to a temporary file
and hard-linked to its name, which fails for the second process, who then reads the first one's.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ves.clock import now_rfc3339, to_rfc3339
from ves.errors import VesError

if TYPE_CHECKING:
    from ves.settings import Settings

ALGORITHM = "Ed25519"
ACTIVE_FILE = "active.pem"
_RAW = serialization.Encoding.Raw, serialization.PublicFormat.Raw


def key_id_of(public_key: Ed25519PublicKey) -> str:
    """``ed25519:`` and the first 16 hex digits of the SHA-256 of the raw 32-byte public key."""
    return "ed25519:" + hashlib.sha256(public_key.public_bytes(*_RAW)).hexdigest()[:16]


def public_key_pem(public_key: Ed25519PublicKey) -> str:
    """The public key as SubjectPublicKeyInfo PEM (what ``openssl pkey -pubin`` reads)."""
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def load_public_key(pem: bytes) -> Ed25519PublicKey:
    """An Ed25519 public key from PEM; ``ValueError`` for anything else."""
    key = serialization.load_pem_public_key(pem)
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"not an Ed25519 public key but {type(key).__name__}")
    return key


def verify_signature(public_key: Ed25519PublicKey, signature_b64: bytes, data: bytes) -> bool:
    """Whether ``signature_b64`` (base64, white space ignored) is the key's signature of data."""
    try:
        public_key.verify(base64.b64decode(b"".join(signature_b64.split()), validate=True), data)
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True)
class SigningKey:
    """A private Ed25519 key and its id."""

    private_key: Ed25519PrivateKey

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_pem(cls, pem: bytes, origin: str = "the key") -> SigningKey:
        """Read a PKCS#8 PEM private key; a file that is not one is a ``VesError``."""
        try:
            key = serialization.load_pem_private_key(pem, password=None)
        except (ValueError, TypeError) as exc:
            raise VesError(f"{origin} is not a PEM private key without password") from exc
        if not isinstance(key, Ed25519PrivateKey):
            raise VesError(f"{origin} is not an Ed25519 key but {type(key).__name__}")
        return cls(key)

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self.private_key.public_key()

    @property
    def key_id(self) -> str:
        return key_id_of(self.public_key)

    @property
    def public_key_pem(self) -> str:
        return public_key_pem(self.public_key)

    def private_pem(self) -> bytes:
        return self.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def derive_secret(self, purpose: str) -> bytes:
        """A 32-byte secret for ``purpose`` (e.g. HMAC keys of signed URLs), derived from the
        private key: every machine that shares the key derives the same one, and no other
        secret needs distributing. It changes when the key is rotated."""
        raw = self.private_key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        return hashlib.sha256(f"ves {purpose}\0".encode() + raw).digest()

    def sign_b64(self, data: bytes) -> bytes:
        """The Ed25519 signature of ``data``, base64 with a final newline (``manifest.sig``)."""
        return base64.b64encode(self.private_key.sign(data)) + b"\n"


@dataclass(frozen=True)
class PublicKeyRecord:
    """One key the service signs or signed with, as ``GET /api/public/signing-keys`` lists it."""

    key_id: str
    public_key_pem: str
    created_at: str
    retired_at: str | None
    active: bool
    algorithm: str = ALGORITHM


def write_private_file(path: Path, data: bytes, *, exclusive: bool) -> bool:
    """Write ``data`` to ``path`` (mode 0600) whole or not at all; with ``exclusive``, only if
    no file is there (False when another process made it first). Shared with
    ``ves.credentials``, whose CA files are created the same way.

    Raises:
        VesError: the folder cannot be written (the error says which).
    """
    try:
        return _write_whole(path, data, exclusive)
    except OSError as exc:
        raise VesError(f"cannot write the signing key file {path}: {exc.strerror or exc}") from exc


def _write_whole(path: Path, data: bytes, exclusive: bool) -> bool:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # mkstemp: mode 0600
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if not exclusive:
            Path(temp).replace(path)
            return True
        try:
            os.link(temp, path)
        except FileExistsError:
            return False
        return True
    finally:
        Path(temp).unlink(missing_ok=True)


class KeyRing:
    """The active signing key and the records of every key, in one folder.

    Args:
        keys_dir: where the records (and, without ``key_file``, the active key) live.
        key_file: a PEM private key given by the operator (``VES_SIGNING_KEY_FILE``).
    """

    def __init__(self, keys_dir: Path, key_file: Path | None = None) -> None:
        self.keys_dir = keys_dir
        self.key_file = key_file or keys_dir / ACTIVE_FILE

    @classmethod
    def from_settings(cls, settings: Settings) -> KeyRing:
        return cls(settings.keys_dir, settings.signing_key_file)

    def active(self) -> SigningKey:
        """The key that signs now, created (with its record) on first use."""
        if not self.key_file.exists():
            write_private_file(self.key_file, SigningKey.generate().private_pem(), exclusive=True)
        key = SigningKey.from_pem(self.key_file.read_bytes(), origin=str(self.key_file))
        self._ensure_record(key)
        return key

    def public_keys(self) -> list[PublicKeyRecord]:
        """Every key's record, the active one first, then the newest retired first."""
        active = self.active()
        records = [self._read_record(path) for path in sorted(self.keys_dir.glob("*.json"))]
        mine = next(r for r in records if r.key_id == active.key_id)
        others = sorted((r for r in records if r is not mine), key=lambda r: r.created_at)
        # A key replaced without ``rotate`` (a new VES_SIGNING_KEY_FILE) was retired when the
        # active one came.
        retired = [replace(r, retired_at=r.retired_at or mine.created_at) for r in others]
        return [replace(mine, active=True, retired_at=None), *reversed(retired)]

    def rotate(self) -> tuple[SigningKey, SigningKey]:
        """Make a new active key and retire the old one (its record stays); (old, new)."""
        old, new = self.active(), SigningKey.generate()
        self._write_record(new, created_at=now_rfc3339(), retired_at=None)
        old_record = self._read_record(self._record_path(old.key_id))
        self._write_record(old, created_at=old_record.created_at, retired_at=now_rfc3339())
        write_private_file(self.key_file, new.private_pem(), exclusive=False)
        return old, new

    def _record_path(self, key_id: str) -> Path:
        return self.keys_dir / f"{key_id.split(':')[-1]}.json"

    @staticmethod
    def _read_record(path: Path) -> PublicKeyRecord:
        record = json.loads(path.read_text())
        return PublicKeyRecord(**{k: v for k, v in record.items() if k != "active"}, active=False)

    def _ensure_record(self, key: SigningKey) -> None:
        """The record of a key first seen: created when its file was (the same in any process
        that races to write it, so the first writer's copy is as good as the others')."""
        if self._record_path(key.key_id).exists():
            return
        created = to_rfc3339(_mtime(self.key_file))
        self._write_record(key, created_at=created, retired_at=None, exclusive=True)

    def _write_record(
        self, key: SigningKey, *, created_at: str, retired_at: str | None, exclusive: bool = False
    ) -> None:
        record = PublicKeyRecord(key.key_id, key.public_key_pem, created_at, retired_at, False)
        body = {k: v for k, v in asdict(record).items() if k != "active"}
        data = json.dumps(body, indent=2, sort_keys=True).encode() + b"\n"
        write_private_file(self._record_path(key.key_id), data, exclusive=exclusive)


def _mtime(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)
