"""Offline verification of a real bundle (tests/fixtures/bundles.py): the untouched bundle holds,
and every kind of tampering fails naming the file that changed."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from storage.artifacts.spans import canonical_json
from tasks.export.cut import cut_clip
from tests.fixtures.bundles import (
    BuiltBundle,
    build_bundle,
    build_v1_bundle,
    flip_one_byte,
    rewrite_bundle,
)
from verify.bundle import Verdict, verify_bundle
from ves.errors import NotABundle
from ves.signing import SigningKey


def _member(bundle: BuiltBundle, name: str) -> bytes:
    with zipfile.ZipFile(bundle.path) as archive:
        return archive.read(name)


def _failing(verdict: Verdict) -> list[str]:
    assert not verdict.ok
    assert verdict.lines()[-1] == f"NOT VERIFIED: failing: {', '.join(verdict.failing_files)}"
    return verdict.failing_files


def test_the_untouched_bundle_verifies_with_its_own_key_and_with_the_services(
    signed_bundle: BuiltBundle,
) -> None:
    own = verify_bundle(signed_bundle.path)
    assert own.ok, own.lines()
    assert [line.split()[:2] for line in own.lines()[:6]] == [
        ["signature", "ok"],
        ["files", "ok"],
        ["listing", "ok"],
        ["spans", "ok"],
        ["clips", "ok"],
        ["thumbnails", "ok"],
    ]
    assert "12 files" in own.lines()[1] and "4 times" in own.lines()[4]
    assert "2 clips decode, each span within its clip" in own.lines()[4]
    assert "taken from the bundle itself" in own.key_note and "NOT who made it" in own.key_note
    given = verify_bundle(signed_bundle.path, signed_bundle.key.public_key_pem.encode())
    assert given.ok and "given with --public-key" in given.key_note
    assert given.lines()[-1] == "VERIFIED: every check holds"


@pytest.mark.parametrize(
    "name",
    [
        "spans/ev_a.json",
        "thumbnails/ev_a_1.jpg",
        "clips/window_02.mp4",
        "cost.json",
        "audit.jsonl",
    ],
)
def test_one_byte_changed_in_a_listed_file_fails_naming_only_that_file(
    signed_bundle: BuiltBundle, tmp_path: Path, name: str
) -> None:
    changed = {name: flip_one_byte(_member(signed_bundle, name))}
    tampered = rewrite_bundle(signed_bundle.path, tmp_path / "t.zip", changed)
    assert _failing(verify_bundle(tampered)) == [name]


@pytest.mark.parametrize(("name", "at"), [("manifest.json", 0.5), ("manifest.sig", 0.3)])
def test_one_byte_changed_in_the_manifest_or_its_signature_fails_the_signature(
    signed_bundle: BuiltBundle, tmp_path: Path, name: str, at: float
) -> None:
    changed = {name: flip_one_byte(_member(signed_bundle, name), at)}
    tampered = rewrite_bundle(signed_bundle.path, tmp_path / "t.zip", changed)
    verdict = verify_bundle(tampered)
    assert name in _failing(verdict)
    assert any(line.startswith(f"signature   FAIL  {name}") for line in verdict.lines())


def test_an_unlisted_file_and_a_missing_one_are_named(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    added = rewrite_bundle(signed_bundle.path, tmp_path / "a.zip", {"spans/ev_x.json": b"{}"})
    assert _failing(verify_bundle(added)) == ["spans/ev_x.json"]
    removed = rewrite_bundle(signed_bundle.path, tmp_path / "r.zip", {"cost.json": None})
    assert _failing(verify_bundle(removed)) == ["cost.json"]


def test_a_replaced_public_key_is_named(signed_bundle: BuiltBundle, tmp_path: Path) -> None:
    other = SigningKey.generate().public_key_pem.encode()
    tampered = rewrite_bundle(signed_bundle.path, tmp_path / "k.zip", {"public_key.pem": other})
    assert "public_key.pem" in _failing(verify_bundle(tampered))


def test_a_manifest_of_another_format_version_is_not_guessed_at(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    manifest = json.loads(_member(signed_bundle, "manifest.json"))
    changed = {"manifest.json": json.dumps({**manifest, "format_version": 3}).encode()}
    newer = rewrite_bundle(signed_bundle.path, tmp_path / "v.zip", changed, signed_bundle.key)
    verdict = verify_bundle(newer)
    assert _failing(verdict) == ["manifest.json"]
    assert "not JSON of ves-evidence-bundle version 1 or 2" in verdict.lines()[1]


def test_a_wrong_public_key_fails_the_signature(signed_bundle: BuiltBundle) -> None:
    wrong = SigningKey.generate()
    verdict = verify_bundle(signed_bundle.path, wrong.public_key_pem.encode())
    assert {"manifest.sig", "--public-key"} <= set(_failing(verdict))
    assert wrong.key_id in verdict.key_note


def test_a_bundle_re_signed_by_someone_else_fails_only_against_the_services_key(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    """Whoever rewrites a bundle can sign it again with a key of their own and put that key in
    it: the bundle is then intact under its own key, so only the service's key tells."""
    forger = SigningKey.generate()
    cost = b'{"amount": 0}\n'
    forged = rewrite_bundle(signed_bundle.path, tmp_path / "f.zip", {"cost.json": cost}, forger)
    assert verify_bundle(forged).ok
    service_key = signed_bundle.key.public_key_pem.encode()
    assert "manifest.sig" in _failing(verify_bundle(forged, service_key))


