"""One case of the hostile media corpus in a process of its own: ``python -m stress.media.child``.

The parent measures this process (wall time, peak RSS) and kills it at the case's bound, so a
hang or a memory blow-up costs one case, never the suite. Here the case runs through the real
flow, as a worker runs it: the file is registered as an upload (or served over HTTP and registered
as an ``hls`` source) in the catalog under ``VES_DATA_DIR``, a run is created and
``process_video`` called in-process against the Prefect server the parent started
(``PREFECT_API_URL``). The last line printed is the outcome as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from PIL import Image

from flows.process_video import ProcessVideoParams, process_video
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from stress.media.cases import Case, by_name
from testkit.media_server import MediaServer
from ves.settings import Settings


@contextlib.contextmanager
def _source(case: Case, path: Path) -> Iterator[tuple[str, str | None]]:
    """(source type, URL): an upload, or the playlist served by a local HTTP server."""
    if not case.hls:
        yield "upload", None
        return
    with MediaServer(path.parent) as server:
        yield "hls", server.url(path.name)


def _queue(catalog: Catalog, case: Case, path: Path, kind: str, url: str | None) -> str:
    tenant = TenantStore(catalog).create_tenant(f"stress-{case.name}-{uuid.uuid4().hex[:6]}")
    videos = VideoStore(catalog)
    upload = {"filename": path.name} if kind == "upload" else None
    video = videos.create(NewVideo(tenant.tenant_id, path.name, kind, url, upload))  # type: ignore[arg-type]
    if kind == "upload":
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        videos.complete_upload(
            tenant.tenant_id,
            video.video_id,
            path=str(path),
            sha256=digest,
            size=path.stat().st_size,
        )
    options = {"detector": "motion", **case.options}
    return RunStore(catalog).create(tenant.tenant_id, video.video_id, options).run_id


def _artifacts(run_dir: Path) -> dict[str, Any]:
    """What a succeeded run published that the table and the tests read."""
    cost = json.loads((run_dir / "cost.json").read_text())
    thumbs = sorted((run_dir / "thumbs").glob("*.jpg")) if (run_dir / "thumbs").is_dir() else []
    size = list(Image.open(thumbs[0]).size) if thumbs else None
    return {
        "frames_sampled": cost["frames"]["sampled"],
        "frames_decoded": cost["frames"]["decoded"],
        "processed_s": cost["processed_s"],
        "truncated": cost.get("truncated"),
        "thumb_size": size,
    }


def run_case(case: Case, path: Path) -> dict[str, Any]:
    """Process ``path`` as ``case`` says; the run's final state, error and artifacts."""
    settings = Settings()
    catalog = Catalog.from_settings(settings)
    with _source(case, path) as (kind, url):
        run_id = _queue(catalog, case, path, kind, url)
        print(json.dumps({"run_id": run_id}), flush=True)  # known to the parent if it kills us
        published = None
        with contextlib.suppress(Exception):  # a failed run raises; its verdict is in the catalog
            published = process_video(ProcessVideoParams(run_id=run_id))
    run = RunStore(catalog).get(run_id)
    outcome: dict[str, Any] = {
        "run_id": run_id,
        "state": run.state,
        "code": run.error_code,
        "message": run.error_message,
    }
    if run.state == "succeeded" and published:
        outcome.update(_artifacts(settings.data_dir / published))
    return outcome


def _peak_since_exec_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", required=True)
    parser.add_argument("--path", required=True, type=Path)
    args = parser.parse_args(argv)
    outcome = run_case(by_name()[args.case], args.path)
    # This process's own peak since exec (VmHWM belongs to the address space exec made): wait4's
    # and getrusage's figures also count what the parent had resident when it forked us (a
    # large test process made every case "over its memory bound").
    outcome["peak_mib"] = _peak_since_exec_mib()
    print(json.dumps(outcome), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
