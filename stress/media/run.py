"""Hostile media: generate the corpus, run every case through the real flow, print the table.

    python -m stress.media [--quick] [--case NAME ...] [--keep DIR]

Each case runs in a child process (``stress.media.child``) against one temporary Prefect server
and one catalog shared by all cases, as a service's worker would run them one after another. The
child's wall time and peak RSS (``wait4``'s rusage) are measured, and it is killed at the case's
time bound or as soon as its resident set passes the memory bound, so a hang is reported as
``stuck``, never waited for. After the cases, the baseline runs again and the catalog must hold no
run left queued or running: the service stayed healthy. Exit code 1 if any case is not as
expected.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stress.media.cases import SUCCEEDS, Case, by_name
from stress.media.corpus import MissingCodec

_POLL_S = 0.05
_KILLED = ("stuck", "memory")


@dataclass(frozen=True)
class Result:
    """What one case did."""

    case: Case
    outcome: str  # "succeeds", an error code, "skipped: ...", "stuck", "crashed", "memory"
    message: str
    wall_s: float
    peak_mib: float
    details: dict[str, Any]

    @property
    def as_expected(self) -> bool:
        if self.outcome.startswith("skipped"):
            return True
        within = self.wall_s <= self.case.time_s and self.peak_mib <= self.case.memory_mib
        return within and self.outcome in self.case.expect


def _peak_rss_mib(pid: int) -> float:
    """The process's peak resident set so far (``VmHWM``), 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _watch(proc: subprocess.Popen[str], case: Case) -> tuple[str | None, float, float]:
    """Wait for the child within the case's bounds: (kill reason or None, wall s, peak MiB)."""
    started = time.monotonic()
    reason = None
    while True:
        pid, _status, usage = os.wait4(proc.pid, os.WNOHANG)
        wall = time.monotonic() - started
        if pid:
            proc.returncode = _status
            return reason, wall, usage.ru_maxrss / 1024
        if reason is None and wall > case.time_s:
            reason = "stuck"
        elif reason is None and _peak_rss_mib(proc.pid) > case.memory_mib:
            reason = "memory"
        if reason is not None:
            os.killpg(proc.pid, signal.SIGKILL)
        time.sleep(_POLL_S)


def run_child(case: Case, path: Path, env: dict[str, str], as_case: str = "") -> Result:
    """Run one case (as the case named ``as_case``) in a child process and read its outcome."""
    name = as_case or case.name
    command = [sys.executable, "-m", "stress.media.child", "--case", name, "--path", str(path)]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(  # noqa: S603 (our own interpreter and module)
            command, stdout=out, stderr=err, env=env, text=True, start_new_session=True
        )
        killed, wall, peak = _watch(proc, case)
        out.seek(0)
        err.seek(0)
        lines = out.read().strip().splitlines()
        tail = err.read().strip().splitlines()[-3:]
    if killed:
        started = json.loads(lines[0]) if lines and lines[0].startswith("{") else {}
        return Result(
            case,
            killed,
            f"killed at its bound ({case.time_s:g} s / {case.memory_mib:g} MiB)",
            wall,
            peak,
            started,
        )
    try:
        details = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        return Result(case, "crashed", " | ".join(tail), wall, peak, {})
    outcome = SUCCEEDS if details["state"] == "succeeded" else str(details["code"])
    peak = float(details.get("peak_mib", peak))  # the child's own figure, see media_child
    return Result(case, outcome, details.get("message") or "", wall, peak, details)


def make_corpus(cases: list[Case], folder: Path) -> dict[str, Path | str]:
    """Each case's file, or why it was skipped."""
    made: dict[str, Path | str] = {}
    for case in cases:
        try:
            made[case.name] = case.make(folder)
        except MissingCodec as exc:
            made[case.name] = f"skipped: {exc}"
    return made


@contextmanager
def prefect_server() -> Iterator[str]:
    """A temporary Prefect server for all children; its API URL."""
    from prefect.settings import PREFECT_API_URL, PREFECT_LOGGING_TO_API_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with (
        temporary_settings({PREFECT_LOGGING_TO_API_ENABLED: False}),
        prefect_test_harness(server_startup_timeout=180),
    ):
        yield str(PREFECT_API_URL.value())


def child_env(data_dir: Path, api_url: str) -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    env = {k: v for k, v in os.environ.items() if not k.startswith("VES_")}
    env.update(
        PYTHONPATH=os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        PREFECT_API_URL=api_url,
        PREFECT_LOGGING_TO_API_ENABLED="false",
        PREFECT_LOGGING_LEVEL="WARNING",
        VES_DATA_DIR=str(data_dir),
        VES_ALLOW_PRIVATE_SOURCES="true",
        VES_SOURCE_TIMEOUT_S="3",
        VES_READ_TIMEOUT_S="5",
        VES_CHUNK_WORKERS="2",
    )
    return env


