"""The service's signing key: made once (also by racing processes), given by file, rotated."""

from __future__ import annotations

import hashlib
import multiprocessing
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from ves.errors import VesError
from ves.settings import Settings
from ves.signing import KeyRing, SigningKey, load_public_key, verify_signature


def _race(keys_dir: Path, start: Any, out: Any) -> None:
    start.wait()  # every process asks for the key at the same moment
    out.put(KeyRing(keys_dir).active().key_id)


def test_the_key_is_made_on_first_use_private_and_stable(tmp_path: Path) -> None:
    ring = KeyRing.from_settings(Settings(data_dir=tmp_path))
    key = ring.active()
    active = tmp_path / "keys" / "active.pem"
    assert stat.S_IMODE(active.stat().st_mode) == 0o600
    raw = key.public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert key.key_id == "ed25519:" + hashlib.sha256(raw).hexdigest()[:16]
    assert KeyRing(tmp_path / "keys").active().key_id == key.key_id
    [record] = ring.public_keys()
    assert (record.key_id, record.active, record.retired_at) == (key.key_id, True, None)
    public = load_public_key(record.public_key_pem.encode())
    assert verify_signature(public, key.sign_b64(b"data"), b"data")
    assert not verify_signature(public, key.sign_b64(b"data"), b"date")


def test_processes_starting_at_once_share_one_key(tmp_path: Path) -> None:
    fork = multiprocessing.get_context("fork")
    for attempt in range(5):
        keys_dir, start, out = tmp_path / f"keys{attempt}", fork.Barrier(6), fork.Queue()
        racers = [fork.Process(target=_race, args=(keys_dir, start, out)) for _ in range(6)]
        for racer in racers:
            racer.start()
        ids = {out.get(timeout=60) for _ in racers}
        for racer in racers:
            racer.join(timeout=60)
        assert len(ids) == 1
        names = {p.name for p in keys_dir.iterdir()}
        assert names == {"active.pem", ids.pop().split(":")[1] + ".json"}  # no temporary file


def test_rotation_keeps_the_old_public_key_so_old_signatures_verify(tmp_path: Path) -> None:
    ring = KeyRing(tmp_path / "keys")
    signature = ring.active().sign_b64(b"manifest")
    old, new = ring.rotate()
    assert ring.active().key_id == new.key_id != old.key_id
    listed = ring.public_keys()
    assert [(k.key_id, k.active) for k in listed] == [(new.key_id, True), (old.key_id, False)]
    assert listed[1].retired_at is not None and listed[1].retired_at >= listed[1].created_at
    assert verify_signature(
        load_public_key(listed[1].public_key_pem.encode()), signature, b"manifest"
    )


def test_a_key_file_given_by_setting_signs_and_a_replaced_one_is_listed_retired(
    tmp_path: Path,
) -> None:
    given = tmp_path / "shared.pem"
    first = SigningKey.generate()
    given.write_bytes(first.private_pem())
    settings = Settings(data_dir=tmp_path / "data", signing_key_file=given)
    assert KeyRing.from_settings(settings).active().key_id == first.key_id
    assert not (tmp_path / "data" / "keys" / "active.pem").exists()
    second = SigningKey.generate()
    given.write_bytes(second.private_pem())
    listed = KeyRing.from_settings(settings).public_keys()
    assert [(k.key_id, k.active) for k in listed] == [(second.key_id, True), (first.key_id, False)]
    assert listed[1].retired_at == listed[0].created_at


def test_a_key_file_that_is_not_an_ed25519_private_key_is_refused(tmp_path: Path) -> None:
    other = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    for content, why in ((other, "not an Ed25519 key"), (b"junk", "not a PEM private key")):
        (tmp_path / "k.pem").write_bytes(content)
        with pytest.raises(VesError, match=why):
            KeyRing(tmp_path / "keys", tmp_path / "k.pem").active()


def test_a_key_folder_that_cannot_be_written_is_an_error_of_the_service(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(VesError, match="cannot write the signing key file"):
        KeyRing(tmp_path / "file" / "keys").active()
