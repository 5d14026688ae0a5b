"""Known vulnerabilities in the pinned dependency set, by pip-audit.

    .venv/bin/python -m stress.dependency_audit

pip-audit reads every pin of ``constraints.txt`` (the exact set the Makefile installs) and asks
the package index's advisory data about each. Where that data cannot be reached, pip-audit skips
the package and still says "No known vulnerabilities found"; this part says how many were
audited and, when none could be, that the advisory data was unreachable, and the rest of
``make stress`` goes on. Findings named in ``KNOWN`` are reported as known, with why they are
accepted; any other finding fails the part.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# Advisory id -> why it is accepted (none today).
KNOWN: dict[str, str] = {}


def audit(constraints: Path = ROOT / "constraints.txt") -> tuple[str, bool]:
    """The summary line and whether the part passed."""
    command = [
        *(sys.executable, "-m", "pip_audit", "-r", str(constraints), "--no-deps"),
        *("--disable-pip", "-f", "json", "--timeout", "15", "--progress-spinner", "off"),
    ]
    done = subprocess.run(  # noqa: S603 (our own interpreter, a fixed command)
        command, capture_output=True, text=True, timeout=600, check=False
    )
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"audit: advisory data unreachable ({reason}); skipped", True
    return summarise(report)


def summarise(report: dict[str, Any]) -> tuple[str, bool]:
    """The summary line of pip-audit's JSON report, and whether the part passed."""
    packages = report.get("dependencies", [])
    audited = [p for p in packages if "skip_reason" not in p]
    if not audited:
        return (
            f"audit: advisory data unreachable (0 of {len(packages)} pins audited), skipped"
        ), True
    findings = [(p["name"], v["id"]) for p in audited for v in p.get("vulns", [])]
    new = [(name, vuln) for name, vuln in findings if vuln not in KNOWN]
    for name, vuln in findings:
        print(f"  {name}: {vuln} ({KNOWN.get(vuln, 'NOT ACCEPTED')})")
    line = (
        f"audit: {len(audited)} of {len(packages)} pins audited, {len(findings)} findings, "
        f"{len(new)} not accepted"
    )
    return line, not new


def main() -> None:
    line, passed = audit()
    print(line)
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
