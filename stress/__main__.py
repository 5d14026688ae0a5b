"""``make stress``: every part of the hardening suite in full, then one summary table.

    .venv/bin/python -m stress [--only fuzz,media,kills,isolation,load,slow_clients,
                                dependency_audit]

Each part runs in a process of its own (``python -m stress.<part>``, also runnable alone, see its
docstring), its output passed through as it comes; the last line each part prints is its
summary. The table lists them; the exit code is 1 when any part failed. Short versions of the
parts run inside ``make test`` (``tests/stress/``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

PARTS = (
    ("fuzz", "API fuzzing (schemathesis over the served OpenAPI)"),
    ("media", "hostile media corpus through the real flow"),
    ("kills", "kill -9 trials against the whole service"),
    ("isolation", "tenant isolation matrix, REST and MCP"),
    ("load", "100 clients reading published runs while two runs execute"),
    ("slow_clients", "slow connections (a byte a second) beside normal clients"),
    ("dependency_audit", "known vulnerabilities in the pinned dependencies"),
)


def run(part: str) -> tuple[str, bool, float]:
    """Run one part; its last line, whether it passed, and its wall time."""
    started = time.perf_counter()
    process = subprocess.Popen(  # noqa: S603 (our own interpreter and module)
        [sys.executable, "-m", f"stress.{part}"], stdout=subprocess.PIPE, text=True
    )
    last = ""
    assert process.stdout is not None
    for line in process.stdout:
        print(line, end="", flush=True)
        last = line.strip() or last
    return last, process.wait() == 0, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default=",".join(name for name, _ in PARTS))
    chosen = set(parser.parse_args().only.split(","))
    rows = []
    for name, what in PARTS:
        if name in chosen:
            print(f"== {name}: {what}", flush=True)
            rows.append((name, *run(name)))
    print("\n| part | summary | passed | wall s |\n|---|---|---|---|")
    for name, last, passed, seconds in rows:
        print(f"| {name} | {last} | {'yes' if passed else 'NO'} | {seconds:.0f} |")
    sys.exit(0 if all(passed for _, _, passed, _ in rows) else 1)


if __name__ == "__main__":
    main()
