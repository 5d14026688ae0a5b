"""Keys: stored only as hashes, checked in constant time, revocable."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from ves.errors import Conflict, NotFound


def test_a_new_key_authenticates_its_tenant(tenants: TenantStore) -> None:
    tenant = tenants.create_tenant("acme")
    key, plaintext = tenants.create_key(tenant.tenant_id)
    assert plaintext.startswith("ves_")
    assert tenants.authenticate(plaintext) == replace(tenant, key_id=key.key_id)
    assert key.revoked_at is None


def test_only_a_hash_of_the_key_is_stored(tenants: TenantStore, catalog: Catalog) -> None:
    tenant = tenants.create_tenant("acme")
    _, plaintext = tenants.create_key(tenant.tenant_id)
    secret = plaintext.split("_", 2)[2]  # token_urlsafe may hold "_": all after the 2nd
    assert len(secret) >= 40
    if catalog.dialect == "sqlite":  # the bytes on disk (PostgreSQL's are the server's)
        path = Path(catalog.engine.url.database or "")
        files = [path, path.with_name(path.name + "-wal")]
        raw = b"".join(f.read_bytes() for f in files if f.exists())
        assert secret.encode() not in raw
    with catalog.read() as conn:
        stored = conn.execute(text("SELECT key_hash FROM api_keys")).scalar_one()
    assert stored != plaintext and len(stored) == 64


@pytest.mark.parametrize(
    "mangle",
    [
        lambda k: k[:-1] + ("A" if k[-1] != "A" else "B"),  # wrong secret
        lambda k: "ves_" + "0" * 26 + "_secret",  # unknown key id
        lambda k: k.replace("ves_", "xyz_"),  # not our format
        lambda k: "",
        lambda k: k + "extra",
    ],
)
def test_wrong_keys_do_not_authenticate(tenants: TenantStore, mangle) -> None:  # type: ignore[no-untyped-def]
    tenant = tenants.create_tenant("acme")
    _, plaintext = tenants.create_key(tenant.tenant_id)
    assert tenants.authenticate(mangle(plaintext)) is None


def test_a_revoked_key_stops_working_and_others_keep_working(tenants: TenantStore) -> None:
    tenant = tenants.create_tenant("acme")
    first, first_key = tenants.create_key(tenant.tenant_id)
    second, second_key = tenants.create_key(tenant.tenant_id)
    revoked = tenants.revoke_key(first.key_id)
    assert revoked.revoked_at is not None
    assert tenants.authenticate(first_key) is None
    assert tenants.authenticate(second_key) == replace(tenant, key_id=second.key_id)
    assert tenants.revoke_key(first.key_id).revoked_at == revoked.revoked_at  # idempotent


def test_unknown_key_cannot_be_revoked(tenants: TenantStore) -> None:
    with pytest.raises(NotFound):
        tenants.revoke_key("key_nope")


def test_tenant_names_are_unique(tenants: TenantStore) -> None:
    tenants.create_tenant("acme")
    with pytest.raises(Conflict):
        tenants.create_tenant("acme")
