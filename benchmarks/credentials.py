"""What Content Credentials (C2PA) add to an export: signing a clip against stream-copying it.

    .venv/bin/python benchmarks/credentials.py [--repeats 3] [--export]

Clips: the 720p noisy synthetic clips of ``benchmarks/_clips.py`` (~2 Mbit/s), 10 s and 5 min.
Baseline: the stream copy of the whole clip into a new MP4 with PyAV (what a fast export does per
window); measured: ``tasks.export.credentials.sign_clip`` of that clip (c2pa-python hashes every
byte of the MP4 for the BMFF binding, then writes the file again with the manifest box), and the
Reader's Trusted check of the result. Medians of ``--repeats`` runs, after one warm-up.
With ``--export``, also the whole-evidence export of the 60 s 720p lobby (processed by the
``process-video`` flow here, detector ``motion``; not timed): ``write_export`` without and with
Content Credentials, alternately, medians.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import av

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._clips import ClipSpec, make_clip
from tasks.export.credentials import ClipClaim, SpanRef, sign_clip
from verify.credentials import verify_clip_credentials
from ves.credentials import ClaimSigner, ContentCredentialsCA

CLIPS = (ClipSpec(10, 720), ClipSpec(300, 720))
CLAIM = ClipClaim(
    "exp_1", "vid_1", "run_1", "0" * 64, "bench.mp4", 0.0, 10.0, (SpanRef("ev", "1" * 64),)
)


def stream_copy(source: Path, out: Path) -> None:
    with av.open(str(source)) as src, av.open(str(out), "w") as dst:
        stream = dst.add_stream_from_template(src.streams.video[0])
        for packet in src.demux(src.streams.video[0]):
            if packet.dts is None:
                continue
            packet.stream = stream
            dst.mux(packet)


def median_s(run: Callable[[], object], repeats: int) -> float:
    run()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--export", action="store_true", help="also time a whole export")
    args = parser.parse_args()
    repeats = args.repeats
    work = Path(tempfile.mkdtemp())
    ca = ContentCredentialsCA(work / "keys")
    signer, roots = ca.signer(), ca.roots_pem()
    print("| clip | MB | stream copy (s) | sign (s) | sign / copy | verify (s) |")
    print("|---|---|---|---|---|---|")
    for spec in CLIPS:
        print(measure(spec, work, signer, roots, repeats))
    if args.export:
        print(export_row(work, signer, repeats))


def measure(spec: ClipSpec, work: Path, signer: ClaimSigner, roots: str, repeats: int) -> str:
    """One table row: the clip's copy, sign and verify times."""
    source, copied, signed = make_clip(spec), work / "copy.mp4", work / "signed.mp4"
    copy_s = median_s(lambda: stream_copy(source, copied), repeats)
    sign_s = median_s(lambda: sign_clip(copied, signed, CLAIM, signer), repeats)
    verify_s = median_s(lambda: verify_clip_credentials(signed.read_bytes(), roots), repeats)
    assert verify_clip_credentials(signed.read_bytes(), roots).ok
    mb = copied.stat().st_size / 1e6
    ratio = sign_s / copy_s
    return (
        f"| {spec.label} | {mb:.1f} | {copy_s:.3f} | {sign_s:.3f} | {ratio:.0%} | {verify_s:.3f} |"
    )


def export_row(work: Path, signer: ClaimSigner, repeats: int) -> str:
    """The lobby's whole-evidence export without and with Content Credentials."""
    from prefect.testing.utilities import prefect_test_harness

    from benchmarks._runs import process_upload
    from storage.artifacts.blobs import open_blob_store
    from storage.artifacts.reads import ArtifactReader
    from tasks.export.steps import ExportRequest, write_export
    from ves.settings import Settings
    from ves.signing import SigningKey

    lobby = make_clip(ClipSpec(60, 720))
    with prefect_test_harness(server_startup_timeout=180):
        os.environ["VES_DATA_DIR"] = str(work)
        _, run, _ = process_upload(work, lobby, {"detector": "motion"})
        store = open_blob_store(Settings())
        digest = hashlib.sha256(lobby.read_bytes()).hexdigest()
        times: dict[bool, list[float]] = {False: [], True: []}
        for turn in range(2 * repeats):
            signed = bool(turn % 2)
            request = ExportRequest(
                "exp", run, lobby, digest, {}, credentials=signer if signed else None
            )
            out = work / f"export-{turn}"
            out.mkdir()
            began = time.perf_counter()
            write_export(
                request, ArtifactReader(store), store, SigningKey.generate(), out / "b.zip", out
            )
            times[signed].append(time.perf_counter() - began)
    plain, signed_s = statistics.median(times[False]), statistics.median(times[True])
    return (
        f"\nlobby 60 s 720p whole export: {plain:.2f} s plain, {signed_s:.2f} s with Content"
        f" Credentials (+{signed_s / plain - 1:.1%})"
    )


if __name__ == "__main__":
    main()