def test_a_span_whose_canonical_hash_changed_fails_the_span_check(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    """Re-signed with the service's key, so that only the span check can see it."""
    span = json.loads(_member(signed_bundle, "spans/ev_a.json"))
    span["confidence"] = 0.1  # its sha256 field (and the manifest's) still say 0.9's
    changed = {"spans/ev_a.json": canonical_json(span)}
    tampered = rewrite_bundle(signed_bundle.path, tmp_path / "s.zip", changed, signed_bundle.key)
    verdict = verify_bundle(tampered)
    assert _failing(verdict) == ["spans/ev_a.json"]
    assert any(line.startswith("spans       FAIL  spans/ev_a.json") for line in verdict.lines())


def test_a_clip_without_a_frame_at_a_thumbnail_time_fails(tmp_path: Path) -> None:
    """ev_a's clip (window_01) holds the source's frames from 0.3 s to a little after 1.6 s;
    2.9 s is not in it."""
    built = build_bundle(tmp_path, SigningKey.generate(), ev_a=(0.8, 2.9))
    verdict = verify_bundle(built.path)
    assert _failing(verdict) == ["clips/window_01.mp4"]
    line = next(x for x in verdict.lines() if x.startswith("clips       FAIL"))
    assert "[2.9]" in line and "0.300.." in line


def test_a_clip_that_does_not_show_its_span_whole_fails(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    """Re-signed with the service's key: ev_b's entry says it lies later in its clip than the
    clip's frames reach."""
    manifest = json.loads(_member(signed_bundle, "manifest.json"))
    (span,) = [s for s in manifest["spans"] if s["evidence_id"] == "ev_b"]
    span["clip_end_s"] = 5.0
    changed = {"manifest.json": json.dumps(manifest).encode()}
    bad = rewrite_bundle(signed_bundle.path, tmp_path / "w.zip", changed, signed_bundle.key)
    verdict = verify_bundle(bad)
    assert _failing(verdict) == ["clips/window_02.mp4"]
    assert any("does not show span ev_b whole" in line for line in verdict.lines())


def test_a_clip_replaced_by_a_shorter_cut_fails_though_re_signed(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    """A tampered clip: window_02 replaced by a 0.2 s cut of the source (the manifest's hashes
    re-signed with the service's key) no longer shows ev_b whole nor its thumbnail's time."""
    short = cut_clip(signed_bundle.source, (2.5, 2.7), tmp_path / "short.mp4")
    changed = {"clips/window_02.mp4": short.path.read_bytes()}
    bad = rewrite_bundle(signed_bundle.path, tmp_path / "s.zip", changed, signed_bundle.key)
    verdict = verify_bundle(bad)
    assert _failing(verdict) == ["clips/window_02.mp4"]
    lines = verdict.lines()
    assert any("does not show span ev_b whole" in line for line in lines)
    assert any("holds no frame at source time(s) [2.5]" in line for line in lines)


def test_a_version_1_bundle_still_verifies_and_its_tampering_is_named(tmp_path: Path) -> None:
    """Bundles exported before issue 31 (a clip per span, format version 1)."""
    built = build_v1_bundle(tmp_path, SigningKey.generate())
    verdict = verify_bundle(built.path, built.key.public_key_pem.encode())
    assert verdict.ok, verdict.lines()
    assert "3 clips decode, a frame at each of 4 times" in verdict.lines()[4]
    clip = _member(built, "clips/ev_b.mp4")
    flipped = rewrite_bundle(
        built.path, tmp_path / "f.zip", {"clips/ev_b.mp4": flip_one_byte(clip)}
    )
    assert _failing(verify_bundle(flipped)) == ["clips/ev_b.mp4"]
    short = cut_clip(built.source, (0.0, 0.2), tmp_path / "short.mp4")  # no frame at 0.5 s
    swapped = {"clips/ev_b.mp4": short.path.read_bytes()}
    resigned = rewrite_bundle(built.path, tmp_path / "s.zip", swapped, built.key)
    assert _failing(verify_bundle(resigned)) == ["clips/ev_b.mp4"]


def test_a_clip_that_does_not_decode_fails_without_a_traceback(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    for garbage in (b"\0" * 4096, _member(signed_bundle, "clips/window_01.mp4")[:600]):
        changed = {"clips/window_01.mp4": garbage}
        bad = rewrite_bundle(signed_bundle.path, tmp_path / "c.zip", changed, signed_bundle.key)
        verdict = verify_bundle(bad)
        assert _failing(verdict) == ["clips/window_01.mp4"]
        lines = verdict.lines()
        assert any(
            x.startswith("clips       FAIL  clips/window_01.mp4: does not decode (") for x in lines
        )


def test_a_thumbnail_of_a_span_removed_with_its_listing_is_named(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    manifest = json.loads(_member(signed_bundle, "manifest.json"))
    manifest["files"] = [f for f in manifest["files"] if f["path"] != "thumbnails/ev_b_0.jpg"]
    changed = {"thumbnails/ev_b_0.jpg": None, "manifest.json": json.dumps(manifest).encode()}
    bad = rewrite_bundle(signed_bundle.path, tmp_path / "t.zip", changed, signed_bundle.key)
    assert _failing(verify_bundle(bad)) == ["thumbnails/ev_b_0.jpg"]


def test_a_byte_flipped_in_the_zip_itself_is_named(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    """Not rewritten as a zip: the stored clip's CRC no longer holds."""
    raw = signed_bundle.path.read_bytes()
    clip = _member(signed_bundle, "clips/window_02.mp4")
    at = raw.index(clip) + len(clip) // 2
    flipped = tmp_path / "raw.zip"
    flipped.write_bytes(raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1 :])
    assert _failing(verify_bundle(flipped)) == ["clips/window_02.mp4"]


def test_a_file_that_is_no_bundle_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(NotABundle, match="not a zip"):
        verify_bundle(text)
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain, "w") as archive:
        archive.writestr("a.txt", "a")
    with pytest.raises(NotABundle, match=r"holds no manifest\.json"):
        verify_bundle(plain)
    with pytest.raises(NotABundle, match="not an Ed25519 public key"):
        verify_bundle(plain, b"-----BEGIN PUBLIC KEY-----\n")
