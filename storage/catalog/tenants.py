"""Tenants and API keys.

A key reads ``ves_<key id>_<secret>``. Only the SHA-256 of the whole key is stored: keys carry
256 bits of randomness, so a fast hash is enough (no password stretching needed), and the lookup
goes by key id, then compares hashes in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import replace

from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from storage.catalog.database import Catalog, first_row
from storage.catalog.records import ApiKey, Tenant
from ves.clock import now_rfc3339
from ves.errors import Conflict, NotFound
from ves.ids import is_id, new_id

KEY_PREFIX = "ves_"


def hash_key(plaintext: str) -> str:
    """The stored form of a key."""
    return hashlib.sha256(plaintext.encode()).hexdigest()


def _split_key(plaintext: str) -> str | None:
    """The key id inside ``plaintext``, or None when it is not shaped like one of our keys."""
    if not plaintext.startswith(KEY_PREFIX):
        return None
    body, _, secret = plaintext[len(KEY_PREFIX) :].partition("_")
    key_id = f"key_{body}"
    return key_id if secret and is_id(key_id, "key") else None


class TenantStore:
    """Create and find tenants; issue, revoke and check their keys."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def create_tenant(self, name: str, plan: str = "sandbox") -> Tenant:
        """A new tenant; ``Conflict`` when the name is taken."""
        tenant = Tenant(new_id("ten"), name, plan, now_rfc3339())
        try:
            with self.catalog.write() as conn:
                conn.execute(
                    text(
                        "INSERT INTO tenants (tenant_id, name, plan, created_at)"
                        " VALUES (:tenant_id, :name, :plan, :created_at)"
                    ),
                    {
                        "tenant_id": tenant.tenant_id,
                        "name": tenant.name,
                        "plan": tenant.plan,
                        "created_at": tenant.created_at,
                    },
                )
        except IntegrityError as exc:
            raise Conflict(f"a tenant named {name!r} already exists") from exc
        return tenant

    def find_tenant(self, name: str) -> Tenant | None:
        """The tenant named ``name``, if any."""
        with self.catalog.read() as conn:
            row = first_row(conn, "SELECT * FROM tenants WHERE name = :name", name=name)
        return Tenant.from_row(row) if row else None

    def get_tenant(self, tenant_id: str) -> Tenant:
        """The tenant with this id; ``NotFound`` otherwise."""
        with self.catalog.read() as conn:
            row = first_row(conn, "SELECT * FROM tenants WHERE tenant_id = :id", id=tenant_id)
        if row is None:
            raise NotFound(f"no tenant {tenant_id}")
        return Tenant.from_row(row)

    def list_tenants(self) -> list[Tenant]:
        """Every tenant, oldest first."""
        with self.catalog.read() as conn:
            rows = conn.execute(text("SELECT * FROM tenants ORDER BY tenant_id")).mappings().all()
        return [Tenant.from_row(r) for r in rows]

    def create_key(self, tenant_id: str) -> tuple[ApiKey, str]:
        """Issue a key for the tenant; return its record and the plaintext (shown once)."""
        key_id = new_id("key")
        plaintext = f"{KEY_PREFIX}{key_id[4:]}_{secrets.token_urlsafe(32)}"
        key = ApiKey(key_id, tenant_id, now_rfc3339(), None)
        with self.catalog.write() as conn:
            conn.execute(
                text(
                    "INSERT INTO api_keys (key_id, tenant_id, key_hash, created_at)"
                    " VALUES (:key_id, :tenant_id, :key_hash, :created_at)"
                ),
                {
                    "key_id": key.key_id,
                    "tenant_id": tenant_id,
                    "key_hash": hash_key(plaintext),
                    "created_at": key.created_at,
                },
            )
        return key, plaintext

    def revoke_key(self, key_id: str) -> ApiKey:
        """Revoke a key (idempotent); ``NotFound`` when there is no such key."""
        with self.catalog.write() as conn:
            conn.execute(
                text(
                    "UPDATE api_keys SET revoked_at = :now"
                    " WHERE key_id = :key_id AND revoked_at IS NULL"
                ),
                {"now": now_rfc3339(), "key_id": key_id},
            )
            row = first_row(conn, "SELECT * FROM api_keys WHERE key_id = :key_id", key_id=key_id)
        if row is None:
            raise NotFound(f"no API key {key_id}")
        return ApiKey.from_row(row)

    def list_keys(self, tenant_id: str) -> list[ApiKey]:
        """The tenant's keys, revoked ones included, oldest first."""
        with self.catalog.read() as conn:
            rows = (
                conn.execute(
                    text("SELECT * FROM api_keys WHERE tenant_id = :tenant_id ORDER BY key_id"),
                    {"tenant_id": tenant_id},
                )
                .mappings()
                .all()
            )
        return [ApiKey.from_row(r) for r in rows]

    def authenticate(self, plaintext: str) -> Tenant | None:
        """The tenant owning this live key, with the key's id, or None (unknown, malformed or
        revoked)."""
        key_id = _split_key(plaintext)
        if key_id is None:
            return None
        with self.catalog.read() as conn:
            row = first_row(
                conn,
                "SELECT k.key_hash, k.revoked_at, t.* FROM api_keys k "
                "JOIN tenants t ON t.tenant_id = k.tenant_id WHERE k.key_id = :key_id",
                key_id=key_id,
            )
        if row is None or row["revoked_at"] is not None:
            return None
        if not hmac.compare_digest(row["key_hash"], hash_key(plaintext)):
            return None
        return replace(Tenant.from_row(row), key_id=key_id)
