"""A reader that never stops during the kill trials: it reads what the service serves and keeps
proof of it, so the trials can tell that nothing half-published was ever served.

Each round it reads every clip's ``cost.json`` and evidence view and a thumbnail, and every
fifth round asks a question. While the service is down its requests fail to connect: those are
counted, not errors. What is served is checked at the end (``served_problems``): each served
run succeeded, its served ``cost.json`` is the published file's document, each span's sha256 is
its canonical JSON's and each thumbnail's bytes have the sha256 of its frame.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from storage.artifacts.blobs import BlobStore
from storage.artifacts.layout import run_key
from storage.artifacts.spans import canonical_sha256

QUESTION = "Did anyone walk through the lobby?"


@dataclass
class Prober:
    """Reads ``videos`` through ``url`` with ``key`` in a thread until ``stop``."""

    url: str
    key: str
    videos: list[str]
    outcomes: Counter[str] = field(default_factory=Counter)  # "200", "down", "409"...
    served: dict[str, dict[str, Any]] = field(default_factory=dict)  # run_id -> cost served
    bad: list[str] = field(default_factory=list)  # found while reading (two costs for one run)
    asks: Counter[str] = field(default_factory=Counter)  # "tried", "answered"
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="prober", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=60)

    def _loop(self) -> None:
        round_ = 0
        headers = {"Authorization": f"Bearer {self.key}"}
        while not self._stop.is_set():
            with httpx.Client(base_url=self.url, headers=headers, timeout=10) as client:
                while not self._stop.is_set():
                    round_ += 1
                    try:
                        for video_id in self.videos:
                            self._read(client, video_id, ask=round_ % 5 == 0)
                    except httpx.TransportError:
                        self.outcomes["down"] += 1
                        self._stop.wait(0.5)
                        break  # a new client: the old one's pool points at a dead server
                    self._stop.wait(0.2)

    def _get(self, client: httpx.Client, path: str) -> httpx.Response | None:
        answer = client.get(path)
        self.outcomes[str(answer.status_code)] += 1
        return answer if answer.status_code == 200 else None

    def _read(self, client: httpx.Client, video_id: str, ask: bool) -> None:
        base = f"/api/product/videos/{video_id}"
        cost = self._get(client, f"{base}/cost")
        if cost is not None:
            document = cost.json()
            # An evidence view read first leaves an empty entry for its run (a run published
            # between this reader's two reads): the first cost.json read of the run fills it.
            seen = self.served.get(document["run_id"]) or document
            self.served[document["run_id"]] = seen
            if seen != document:
                differ = sorted(
                    k for k in seen.keys() | document.keys() if seen.get(k) != document.get(k)
                )
                shown = {k: (seen.get(k), document.get(k)) for k in differ}
                self.bad.append(
                    f"run {document['run_id']}: two different cost.json served: {shown}"
                )
        view = self._get(client, f"{base}/evidence-view")
        if view is not None:
            self._check_view(client, view.json())
        if ask:
            self.asks["tried"] += 1
            answer = client.post(f"{base}/ask", json={"question": QUESTION})
            self.outcomes[str(answer.status_code)] += 1
            self.asks["answered"] += answer.status_code == 200

    def _check_view(self, client: httpx.Client, view: dict[str, Any]) -> None:
        self.served.setdefault(view["run_id"], {})
        for span in view["spans"]:
            if canonical_sha256(span) != span["sha256"]:
                self.bad.append(f"span {span['evidence_id']}: its sha256 is not its JSON's")
        frames = [f for span in view["spans"][:1] for f in span["frames"][:1]]
        for frame in frames:
            thumb = self._get(client, frame["thumbnail_url"])
            if thumb is not None and hashlib.sha256(thumb.content).hexdigest() != frame["sha256"]:
                self.bad.append(f"{frame['thumbnail_url']}: bytes are not the frame's sha256")

    def served_problems(self, store: BlobStore, runs: dict[str, dict[str, Any]]) -> list[str]:
        """What was served that should not have been (the runs as the catalog has them now)."""
        problems = list(self.bad)
        for run_id, cost in self.served.items():
            run = runs.get(run_id)
            if run is None or run["state"] != "succeeded":
                problems.append(f"run {run_id} was served but is {run and run['state']}")
                continue
            key = run_key(run["tenant_id"], run["video_id"], run_id)
            if cost and json.loads(store.get_bytes(f"{key}/cost.json")) != cost:
                problems.append(f"run {run_id}: the served cost.json is not the published one")
        return problems
