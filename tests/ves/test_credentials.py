"""The local CA of Content Credentials: the certificate profile C2PA asks of a claim signer, safe
creation when two processes start at once, and rotations that keep every root."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID

from ves.credentials import (
    C2PA_CLAIM_SIGNING,
    DOCUMENT_SIGNING,
    CaFiles,
    ContentCredentialsCA,
    fingerprint_of,
)
from ves.errors import VesError


def test_the_signer_has_the_profile_c2pa_asks_of_a_claim_signer(tmp_path: Path) -> None:
    files = ContentCredentialsCA(tmp_path).active()
    leaf, root = files.signer, files.root
    usage = leaf.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical and usage.value.digital_signature and not usage.value.key_cert_sign
    purposes = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert set(purposes) == {
        ExtendedKeyUsageOID.EMAIL_PROTECTION,
        DOCUMENT_SIGNING,
        C2PA_CLAIM_SIGNING,
    }
    assert leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    aki = leaf.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    ski = root.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    assert aki.key_identifier == ski.digest and leaf.issuer == root.subject != leaf.subject
    assert isinstance(leaf.public_key(), ec.EllipticCurvePublicKey)
    assert leaf.public_key().curve.name == "secp256r1"  # ES256
    leaf.verify_directly_issued_by(root)
    constraints = root.extensions.get_extension_for_class(x509.BasicConstraints).value
    assert (constraints.ca, constraints.path_length) == (True, 0)


def test_two_processes_starting_at_once_share_one_ca(tmp_path: Path) -> None:
    with ThreadPoolExecutor(4) as pool:
        signers = list(pool.map(lambda _: ContentCredentialsCA(tmp_path).signer(), range(8)))
    assert len({s.certificate_pem for s in signers}) == 1
    assert len(ContentCredentialsCA(tmp_path).roots()) == 1
    assert (tmp_path / "c2pa" / "active.pem").stat().st_mode & 0o077 == 0


def test_a_rotation_makes_a_new_root_and_signer_and_keeps_the_old_root(tmp_path: Path) -> None:
    ca = ContentCredentialsCA(tmp_path, tsa_url="http://tsa.example/")
    before = ca.signer()
    old, new = ca.rotate()
    after = ca.signer()
    assert old == before.root_fingerprint != new == after.root_fingerprint
    assert (
        after.certificate_pem != before.certificate_pem and after.tsa_url == "http://tsa.example/"
    )
    assert [fingerprint_of(r) for r in ca.roots()] == [new, old]
    assert ca.roots_pem().count("BEGIN CERTIFICATE") == 2


def test_a_file_that_is_not_the_ca_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "c2pa").mkdir()
    (tmp_path / "c2pa" / "active.pem").write_bytes(
        CaFiles.generate().signer.public_bytes(Encoding.PEM)
    )
    with pytest.raises(VesError, match=r"active\.pem"):
        ContentCredentialsCA(tmp_path).signer()
