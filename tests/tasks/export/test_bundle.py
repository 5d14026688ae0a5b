"""BundleWriter: what the manifest says is what the zip holds, the signature is openssl's
Ed25519, and a bundle is whole or absent."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from storage.artifacts.spans import canonical_json, canonical_sha256
from tasks.export.bundle import BundleMeta, BundleWriter, SpanClip
from tests.fixtures.bundles import SPANS, BuiltBundle, rewrite_bundle, span_document
from ves.signing import SigningKey

PLACE = SpanClip("clips/window_01.mp4", 0.0, 1.0, [])


def test_the_manifest_lists_every_file_as_it_is_in_the_zip(signed_bundle: BuiltBundle) -> None:
    with zipfile.ZipFile(signed_bundle.path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        listed = {f["path"]: f for f in manifest["files"]}
        assert set(archive.namelist()) - set(listed) == {
            "manifest.json",
            "manifest.sig",
            "public_key.pem",
        }
        for path, entry in listed.items():
            data = archive.read(path)
            assert (entry["sha256"], entry["bytes"]) == (
                hashlib.sha256(data).hexdigest(),
                len(data),
            )
        span = json.loads(archive.read("spans/ev_a.json"))
        assert archive.read("spans/ev_a.json") == canonical_json(span)
        assert "Café à 5 €".encode() in archive.read("spans/ev_a.json")  # not ASCII-escaped
    assert manifest["format"] == "ves-evidence-bundle" and manifest["format_version"] == 2
    assert manifest["export"]["export_id"] == "exp_1" and manifest["redaction"] == {"applied": []}
    assert manifest["signature"] == {
        "algorithm": "Ed25519",
        "key_id": signed_bundle.key.key_id,
        "file": "manifest.sig",
    }
    assert manifest["spans"][0] == {
        "evidence_id": "ev_a",
        "path": "spans/ev_a.json",
        "sha256": canonical_sha256(span),
        "thumbnails": ["thumbnails/ev_a_0.jpg", "thumbnails/ev_a_1.jpg"],
        "clip": "clips/window_01.mp4",
        "clip_start_s": pytest.approx(0.2),  # the window starts 0.2 s (PAD_S) before it
        "clip_end_s": pytest.approx(1.1),
        "thumbnail_times_s": [0.8, 1.2],
        "cut_to_range": False,
        "original_start_s": None,
        "original_end_s": None,
    }
    assert [s["clip"] for s in manifest["spans"]] == [f"clips/window_0{n}.mp4" for n in (1, 2, 1)]
    first, second = manifest["clips"]
    assert first["path"] == "clips/window_01.mp4" and first["method"] == "copied"
    assert first["window_s"] == pytest.approx([0.3, 1.6])  # ev_a and ev_c, merged
    assert first["source_start_s"] == pytest.approx(0.3)
    assert 1.6 <= first["source_end_s"] <= 2.0  # to the end of a group of B-frames
    assert second["window_s"] == pytest.approx([1.8, 3.0])


@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl on this machine")
def test_openssl_verifies_the_signature_as_the_readme_says(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    with zipfile.ZipFile(signed_bundle.path) as archive:
        archive.extractall(tmp_path)
    (tmp_path / "manifest.sig.bin").write_bytes(
        base64.b64decode((tmp_path / "manifest.sig").read_bytes())
    )
    command = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "public_key.pem", "-rawin"]
    command += ["-in", "manifest.json", "-sigfile", "manifest.sig.bin"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "Signature Verified Successfully" in done.stdout
    (tmp_path / "manifest.json").write_bytes(b" " + (tmp_path / "manifest.json").read_bytes())
    again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert again.returncode != 0


def test_a_bundle_that_fails_half_way_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "b.zip"
    with pytest.raises(RuntimeError), BundleWriter(target) as bundle:
        bundle.add_json("cost.json", {})
        raise RuntimeError("the flow failed")
    with BundleWriter(target) as bundle:
        bundle.add_span(span_document("ev_a", "0" * 64), PLACE, ["thumbnails/ev_a_0.jpg"])
        with pytest.raises(ValueError, match="thumbnails named by spans but not added"):
            bundle.close(SigningKey.generate(), BundleMeta("exp_1", "vid_1", "run_1"))
    with BundleWriter(target) as bundle:
        bundle.add_span(span_document("ev_a", "0" * 64), PLACE)
        with pytest.raises(ValueError, match="clips named by spans but not added"):
            bundle.close(SigningKey.generate(), BundleMeta("exp_1", "vid_1", "run_1"))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["../x.json", "/etc/x", "manifest.json", "a//b", "spans/.."])
def test_names_outside_the_bundle_or_reserved_are_refused(tmp_path: Path, name: str) -> None:
    with BundleWriter(tmp_path / "b.zip") as bundle, pytest.raises(ValueError, match="name"):
        bundle.add_file(name, b"x")
    with BundleWriter(tmp_path / "b.zip") as bundle:
        bundle.add_file("cost.json", b"{}")
        with pytest.raises(ValueError, match="already"):
            bundle.add_file("cost.json", b"{}")
        bundle.abort()


def test_a_span_whose_hash_is_not_its_own_is_refused(tmp_path: Path) -> None:
    document = span_document("ev_a", "0" * 64)
    assert SPANS["ev_a"][0] == document["start_s"]
    with BundleWriter(tmp_path / "b.zip") as bundle:
        with pytest.raises(ValueError, match="not its canonical hash"):
            bundle.add_span({**document, "sha256": "f" * 64}, PLACE)
        entry = bundle.add_span({**document, "sha256": canonical_sha256(document)}, PLACE)
        assert entry.sha256 == canonical_sha256(document)
        bundle.abort()


def test_the_guides_script_verifies_a_bundle_and_names_a_changed_file(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    """The Python check of docs/how-to/exports.md ("By hand"), run as printed."""
    guide = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "exports.md"
    after = guide.read_text().split("Or in a few lines of Python", 1)[1]
    script = tmp_path / "check.py"
    script.write_text(after.split("```python\n", 1)[1].split("```", 1)[0])
    key = tmp_path / "service.pem"
    key.write_text(signed_bundle.key.public_key_pem)
    changed = rewrite_bundle(signed_bundle.path, tmp_path / "t.zip", {"cost.json": b"{}"})

    def run(bundle: Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(script), str(bundle), str(key)]
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)

    good = run(signed_bundle.path)
    assert good.returncode == 0 and good.stdout.endswith("- failing: none\n"), good.stderr
    bad = run(changed)
    assert bad.returncode == 1 and bad.stdout.endswith("- failing: ['cost.json']\n")
