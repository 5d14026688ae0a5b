"""An export through the real topology, as `make run` starts it: `ves serve` (Prefect server,
process worker, API) in its own processes. A lobby upload is executed, its evidence exported
through the `export-evidence` deployment on the worker, downloaded over HTTP, and verified by
`ves verify` offline against the key the API publishes; each clip's Content Credentials (C2PA)
are checked by `ves verify --trust` (c2pa-python) and by an independent verifier (the pure
TypeScript c2pa-ts, tests/c2pa_verifier) against the roots the API publishes, and a copy with one
byte of its pictures changed fails both."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from synthetic import lobby_scene, write_video
from testkit.live_server import free_port
from testkit.service import (
    create_key,
    own_env,
    register_upload,
    start_service,
    stop_service,
    wait_for_banner,
    wait_state,
    wait_video,
)
from tests.cli.test_verify import run_verify
from tests.fixtures.credentials import flip_one_mdat_byte, independent

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

FINAL = {"succeeded", "failed"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    data = tmp_path_factory.mktemp("exports-data")
    env = {
        **own_env(),
        "VES_DATA_DIR": str(data),
        "VES_PORT": str(free_port()),
        "VES_PREFECT_PORT": str(free_port()),
        "VES_LOG_LEVEL": "warning",
    }
    process = start_service(env)
    try:
        wait_for_banner(process)
        headers = {"Authorization": f"Bearer {create_key(env, 'e2e-exports')}"}
        url = f"http://127.0.0.1:{env['VES_PORT']}"
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            yield client
    finally:
        stop_service(process)


def test_an_export_made_by_the_worker_verifies_offline(
    client: httpx.Client, tmp_path: Path
) -> None:
    write_video(lobby_scene(), tmp_path / "lobby.mp4")
    video_id = register_upload(client, tmp_path / "lobby.mp4", "lobby")
    assert client.post(f"/api/product/videos/{video_id}/execute").status_code == 202
    assert wait_video(client, video_id, FINAL)["state"] == "succeeded"

    accepted = client.post(f"/api/product/videos/{video_id}/exports", json={"redact": ["text"]})
    assert accepted.status_code == 202, accepted.text
    url = f"/api/product/videos/{video_id}/exports/{accepted.json()['export_id']}"
    export = wait_state(client, url, FINAL)
    assert export["state"] == "succeeded", export["error"]

    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "evidence.zip").write_bytes(client.get(export["bundle"]["download_url"]).content)
    published = client.get("/api/public/signing-keys").json()
    (folder / "service.pem").write_text(published["keys"][0]["public_key_pem"])
    (folder / "roots.pem").write_text("".join(published["c2pa_trust_anchors_pem"]))
    trusted = ("--public-key", "service.pem", "--trust", "roots.pem")
    checked = run_verify(folder, "evidence.zip", *trusted)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert any(line.startswith("c2pa") for line in checked.stdout.splitlines()), checked.stdout
    assert checked.stdout.splitlines()[-1] == "VERIFIED: every check holds"
    _clips_carry_content_credentials(client, url, folder)
    with zipfile.ZipFile(folder / "evidence.zip") as archive:
        source = json.loads(archive.read("source.json"))
    assert source["source_type"] == "upload" and source["uploaded_at"]
    assert source["registered_by_key"] and source["uploaded_by_key"] == source["registered_by_key"]


def _clips_carry_content_credentials(client: httpx.Client, url: str, folder: Path) -> None:
    """A span's clip downloaded alone is the bundle's, Trusted by the independent verifier under
    the published roots, with the redaction declared; one changed byte in its pictures fails
    it, and fails `ves verify --trust` once put back in the bundle."""
    with zipfile.ZipFile(folder / "evidence.zip") as archive:
        manifest = json.loads(archive.read("manifest.json"))
        entries = {name: archive.read(name) for name in archive.namelist()}
    span = manifest["spans"][0]
    alone = client.get(f"{url}/clips/{span['evidence_id']}")
    assert alone.status_code == 200 and alone.content == entries[span["clip"]]
    clip = folder / "clip.mp4"
    clip.write_bytes(alone.content)
    code, report = independent(clip, folder / "roots.pem")
    assert code == 0, report
    assert report["bmff_hash_bound"] and report["issued_by_trusted_root"]
    assert report["actions"][:2] == ["c2pa.opened", "c2pa.edited"]
    assert "c2pa.filtered" in report["actions"]  # the text redaction, declared
    assert span["evidence_id"] in [s["span_id"] for s in report["evidence"]["spans"]]

    tampered = flip_one_mdat_byte(clip, folder / "tampered.mp4")
    code, report = independent(tampered, folder / "roots.pem")
    assert code == 1 and not report["bmff_hash_bound"]
    with zipfile.ZipFile(folder / "tampered.zip", "w") as copy:
        for name, data in entries.items():
            copy.writestr(name, tampered.read_bytes() if name == span["clip"] else data)
    checked = run_verify(
        folder, "tampered.zip", "--public-key", "service.pem", "--trust", "roots.pem"
    )
    assert checked.returncode != 0
    assert any(
        line.startswith("c2pa") and "FAIL" in line.upper() for line in checked.stdout.splitlines()
    ), checked.stdout
