"""``ves verify`` as a third party runs it: a subprocess with no VES_*, PREFECT_* or AWS_*
variable, in an empty folder, with no catalog and no data folder (offline, the bundle alone);
and ``ves signing-key``."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.fixtures.bundles import BuiltBundle, flip_one_byte, rewrite_bundle
from ves.signing import SigningKey

ROOT = Path(__file__).resolve().parents[2]


def _offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VES_", "PREFECT_", "AWS_"))}
    return {**env, "PYTHONPATH": str(ROOT)}


def run_verify(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli.main", "verify", *args],
        cwd=cwd,
        env=_offline_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_untouched_bundle_verifies_offline_from_the_bundle_alone(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir()
    bundle = work / "evidence.zip"
    bundle.write_bytes(signed_bundle.path.read_bytes())
    own = run_verify(work, "evidence.zip")
    assert own.returncode == 0, own.stdout + own.stderr
    lines = own.stdout.splitlines()
    assert lines[-1] == "VERIFIED: every check holds" and "Traceback" not in own.stderr
    assert [line.split()[1] for line in lines[:6]] == ["ok"] * 6
    assert "taken from the bundle itself" in own.stdout
    (work / "service.pem").write_text(signed_bundle.key.public_key_pem)
    given = run_verify(work, "evidence.zip", "--public-key", "service.pem")
    assert given.returncode == 0 and "given with --public-key" in given.stdout
    assert sorted(p.name for p in work.iterdir()) == ["evidence.zip", "service.pem"]


def test_a_tampered_bundle_or_a_wrong_key_exits_1_naming_what_failed(
    signed_bundle: BuiltBundle, tmp_path: Path
) -> None:
    with zipfile.ZipFile(signed_bundle.path) as archive:
        cost = archive.read("cost.json")
    rewrite_bundle(signed_bundle.path, tmp_path / "t.zip", {"cost.json": flip_one_byte(cost)})
    tampered = run_verify(tmp_path, "t.zip")
    assert tampered.returncode == 1, tampered.stdout + tampered.stderr
    assert tampered.stdout.splitlines()[-1] == "NOT VERIFIED: failing: cost.json"
    (tmp_path / "wrong.pem").write_text(SigningKey.generate().public_key_pem)
    wrong = run_verify(tmp_path, str(signed_bundle.path), "--public-key", "wrong.pem")
    assert wrong.returncode == 1 and "signature   FAIL  manifest.sig" in wrong.stdout


def test_a_file_that_is_no_bundle_exits_2(tmp_path: Path) -> None:
    (tmp_path / "video.mp4").write_bytes(b"\0" * 64)
    done = run_verify(tmp_path, "video.mp4")
    assert done.returncode == 2 and "not a zip file" in done.stderr
    assert "Traceback" not in done.stderr
    missing = run_verify(tmp_path, "nothing.zip")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


def test_signing_key_rotate_and_list(tmp_path: Path) -> None:
    env = {**_offline_env(), "VES_DATA_DIR": str(tmp_path / "data")}

    def ves(*args: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "cli.main", "signing-key", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout.splitlines()

    [first] = ves("list")
    old_id = first.split("\t")[0]
    assert first.endswith("\tactive") and old_id.startswith("ed25519:")
    rotated = ves("rotate")
    assert rotated[0].startswith(f"retired {old_id}")
    new_id = rotated[1].split()[-1]
    listed = ves("list")
    assert [line.split("\t")[0] for line in listed] == [new_id, old_id]
    assert listed[1].split("\t")[2].startswith("retired 20")
