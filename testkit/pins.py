"""Why each held pin is held, checked against what is installed.

``constraints-reasons.toml`` names the newest release of every exactly pinned package (read from
the package index on the day in ``checked``) and, for each pin below it, one reason of two kinds:

* ``required_by``: another installed distribution's own metadata forbids the newest release
  (``prefect`` requires ``fastapi<0.151``). The reason holds while the installed distribution
  still says so.
* ``measured_with``: a behaviour measured with exact versions (the held package's candidate
  among them) and the test that showed it. The reason holds only for those versions: when one of
  them moves, or a newer candidate appears, it has to be measured again.

``problems()`` reads only files and installed metadata, so ``tests/test_pins.py`` runs offline
and a release on PyPI never turns ``make test`` red. ``python -m testkit.pins`` (``make pins``)
is the part that asks the index: newer releases than ``[latest]`` records, and whether the
newest release of each ``required_by`` distribution still forbids what it did.
"""

from __future__ import annotations

import email.parser
import importlib.metadata
import re
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
REASONS = ROOT / "constraints-reasons.toml"
CONSTRAINTS = ROOT / "constraints.txt"
PYPROJECT = ROOT / "pyproject.toml"
HELD_MARK = "# held:"


def load_reasons(path: Path = REASONS) -> dict[str, Any]:
    """The reasons file with every package name canonical (``SQLAlchemy`` is ``sqlalchemy``)."""
    data = tomllib.loads(path.read_text())
    data["latest"] = {canonicalize_name(k): v for k, v in data.get("latest", {}).items()}
    data["held"] = {canonicalize_name(k): v for k, v in data.get("held", {}).items()}
    return data


def constraint_pins(path: Path = CONSTRAINTS) -> dict[str, str]:
    """Package -> pinned version, of every ``name==version`` line."""
    return {
        canonicalize_name(req.name): str(req.specifier).removeprefix("==")
        for req in _requirements(path.read_text().splitlines())
    }


def held_comments(path: Path = CONSTRAINTS) -> set[str]:
    """The packages whose line in constraints.txt has a ``# held:`` comment block right above."""
    held: set[str] = set()
    block: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            block.append(line)
            continue
        if line.strip() and any(c.startswith(HELD_MARK) for c in block):
            held.add(canonicalize_name(Requirement(line).name))
        block = []
    return held


def pyproject_exact_pins(path: Path = PYPROJECT) -> dict[str, str]:
    """Package -> version of every ``==`` requirement in pyproject (dependencies and extras)."""
    project = tomllib.loads(path.read_text())["project"]
    lines = [
        *project["dependencies"],
        *(r for e in project["optional-dependencies"].values() for r in e),
    ]
    return {
        canonicalize_name(req.name): str(req.specifier).removeprefix("==")
        for req in _requirements(lines)
        if str(req.specifier).startswith("==")
    }


def _requirements(lines: Iterable[str]) -> Iterable[Requirement]:
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if text:
            yield Requirement(text)


def problems(reasons: dict[str, Any] | None = None) -> list[str]:
    """Every way the pins and their reasons disagree with each other or with what is installed."""
    reasons = reasons or load_reasons()
    pins = constraint_pins()
    found = [*_unreviewed(reasons, pins), *_comments(reasons)]
    for package, reason in reasons["held"].items():
        found += _held(package, reason, reasons["latest"], pins)
    return found


def _unreviewed(reasons: dict[str, Any], pins: dict[str, str]) -> list[str]:
    """An exact pin nobody compared with the newest release, or below it with no reason."""
    latest, held = reasons["latest"], reasons["held"]
    found = [
        f"{name}=={version} is pinned in pyproject.toml but has no [latest] entry"
        for name, version in pyproject_exact_pins().items()
        if name not in latest
    ]
    for name, newest in latest.items():
        if name not in pins:
            found.append(f"[latest] names {name}, which constraints.txt does not pin")
        elif pins[name] != newest and name not in held:
            found.append(f"{name}=={pins[name]} is below its newest {newest} and has no reason")
        elif pins[name] == newest and name in held:
            found.append(f"{name} is held but pinned at its newest {newest}: drop the reason")
    return found


