"""The public keys that evidence bundles are signed with (no key needed: anyone may verify)."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from api.deps import SettingsDep
from api.schemas.signing_keys import C2PA_ROOT_EXAMPLE, SigningKeyPublic, SigningKeysPublic
from ves.credentials import ContentCredentialsCA
from ves.signing import KeyRing

router = APIRouter(tags=["signing keys"])

_EXAMPLE = {
    "keys": [
        {
            "key_id": "ed25519:8b59e136330903ca",
            "algorithm": "Ed25519",
            "public_key_pem": "-----BEGIN PUBLIC KEY-----\n"
            "MCowBQYDK2VwAyEAtaO8P3Hhv9Yl2l0oWkqkJ3l6wNQn6c3b0qG1i6dJr1E=\n"
            "-----END PUBLIC KEY-----\n",
            "created_at": "2026-11-25T19:23:36.451Z",
            "retired_at": None,
            "active": True,
        },
        {
            "key_id": "ed25519:95e8cbb0ae30e21f",
            "algorithm": "Ed25519",
            "public_key_pem": "-----BEGIN PUBLIC KEY-----\n"
            "MCowBQYDK2VwAyEA1MicXq7dePc5nG1v0WabykLMRg2wKHv7T5oVRkto9/0=\n"
            "-----END PUBLIC KEY-----\n",
            "created_at": "2026-10-01T08:00:00.000Z",
            "retired_at": "2026-11-25T19:23:36.451Z",
            "active": False,
        },
    ],
    "c2pa_trust_anchors_pem": C2PA_ROOT_EXAMPLE,
}


@router.get(
    "/api/public/signing-keys",
    summary="Keys that sign evidence bundles",
    description=(
        "No key needed. The Ed25519 public keys the service signs evidence bundles with: the "
        "`active` one, which signs new bundles, and every key retired by a rotation (`ves "
        "signing-key rotate`), kept so that older bundles still verify. A bundle's "
        "`manifest.json` names its signer's `key_id`; save that key's `public_key_pem` to a file "
        "and run `ves verify BUNDLE.zip --public-key FILE` to prove the bundle came from this "
        "service (the key inside a bundle proves only that it is intact). The key is created on "
        "first use when the service has none (docs/how-to/exports.md). "
        "`c2pa_trust_anchors_pem` holds the root certificates of the Content Credentials (C2PA)"
        " embedded in each exported clip: the trust anchors for any C2PA verifier, or for "
        "`ves verify BUNDLE.zip --trust FILE` (docs/how-to/content-credentials.md)."
    ),
    responses={200: {"content": {"application/json": {"example": _EXAMPLE}}}},
)
async def list_signing_keys(settings: SettingsDep) -> SigningKeysPublic:
    records = await run_in_threadpool(KeyRing.from_settings(settings).public_keys)
    roots = await run_in_threadpool(ContentCredentialsCA.from_settings(settings).roots_pem)
    keys = [SigningKeyPublic(**asdict(r)) for r in records]
    return SigningKeysPublic(keys=keys, c2pa_trust_anchors_pem=roots)
