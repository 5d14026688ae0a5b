"""Response models of ``GET /api/public/signing-keys``: the keys that sign evidence bundles."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

_PEM_EXAMPLE = (
    "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA1MicXq7dePc5nG1v0WabykLMRg2wKHv7T5oVRkto9/0=\n"
    "-----END PUBLIC KEY-----\n"
)


class SigningKeyPublic(BaseModel):
    """One key the service signs or signed bundles with."""

    key_id: str = Field(
        description="`ed25519:` and the first 16 hex digits of the SHA-256 of the raw public key;"
        " a bundle's manifest names the key that signed it.",
        examples=["ed25519:95e8cbb0ae30e21f"],
    )
    algorithm: Literal["Ed25519"]
    public_key_pem: str = Field(
        description="The public key (SubjectPublicKeyInfo PEM), for `ves verify --public-key`.",
        examples=[_PEM_EXAMPLE],
    )
    created_at: str = Field(examples=["2026-11-25T19:23:36.438Z"])
    retired_at: str | None = Field(
        description="When a rotation replaced it (it no longer signs; its bundles still verify).",
        examples=[None],
    )
    active: bool = Field(description="Whether it signs new bundles (exactly one key is active).")


class SigningKeysPublic(BaseModel):
    """The active key first, then the retired ones, newest first."""

    keys: list[SigningKeyPublic]
