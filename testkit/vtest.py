"""OpenCV's sample ``vtest.avi`` (OpenCV sample data, Apache-2.0/BSD-3, shipped by Debian).

The file (768x576 msmpeg4, 10 fps, 795 frames) is fetched once with ``apt-get download`` into
``$VES_TEST_CACHE`` or ``~/.cache/ves-tests/`` and checked against a fixed sha256.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from storage.artifacts.layout import sha256_file

PACKAGE = "opencv-doc"
VERSION = "4.6.0+dfsg-12"
MEMBER = "./usr/share/doc/opencv-doc/examples/data/vtest.avi"
SHA256 = "45cddc9490be69345cbdab64ca583be65987e864ca408038e648db99e10516cf"
# Read once at import: the autouse ``_isolated_env`` fixture removes VES_* variables in tests.
_CACHE_AT_IMPORT = os.environ.get("VES_TEST_CACHE")


def cache_dir() -> Path:
    env = os.environ.get("VES_TEST_CACHE") or _CACHE_AT_IMPORT
    return Path(env) if env else Path.home() / ".cache" / "ves-tests"


def _by_hand(target: Path, why: str) -> RuntimeError:
    return RuntimeError(
        f"cannot fetch vtest.avi ({why}). Fetch it by hand:\n"
        f"  cd $(mktemp -d) && apt-get download {PACKAGE} && "
        f"dpkg-deb --fsys-tarfile {PACKAGE}_*.deb | tar -x {MEMBER} && "
        f"mkdir -p {target.parent} && mv {MEMBER} {target}\n"
        f"(expected sha256 {SHA256}; Debian {PACKAGE} {VERSION})"
    )


def _download(target: Path) -> None:
    """Download the .deb into a temporary folder beside ``target``, move the .avi in atomically."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise _by_hand(target, "apt-get or dpkg-deb is missing")
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".vtest-") as tmp:
        work = Path(tmp)
        try:
            subprocess.run(
                ["apt-get", "download", PACKAGE],
                cwd=work,
                check=True,
                capture_output=True,
                timeout=900,
            )
            (deb,) = work.glob(f"{PACKAGE}_*.deb")
            extract = f"dpkg-deb --fsys-tarfile '{deb}' | tar -x -C '{work}' '{MEMBER}'"
            subprocess.run(["sh", "-c", extract], check=True, capture_output=True, timeout=300)
        except (subprocess.SubprocessError, OSError, ValueError) as exc:
            detail = getattr(exc, "stderr", b"") or b""
            raise _by_hand(target, f"{exc} {detail.decode(errors='replace')[-500:]}") from exc
        deb.unlink()
        extracted = work / MEMBER
        if (got := sha256_file(extracted)) != SHA256:
            raise _by_hand(target, f"sha256 {got} does not match")
        extracted.replace(target)


def vtest_path() -> Path:
    """The path of ``vtest.avi``, downloaded on first use (one process at a time)."""
    target = cache_dir() / "vtest.avi"
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / ".vtest.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            _download(target)
        elif sha256_file(target) != SHA256:
            target.unlink()
            _download(target)
    return target


@pytest.fixture(scope="session")
def vtest_avi() -> Path:
    return vtest_path()
