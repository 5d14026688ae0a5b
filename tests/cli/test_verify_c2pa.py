"""``ves verify --trust ROOTS.pem``: each clip's Content Credentials (C2PA) checked offline against
the roots the recipient saved, and a clip whose pixels changed after export fails."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tasks.export.credentials import ClipClaim, SpanRef, sign_clip
from tests.cli.test_verify import run_verify
from tests.fixtures.bundles import BuiltBundle, rewrite_bundle
from tests.fixtures.credentials import flip_one_mdat_byte
from ves.credentials import ContentCredentialsCA


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> ContentCredentialsCA:
    return ContentCredentialsCA(tmp_path_factory.mktemp("keys"))


def clip_paths(bundle: Path) -> list[str]:
    with zipfile.ZipFile(bundle) as archive:
        return [c["path"] for c in json.loads(archive.read("manifest.json"))["clips"]]


def _sign_clips(bundle: BuiltBundle, ca: ContentCredentialsCA, folder: Path) -> dict[str, bytes]:
    """The bundle's clips, each signed as the export stage signs them."""
    signed = {}
    with zipfile.ZipFile(bundle.path) as archive:
        for number, name in enumerate(clip_paths(bundle.path)):
            plain = folder / f"plain-{number}.mp4"
            plain.write_bytes(archive.read(name))
            claim = ClipClaim(
                "exp_1", "vid_1", "run_1", "0" * 64, "source.mp4", 0.0, 1.0,
                (SpanRef(f"ev_{number}", "1" * 64),),
            )  # fmt: skip
            signed[name] = sign_clip(plain, folder / f"signed-{number}.mp4", claim, ca.signer())
            signed[name] = signed[name].path.read_bytes()
    return signed


@pytest.fixture(scope="module")
def credentialed(
    signed_bundle: BuiltBundle, ca: ContentCredentialsCA, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    folder = tmp_path_factory.mktemp("credentialed")
    clips = _sign_clips(signed_bundle, ca, folder)
    return rewrite_bundle(
        signed_bundle.path, folder / "bundle.zip", clips, resign=signed_bundle.key
    )


def test_a_bundle_whose_clips_carry_trusted_credentials_verifies(
    credentialed: Path, ca: ContentCredentialsCA, tmp_path: Path
) -> None:
    (tmp_path / "roots.pem").write_text(ca.roots_pem())
    done = run_verify(tmp_path, str(credentialed), "--trust", "roots.pem")
    assert done.returncode == 0, done.stdout + done.stderr
    clips = len(clip_paths(credentialed))
    assert f"c2pa        ok    {clips} clips: Content Credentials (C2PA) Trusted" in done.stdout


def test_a_clip_whose_pixels_changed_after_export_fails(
    credentialed: Path, signed_bundle: BuiltBundle, ca: ContentCredentialsCA, tmp_path: Path
) -> None:
    first = clip_paths(credentialed)[0]
    with zipfile.ZipFile(credentialed) as archive:
        (tmp_path / "a.mp4").write_bytes(archive.read(first))
    changed = flip_one_mdat_byte(tmp_path / "a.mp4", tmp_path / "changed.mp4").read_bytes()
    # Re-signed with the bundle's key, as one who rewrote the bundle would: only C2PA can tell.
    forged = rewrite_bundle(
        credentialed, tmp_path / "f.zip", {first: changed}, resign=signed_bundle.key
    )
    (tmp_path / "roots.pem").write_text(ca.roots_pem())
    done = run_verify(tmp_path, str(forged), "--trust", "roots.pem")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"c2pa        FAIL  {first}: Content Credentials Invalid" in done.stdout
    assert "assertion.bmffHash.mismatch" in done.stdout
    assert done.stdout.splitlines()[-1] == f"NOT VERIFIED: failing: {first}"


def test_clips_without_credentials_or_under_another_root_fail(
    signed_bundle: BuiltBundle, credentialed: Path, tmp_path: Path
) -> None:
    (tmp_path / "other.pem").write_text(ContentCredentialsCA(tmp_path / "k").roots_pem())
    plain = run_verify(tmp_path, str(signed_bundle.path), "--trust", "other.pem")
    assert plain.returncode == 1 and "carries no Content Credentials" in plain.stdout
    stranger = run_verify(tmp_path, str(credentialed), "--trust", "other.pem")
    assert stranger.returncode == 1 and "signingCredential.untrusted" in stranger.stdout


def test_a_trust_file_without_a_certificate_exits_2(credentialed: Path, tmp_path: Path) -> None:
    (tmp_path / "roots.pem").write_text("not a certificate")
    done = run_verify(tmp_path, str(credentialed), "--trust", "roots.pem")
    assert done.returncode == 2 and "holds no PEM certificate" in done.stderr
    assert "Traceback" not in done.stderr
