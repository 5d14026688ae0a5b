"""GET /api/public/signing-keys: no key needed; the keys a bundle can be verified with."""

from __future__ import annotations

import httpx
from cryptography import x509

from ves.credentials import ContentCredentialsCA, fingerprint_of
from ves.settings import Settings
from ves.signing import KeyRing, load_public_key, verify_signature


def test_the_signing_keys_are_public_and_list_the_retired_ones(
    anon: httpx.Client, settings: Settings
) -> None:
    first = anon.get("/api/public/signing-keys")
    assert first.status_code == 200
    [active] = first.json()["keys"]
    ring = KeyRing.from_settings(settings)
    signed = ring.active().sign_b64(b"manifest")
    assert active["key_id"] == ring.active().key_id
    assert (active["algorithm"], active["active"], active["retired_at"]) == ("Ed25519", True, None)
    old, new = ring.rotate()
    keys = anon.get("/api/public/signing-keys").json()["keys"]
    assert [(k["key_id"], k["active"]) for k in keys] == [(new.key_id, True), (old.key_id, False)]
    assert keys[1]["retired_at"] is not None
    assert verify_signature(
        load_public_key(keys[1]["public_key_pem"].encode()), signed, b"manifest"
    )


def test_the_route_is_documented_with_an_example(anon: httpx.Client) -> None:
    operation = anon.get("/openapi.json").json()["paths"]["/api/public/signing-keys"]["get"]
    assert "ves verify" in operation["description"] and not operation.get("security")
    example = operation["responses"]["200"]["content"]["application/json"]["example"]
    assert [k["active"] for k in example["keys"]] == [True, False]


def test_the_content_credentials_roots_are_published_and_kept_across_rotations(
    anon: httpx.Client, settings: Settings
) -> None:
    ca = ContentCredentialsCA.from_settings(settings)
    first = anon.get("/api/public/signing-keys").json()["c2pa_trust_anchors_pem"]
    [root] = x509.load_pem_x509_certificates(first.encode())
    assert fingerprint_of(root) == ca.signer().root_fingerprint
    old, new = ca.rotate()
    after = anon.get("/api/public/signing-keys").json()["c2pa_trust_anchors_pem"]
    roots = x509.load_pem_x509_certificates(after.encode())
    assert [fingerprint_of(r) for r in roots] == [new, old]  # the active root first


def test_the_roots_field_is_documented(anon: httpx.Client) -> None:
    schema = anon.get("/openapi.json").json()["components"]["schemas"]["SigningKeysPublic"]
    field = schema["properties"]["c2pa_trust_anchors_pem"]
    assert "ves verify" in field["description"]
    assert field["examples"][0].startswith("-----BEGIN CERTIFICATE-----")
