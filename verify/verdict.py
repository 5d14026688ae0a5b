"""What ``ves verify`` says of a bundle: one ``Check`` per group of checks, each failing file with
its reason (``Failure``), and the ``Verdict`` over them all."""

from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass, field

# What reading a damaged zip member raises: a failing check, never a traceback.
READ_ERRORS = (zipfile.BadZipFile, zlib.error, OSError, EOFError)


@dataclass(frozen=True)
class Failure:
    """One file that fails a check, and why."""

    path: str
    reason: str


@dataclass
class Check:
    """One group of checks: what held (``summary``) or what did not (``failures``)."""

    name: str
    summary: str = ""
    failures: list[Failure] = field(default_factory=list)

    def fail(self, path: str, reason: str) -> None:
        self.failures.append(Failure(path, reason))


@dataclass(frozen=True)
class Verdict:
    """Every check group, and where the key that checked the signature came from."""

    checks: list[Check]
    key_note: str

    @property
    def ok(self) -> bool:
        return not any(c.failures for c in self.checks)

    @property
    def failing_files(self) -> list[str]:
        return sorted({f.path for c in self.checks for f in c.failures})

    def lines(self) -> list[str]:
        """One line per check group (more for its failures), the key note, the verdict."""
        out = []
        for check in self.checks:
            if not check.failures:
                out.append(f"{check.name:11s} ok    {check.summary}")
            out += [f"{check.name:11s} FAIL  {f.path}: {f.reason}" for f in check.failures]
        out.append(self.key_note)
        if self.ok:
            out.append("VERIFIED: every check holds")
        else:
            out.append(f"NOT VERIFIED: failing: {', '.join(self.failing_files)}")
        return out