def run_cases(cases: list[Case], workdir: Path, api_url: str | None = None) -> list[Result]:
    """Make the corpus and run each case, then the health check (the baseline again).

    ``api_url`` names a running Prefect server (a test session's); otherwise one is started.
    """
    made = make_corpus(cases, workdir / "corpus")
    if api_url is None:
        with prefect_server() as started:
            return _run_all(cases, made, workdir, child_env(workdir / "data", started))
    return _run_all(cases, made, workdir, child_env(workdir / "data", api_url))


def _run_all(
    cases: list[Case], made: dict[str, Path | str], workdir: Path, env: dict[str, str]
) -> list[Result]:
    results = []
    for case in cases:
        target = made[case.name]
        if isinstance(target, str):
            results.append(Result(case, target, "", 0.0, 0.0, {}))
            continue
        results.append(run_child(case, target, env))
        print(row(results[-1]), file=sys.stderr, flush=True)
    killed = {str(r.details["run_id"]) for r in results if r.outcome in _KILLED and r.details}
    results.append(_healthy(workdir, env, killed))
    return results


def _healthy(workdir: Path, env: dict[str, str], killed: set[str]) -> Result:
    """The baseline succeeds after all the cases, and no run is left queued or running (but
    those of children killed at their bound, which only the API's reaper can fail)."""
    from sqlalchemy import text

    from storage.catalog.database import Catalog

    base = by_name()["baseline"]
    case = Case("healthy_after", "the baseline again; no run left running", (SUCCEEDS,), base.make)
    result = run_child(case, base.make(workdir / "corpus"), env, as_case="baseline")
    catalog = Catalog.open(workdir / "data" / "catalog.sqlite3")
    with catalog.read() as conn:
        query = text("SELECT run_id FROM runs WHERE state IN ('queued', 'running')")
        left = {row[0] for row in conn.execute(query)} - killed
    catalog.dispose()
    if left:
        message = f"{len(left)} run(s) left queued or running: {', '.join(sorted(left))}"
        return Result(case, "unhealthy", message, result.wall_s, result.peak_mib, {})
    return result


def _outcome(result: Result) -> str:
    """The outcome cell: the code and message of a failure, what a success produced."""
    text = f"`{result.outcome}`"
    if result.outcome != SUCCEEDS:
        message = result.message.replace("|", "/")[:110]
        return f"{text}: {message}" if message else text
    d = result.details
    if d.get("frames_sampled") is None:
        return text
    bound = ", truncated at the bound" if d.get("truncated") else ""
    size = f", thumbnails {d['thumb_size'][0]}x{d['thumb_size'][1]}" if d.get("thumb_size") else ""
    return f"{text} ({d['frames_sampled']} frames, {d['processed_s']:.1f} s{bound}{size})"


def row(result: Result) -> str:
    """One markdown row: case, what it is, expected, outcome, as expected, wall, peak, bounds."""
    case = result.case
    cells = [
        case.name,
        case.what,
        " or ".join(case.expect),
        _outcome(result),
        "yes" if result.as_expected else "**NO**",
        f"{result.wall_s:.1f}",
        f"{result.peak_mib:.0f}",
        f"{case.time_s:g} s / {case.memory_mib:g} MiB",
    ]
    return "| " + " | ".join(cells) + " |"


_HEAD = "| case | what | expected | outcome | as expected | wall s | peak MiB | bounds |"


def table(results: list[Result]) -> str:
    return "\n".join([_HEAD, "|---|---|---|---|---|---|---|---|", *(row(r) for r in results)])


def summary(results: list[Result]) -> str:
    """The last line: cases, how many as expected, how many stuck, the worst time and memory."""
    ok = sum(r.as_expected for r in results)
    stuck = sum(r.outcome == "stuck" for r in results)
    worst_s = max((r.wall_s for r in results), default=0.0)
    worst_mib = max((r.peak_mib for r in results), default=0.0)
    return (
        f"media: {len(results)} cases, {ok} as expected, {stuck} stuck, "
        f"worst {worst_s:.1f} s / {worst_mib:.0f} MiB"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="the subset inside make test")
    parser.add_argument("--case", action="append", default=[], help="run only these cases")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args(argv)
    cases = list(by_name().values())
    if args.case:
        cases = [c for c in cases if c.name in args.case]
    elif args.quick:
        cases = [c for c in cases if c.quick]
    with tempfile.TemporaryDirectory(prefix="ves-media-") as tmp:
        workdir = args.keep or Path(tmp)
        (workdir / "corpus").mkdir(parents=True, exist_ok=True)
        results = run_cases(cases, workdir)
    print(table(results))
    print(summary(results))
    return 0 if all(r.as_expected for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
