"""Comparing two answers of the isolation matrix, and the tally of its cells and leaks."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

# Headers that differ between any two requests: they tell nothing about the ids.
VOLATILE_HEADERS = {"date", "x-request-id", "server"}
VOLATILE_FIELDS = {"request_id"}


@dataclass(frozen=True)
class Leak:
    """A cell that failed: where, and what differed or leaked."""

    surface: str  # "rest" or "mcp"
    cell: str
    what: str


@dataclass
class Report:
    """Cells checked, leaks found, and the latency ratios of the read routes."""

    cells: int = 0
    leaks: list[Leak] = field(default_factory=list)
    surfaces: Counter[str] = field(default_factory=Counter)
    ratios: dict[str, float] = field(default_factory=dict)

    def count(self, surface: str, problem: str, cell: str) -> None:
        """One more cell; ``problem`` is '' when it held."""
        self.cells += 1
        self.surfaces[surface] += 1
        if problem:
            self.leaks.append(Leak(surface, cell, problem))

    def add(self, leak: Leak) -> None:
        self.count(leak.surface, leak.what, leak.cell)

    def merge(self, other: Report) -> None:
        self.cells += other.cells
        self.surfaces.update(other.surfaces)
        self.leaks += other.leaks
        self.ratios.update(other.ratios)

    def largest_ratio(self) -> tuple[str, float] | None:
        """The read route whose A-id and unknown-id latencies differ most (either way)."""
        if not self.ratios:
            return None
        route = max(self.ratios, key=lambda r: max(self.ratios[r], 1 / self.ratios[r]))
        return route, self.ratios[route]

    def render(self) -> str:
        lines = [f"isolation: {self.cells} cells checked, {len(self.leaks)} leaks"]
        lines.append("cells: " + ", ".join(f"{n} {s}" for s, n in sorted(self.surfaces.items())))
        if largest := self.largest_ratio():
            route, ratio = largest
            slower = "A's ids" if ratio >= 1 else "unknown ids"
            lines.append(
                f"timing: median latency, A's ids vs unknown ids, largest difference "
                f"{max(ratio, 1 / ratio):.2f}x ({slower} slower; {route}; "
                f"{len(self.ratios)} read routes)"
            )
        if self.leaks:
            lines.append(f"{'surface':8} {'cell':70} what")
            lines += [f"{k.surface:8} {k.cell:70} {k.what}" for k in self.leaks]
        return "\n".join(lines)


def _placeheld(text: str, sent: dict[str, str]) -> str:
    for value, placeholder in sent.items():
        text = text.replace(value, placeholder)
    return text


def shape(response: httpx.Response, sent: dict[str, str]) -> dict[str, Any]:
    """What a client can observe of an answer, with the ids it sent as placeholders."""
    headers = {
        k.lower(): _placeheld(v, sent)
        for k, v in response.headers.items()
        if k.lower() not in VOLATILE_HEADERS
    }
    body: Any = _placeheld(response.text, sent)
    if "json" in headers.get("content-type", ""):
        body = json.loads(body)
        if isinstance(body, dict):
            body = {k: v for k, v in body.items() if k not in VOLATILE_FIELDS}
    return {"status": response.status_code, "headers": headers, "body": body}


def leaked(text: str, secrets: dict[str, str], sent: dict[str, str]) -> list[str]:
    """Which of A's secrets ``text`` holds, but for the ones the caller sent itself."""
    return [
        what
        for what, value in secrets.items()
        if value and value in text and not any(value in s for s in sent)  # not part of what it sent
    ]


def same_answer(
    on_a: httpx.Response, on_unknown: httpx.Response, sent: dict[str, str], secrets: dict[str, str]
) -> str:
    """'' when the two answers cannot be told apart and hold nothing of A's; else what differs."""
    a, unknown = shape(on_a, sent), shape(on_unknown, sent)
    for part in ("status", "body", "headers"):
        if a[part] != unknown[part]:
            return f"{part} differs: {_short(a[part])} vs {_short(unknown[part])}"
    everything = on_a.text + json.dumps(dict(on_a.headers))
    found = leaked(everything, secrets, sent)
    return f"the answer holds A's {found}" if found else ""


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) < 160 else text[:157] + "..."
