"""The service's small certificate authority for Content Credentials (C2PA) on exported clips.

C2PA refuses a self-signed signing certificate, so the service keeps a root certificate and a
signing (leaf) certificate issued by it, both ECDSA P-256 (ES256: the algorithm that
``c2pa-python`` signs MP4 with and that every verifier met here, ``c2pa-python``'s Reader and the
TypeScript ``@trustnxt/c2pa-ts``, accepts). They live in ``<data>/keys/c2pa/``:

    active.pem        the signing certificate, the root certificate, and both private keys
                      (mode 0600), written whole on first use (two processes starting at once
                      agree: the second reads the first one's file, as ``ves.signing`` does)
    roots/<fp>.pem    every root certificate that ever signed, kept across rotations so that a
                      clip signed before one still verifies against the published roots

The leaf carries what C2PA asks of a claim signer: keyUsage digitalSignature (critical),
extendedKeyUsage emailProtection (the one ``c2pa-rs`` 0.91 accepts by default) with
documentSigning and the C2PA claim-signing purpose, basicConstraints cA false, AKI and SKI.
``rotate`` makes a new root AND a new leaf: the root's key sits on the same disk as the leaf's,
so a leak of one is a leak of both, and a fresh root is what makes a rotation worth doing. No
timestamp authority is asked unless ``VES_C2PA_TSA_URL`` names one; without it a verifier checks
the certificates' validity at the time it verifies, hence the long validity periods below.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

from ves.errors import VesError
from ves.signing import write_private_file

if TYPE_CHECKING:
    from ves.settings import Settings

ALGORITHM = "ES256"
ORGANIZATION = "Video Evidence Service"
ACTIVE_FILE = "active.pem"
DOCUMENT_SIGNING = ObjectIdentifier("1.3.6.1.5.5.7.3.36")
C2PA_CLAIM_SIGNING = ObjectIdentifier("1.3.6.1.4.1.62558.2.1")
ROOT_VALIDITY = timedelta(days=365 * 30)
SIGNER_VALIDITY = timedelta(days=365 * 20)
_BACKDATE = timedelta(minutes=5)  # a verifier whose clock lags a little still sees it valid
_PEM = serialization.Encoding.PEM


def fingerprint_of(certificate: x509.Certificate) -> str:
    """The first 16 hex digits of the SHA-256 of the certificate's DER."""
    return certificate.fingerprint(hashes.SHA256()).hex()[:16]


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _key_usage(*, sign: bool, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )


def make_root(now: datetime) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A new root: a CA that may issue end-entity certificates only (path length 0)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(f"VES Content Credentials root {secrets.token_hex(4)}")
    certificate = (
        _builder(name, name, key.public_key(), now, ROOT_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(sign=False, ca=True), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, certificate


def make_signer(
    root_key: ec.EllipticCurvePrivateKey, root: x509.Certificate, now: datetime
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A new claim-signing certificate issued by ``root``."""
    key = ec.generate_private_key(ec.SECP256R1())
    purposes = [ExtendedKeyUsageOID.EMAIL_PROTECTION, DOCUMENT_SIGNING, C2PA_CLAIM_SIGNING]
    issuer_ski = root.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    certificate = (
        _builder(_name("VES evidence clip signer"), root.subject, key.public_key(), now)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(sign=True, ca=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage(purposes), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(issuer_ski),
            critical=False,
        )
        .sign(root_key, hashes.SHA256())
    )
    return key, certificate


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    now: datetime,
    validity: timedelta = SIGNER_VALIDITY,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + validity)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


@dataclass(frozen=True)
class ClaimSigner:
    """What signs a C2PA claim: the leaf certificate (PEM), its private key, an optional TSA.

    The certificate chain embedded in a clip is the leaf alone: a root shipped inside the file
    would prove nothing, a recipient trusts the root it obtained from the service.
    """

    certificate_pem: bytes
    private_key_pem: bytes
    root_fingerprint: str
    tsa_url: str | None = None
    algorithm: str = ALGORITHM


@dataclass(frozen=True)
class CaFiles:
    """The parsed ``active.pem``: the signer's and the root's certificates and keys."""

    signer: x509.Certificate
    signer_key: ec.EllipticCurvePrivateKey
    root: x509.Certificate
    root_key: ec.EllipticCurvePrivateKey

    @classmethod
    def generate(cls, now: datetime | None = None) -> CaFiles:
        now = now or datetime.now(UTC)
        root_key, root = make_root(now)
        signer_key, signer = make_signer(root_key, root, now)
        return cls(signer, signer_key, root, root_key)

    @classmethod
    def from_pem(cls, pem: bytes, origin: str) -> CaFiles:
        """Read ``active.pem`` (two certificates then two keys); anything else is a VesError."""
        try:
            signer, root = x509.load_pem_x509_certificates(pem)
            keys = [_load_key(block) for block in _key_blocks(pem)]
        except ValueError as exc:
            raise VesError(f"{origin} is not the service's Content Credentials CA file") from exc
        if len(keys) != 2:
            raise VesError(f"{origin} should hold two private keys, not {len(keys)}")
        return cls(signer, keys[0], root, keys[1])

    def to_pem(self) -> bytes:
        keys = [_private_pem(self.signer_key), _private_pem(self.root_key)]
        return self.signer.public_bytes(_PEM) + self.root.public_bytes(_PEM) + b"".join(keys)


def _key_blocks(pem: bytes) -> list[bytes]:
    marker = b"-----BEGIN PRIVATE KEY-----"
    return [marker + part for part in pem.split(marker)[1:]]


def _load_key(pem: bytes) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"not an EC private key but {type(key).__name__}")
    return key


def _private_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(_PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


class ContentCredentialsCA:
    """The CA's files in ``<keys_dir>/c2pa``: made on first use, rotated with the bundle key.

    Args:
        keys_dir: the service's keys folder (``Settings.keys_dir``).
        tsa_url: an RFC 3161 timestamp authority for the signatures (none by default).
    """

    def __init__(self, keys_dir: Path, tsa_url: str | None = None) -> None:
        self.folder = keys_dir / "c2pa"
        self.active_file = self.folder / ACTIVE_FILE
        self.tsa_url = tsa_url

    @classmethod
    def from_settings(cls, settings: Settings) -> ContentCredentialsCA:
        return cls(settings.keys_dir, settings.c2pa_tsa_url)

    def active(self) -> CaFiles:
        """The CA that signs now, created on first use (its root recorded)."""
        if not self.active_file.exists():
            write_private_file(self.active_file, CaFiles.generate().to_pem(), exclusive=True)
        files = CaFiles.from_pem(self.active_file.read_bytes(), str(self.active_file))
        self._record_root(files.root)
        return files

    def signer(self) -> ClaimSigner:
        """The active leaf as ``tasks.export.credentials.sign_clip`` takes it."""
        files = self.active()
        return ClaimSigner(
            certificate_pem=files.signer.public_bytes(_PEM),
            private_key_pem=_private_pem(files.signer_key),
            root_fingerprint=fingerprint_of(files.root),
            tsa_url=self.tsa_url,
        )

    def roots(self) -> list[x509.Certificate]:
        """Every root that signed, the active one first, then the others newest first."""
        active = self.active().root
        others = [
            x509.load_pem_x509_certificate(path.read_bytes())
            for path in sorted(self._roots_dir.glob("*.pem"))
        ]
        others = [c for c in others if c != active]
        others.sort(key=lambda c: c.not_valid_before_utc, reverse=True)
        return [active, *others]

    def roots_pem(self) -> str:
        """The roots as one PEM text: what a verifier takes as its trust anchors."""
        return "".join(c.public_bytes(_PEM).decode() for c in self.roots())

    def rotate(self) -> tuple[str, str]:
        """A new root and signer replace the active ones (the old root stays recorded);
        the (old, new) root fingerprints."""
        old = self.active().root
        new = CaFiles.generate()
        self._record_root(new.root)
        write_private_file(self.active_file, new.to_pem(), exclusive=False)
        return fingerprint_of(old), fingerprint_of(new.root)

    @property
    def _roots_dir(self) -> Path:
        return self.folder / "roots"

    def _record_root(self, root: x509.Certificate) -> None:
        path = self._roots_dir / f"{fingerprint_of(root)}.pem"
        if not path.exists():
            write_private_file(path, root.public_bytes(_PEM), exclusive=True)
