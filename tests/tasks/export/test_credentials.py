"""Content Credentials on a clip cut from a synthetic video, checked by two verifiers: c2pa-python's
Reader (the signer's own library, with the service's root as the only trust anchor) and the pure
TypeScript @trustnxt/c2pa-ts (tests/c2pa_verifier, which shares no code with c2pa-rs)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from synthetic import lobby_scene, scale_scene, write_video
from tasks.export.credentials import (
    ClipClaim,
    SpanRef,
    sign_clip,
)
from tasks.export.cut import cut_clip
from tests.fixtures.credentials import flip_one_mdat_byte, independent
from verify.clips import clip_frame_times
from verify.credentials import TRUSTED, verify_clip_credentials
from verify.layout import EVIDENCE_LABEL
from ves.credentials import ClaimSigner, ContentCredentialsCA
from ves.errors import SigningFailed

SCENE = replace(scale_scene(lobby_scene(), width=320, height=240, duration_s=4), noise=0.0)
SOURCE_SHA = "5" * 64
SPANS = (SpanRef("ev_0001", "a" * 64), SpanRef("ev_0002", "b" * 64))
CLAIM = ClipClaim("exp_1", "vid_1", "run_1", SOURCE_SHA, "lobby.mp4", 1.0, 3.0, SPANS)


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("credentials")
    write_video(SCENE, folder / "lobby.mp4")
    return cut_clip(folder / "lobby.mp4", (1.0, 3.0), folder / "clip.mp4").path


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> ContentCredentialsCA:
    return ContentCredentialsCA(tmp_path_factory.mktemp("keys"))


@pytest.fixture(scope="module")
def roots(ca: ContentCredentialsCA, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("trust") / "roots.pem"
    path.write_text(ca.roots_pem())
    return path


@pytest.fixture(scope="module")
def signed(cut: Path, ca: ContentCredentialsCA, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("signed") / "clip.mp4"
    sign_clip(cut, out, CLAIM, ca.signer())
    return out


def test_the_signer_s_reader_trusts_the_clip_under_the_service_root(
    signed: Path, ca: ContentCredentialsCA
) -> None:
    found = verify_clip_credentials(signed.read_bytes(), ca.roots_pem())
    assert (found.state, found.failures) == (TRUSTED, [])
    assert found.actions == ["c2pa.opened", "c2pa.edited"]  # no redaction asked
    assert found.label.startswith("urn:c2pa:")
    assert found.evidence == {
        "export_id": "exp_1",
        "video_id": "vid_1",
        "run_id": "run_1",
        "source_sha256": SOURCE_SHA,
        "source_start_s": 1.0,
        "source_end_s": 3.0,
        "spans": [
            {"span_id": "ev_0001", "sha256": "a" * 64},
            {"span_id": "ev_0002", "sha256": "b" * 64},
        ],
        "redacted": [],
    }


def test_the_independent_verifier_validates_signature_hash_binding_and_issuer(
    signed: Path, roots: Path, ca: ContentCredentialsCA
) -> None:
    code, report = independent(signed, roots)
    assert code == 0, report
    assert report["manifest_present"] and report["valid"] and report["failure_codes"] == []
    assert report["signature_valid"] and report["bmff_hash_bound"]
    assert report["issued_by_trusted_root"] is True
    assert report["actions"] == ["c2pa.opened", "c2pa.edited"]
    assert EVIDENCE_LABEL in report["assertion_labels"]
    assert report["evidence"]["export_id"] == "exp_1"
    assert [s["span_id"] for s in report["evidence"]["spans"]] == ["ev_0001", "ev_0002"]
    assert report["label"] == verify_clip_credentials(signed.read_bytes(), ca.roots_pem()).label


def test_one_byte_changed_in_mdat_fails_both_verifiers(
    signed: Path, roots: Path, ca: ContentCredentialsCA, tmp_path: Path
) -> None:
    tampered = flip_one_mdat_byte(signed, tmp_path / "tampered.mp4")
    found = verify_clip_credentials(tampered.read_bytes(), ca.roots_pem())
    assert found.state != TRUSTED and not found.ok
    assert any(f.startswith("assertion.bmffHash.mismatch") for f in found.failures)
    code, report = independent(tampered, roots)
    assert code == 1 and not report["bmff_hash_bound"]
    assert "assertion.bmffHash.mismatch" in report["failure_codes"]


def test_a_clip_signed_by_another_ca_is_not_trusted(
    cut: Path, roots: Path, ca: ContentCredentialsCA, tmp_path: Path
) -> None:
    stranger = ContentCredentialsCA(tmp_path / "other-keys")
    out = sign_clip(cut, tmp_path / "other.mp4", CLAIM, stranger.signer()).path
    found = verify_clip_credentials(out.read_bytes(), ca.roots_pem())
    assert found.state == "Valid" and not found.ok  # intact, but not from the service's root
    assert any(f.startswith("signingCredential.untrusted") for f in found.failures)
    code, report = independent(out, roots)
    assert code == 1 and report["issued_by_trusted_root"] is False
    assert verify_clip_credentials(out.read_bytes(), stranger.roots_pem()).ok


def test_a_rotation_keeps_older_clips_trusted_under_the_published_roots(
    cut: Path, tmp_path: Path
) -> None:
    ca = ContentCredentialsCA(tmp_path / "keys")
    before = sign_clip(cut, tmp_path / "before.mp4", CLAIM, ca.signer()).path
    ca.rotate()
    after = sign_clip(cut, tmp_path / "after.mp4", CLAIM, ca.signer()).path
    for clip in (before, after):
        assert verify_clip_credentials(clip.read_bytes(), ca.roots_pem()).ok
    newest_only = ca.roots()[0].public_bytes(Encoding.PEM).decode()
    assert not verify_clip_credentials(before.read_bytes(), newest_only).ok


def test_redaction_is_declared_with_what_was_redacted(
    cut: Path, ca: ContentCredentialsCA, tmp_path: Path
) -> None:
    claim = replace(CLAIM, redacted=("faces", "text"))
    out = sign_clip(cut, tmp_path / "redacted.mp4", claim, ca.signer()).path
    found = verify_clip_credentials(out.read_bytes(), ca.roots_pem())
    assert found.ok and found.actions == ["c2pa.opened", "c2pa.edited", "c2pa.filtered"]
    assert found.evidence is not None and found.evidence["redacted"] == ["faces", "text"]


def test_a_signed_clip_still_holds_every_frame_at_its_time(cut: Path, signed: Path) -> None:
    with cut.open("rb") as plain, signed.open("rb") as carrying:
        assert clip_frame_times(carrying) == clip_frame_times(plain)


def test_signing_in_place_leaves_the_signed_clip_and_a_refused_signer_leaves_no_file(
    cut: Path, ca: ContentCredentialsCA, tmp_path: Path
) -> None:
    clip = tmp_path / "clip.mp4"
    shutil.copy(cut, clip)
    made = sign_clip(clip, clip, CLAIM, ca.signer())
    assert verify_clip_credentials(clip.read_bytes(), ca.roots_pem()).label == made.manifest_label
    broken = ClaimSigner(b"not a certificate", b"not a key", "0" * 16)
    with pytest.raises(SigningFailed):
        sign_clip(cut, tmp_path / "never.mp4", CLAIM, broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]


def test_an_unsigned_clip_is_reported_as_carrying_no_credentials(
    cut: Path, ca: ContentCredentialsCA
) -> None:
    found = verify_clip_credentials(cut.read_bytes(), ca.roots_pem())
    assert found.state == "absent" and "no Content Credentials" in found.reason()