def _comments(reasons: dict[str, Any]) -> list[str]:
    """constraints.txt says ``# held:`` above exactly the held pins, for whoever reads it."""
    commented, held = held_comments(), set(reasons["held"])
    return [
        *(
            f"{n} is held but its constraints.txt line has no '{HELD_MARK}' comment"
            for n in sorted(held - commented)
        ),
        *(
            f"{n} has a '{HELD_MARK}' comment in constraints.txt but no reason"
            for n in sorted(commented - held)
        ),
    ]


def _held(
    package: str, reason: dict[str, Any], latest: dict[str, str], pins: dict[str, str]
) -> list[str]:
    """Whether one reason still holds for what is installed."""
    if package not in latest:
        return [f"{package} is held but has no [latest] entry"]
    if "required_by" in reason:
        return _required(package, reason["required_by"], latest[package])
    if "measured_with" in reason:
        return _measured(package, reason["measured_with"], latest[package])
    return [f"{package}: a reason needs required_by or measured_with"]


def _required(package: str, by: str, newest: str) -> list[str]:
    """The installed ``by`` still forbids the newest release of ``package``."""
    try:
        requires = importlib.metadata.requires(by) or []
    except importlib.metadata.PackageNotFoundError:
        return [f"{package} is held for {by}, which is not installed"]
    if forbids(requires, package, newest):
        return []
    installed = importlib.metadata.version(by)
    return [f"{package} is held for {by}, but {by} {installed} allows {package} {newest}: move it"]


def forbids(requires: Iterable[str], package: str, version: str) -> bool:
    """Whether an unconditional requirement among ``requires`` excludes ``package`` ``version``."""
    for text in requires:
        req = Requirement(text)
        if canonicalize_name(req.name) != canonicalize_name(package):
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        if not req.specifier.contains(version, prereleases=True):
            return True
    return False


def _measured(package: str, measured_with: dict[str, str], newest: str) -> list[str]:
    """The versions the behaviour was measured with are still the ones at stake."""
    now = {
        name: newest if canonicalize_name(name) == package else importlib.metadata.version(name)
        for name in measured_with
    }
    if package not in {canonicalize_name(n) for n in measured_with}:
        return [f"{package}: measured_with must name the {package} release that was tried"]
    return [
        f"{package}: measured with {name} {then}, now {now[name]}: measure again"
        for name, then in measured_with.items()
        if now[name] != then
    ]


# `make pins`: the one part that asks the package index (never in make test).


def newest_release(package: str) -> str | None:
    """The newest release on the configured index, by ``pip index versions``."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", package],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    match = re.search(r"^\S+ \(([^)]+)\)", done.stdout, re.MULTILINE)
    return match.group(1) if match else None


def requires_of_release(package: str, version: str) -> list[str]:
    """``Requires-Dist`` of one release, from its wheel (downloaded without dependencies)."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "-d",
                folder,
                f"{package}=={version}",
            ],
            capture_output=True,
            timeout=600,
            check=True,
        )
        wheel = zipfile.ZipFile(next(Path(folder).glob("*.whl")))
        name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(wheel.read(name).decode())
        return metadata.get_all("Requires-Dist") or []


def main() -> None:
    """Newer releases than [latest] records, and required_by reasons the newest releases drop."""
    reasons = load_reasons()
    stale = 0
    for package, recorded in sorted(reasons["latest"].items()):
        newest = newest_release(package)
        if newest is None:
            print(f"{package}: the index did not answer")
        elif newest != recorded:
            stale += 1
            print(f"{package}: {newest} released (recorded {recorded}): update [latest], try it")
    for package, reason in sorted(reasons["held"].items()):
        by = reason.get("required_by")
        newest_by = newest_release(by) if by else None
        if by and newest_by:
            still = forbids(requires_of_release(by, newest_by), package, reasons["latest"][package])
            stale += not still
            verdict = "still forbids" if still else "ALLOWS"
            print(f"{package}: {by} {newest_by} {verdict} {package} {reasons['latest'][package]}")
        elif not by:
            print(f"{package}: measured with {reason['measured_with']} ({reason['test']})")
    print(f"pins: {stale} to look at" if stale else "pins: every reason still holds on the index")
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
