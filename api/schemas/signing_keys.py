"""Response models of ``GET /api/public/signing-keys``: the keys that sign evidence bundles."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

_PEM_EXAMPLE = (
    "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA1MicXq7dePc5nG1v0WabykLMRg2wKHv7T5oVRkto9/0=\n"
    "-----END PUBLIC KEY-----\n"
)

# A root as the route publishes it (its example, and the schema field's).
C2PA_ROOT_EXAMPLE = (
    "-----BEGIN CERTIFICATE-----\n"
    "MIIB7DCCAZGgAwIBAgIUe5q+YlTfXiDgEoWWtQDJYYbKRzMwCgYIKoZIzj0EAwIw\n"
    "UTEfMB0GA1UECgwWVmlkZW8gRXZpZGVuY2UgU2VydmljZTEuMCwGA1UEAwwlVkVT\n"
    "IENvbnRlbnQgQ3JlZGVudGlhbHMgcm9vdCBiYjk2MDBmMTAgFw0yNjExMjYxOTIz\n"
    "MzhaGA8yMDU2MTExODE5MjgzOFowUTEfMB0GA1UECgwWVmlkZW8gRXZpZGVuY2Ug\n"
    "U2VydmljZTEuMCwGA1UEAwwlVkVTIENvbnRlbnQgQ3JlZGVudGlhbHMgcm9vdCBi\n"
    "Yjk2MDBmMTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABKbIU6BIethOMGK8kZvD\n"
    "oz7iA20rEOgUmIyU0KznNi0Sbu0u5FjdVZ5hQ2Gyg7KUaSYggUGaoFgJvHO317n3\n"
    "zCOjRTBDMB0GA1UdDgQWBBRfXMuQLeRFokmlPrjsHlOL2X3n2zASBgNVHRMBAf8E\n"
    "CDAGAQH/AgEAMA4GA1UdDwEB/wQEAwIBBjAKBggqhkjOPQQDAgNJADBGAiEAzyJf\n"
    "tVtkseC1CjBs6Xz9D15dN8kjaF634H25I7YG6uwCIQDyE7zzmgok7+hdejBrnQ2G\n"
    "SwKqy8rep5c36/YUCGHaAg==\n"
    "-----END CERTIFICATE-----\n"
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
    """The active key first, then the retired ones, newest first; and the roots of the clips'
    Content Credentials."""

    keys: list[SigningKeyPublic]
    c2pa_trust_anchors_pem: str = Field(
        description="The root certificates (PEM, ES256) of the service's Content Credentials"
        " (C2PA) on exported clips: the active root first, then every root a rotation retired,"
        " so that older clips still verify. Save it to a file and give it to a C2PA verifier as"
        " its only trust anchors, or to `ves verify BUNDLE.zip --trust FILE`; a clip whose"
        " manifest validates as Trusted under it was signed by this service"
        " (docs/how-to/content-credentials.md).",
        examples=[C2PA_ROOT_EXAMPLE],
    )
