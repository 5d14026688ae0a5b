"""Slow clients: many connections sending a byte a second must not starve the others.

    .venv/bin/python -m stress.slow_clients [--connections 300] [--clients 10] [--seconds 30]
        [--hold-s 120]

The service is started as ``stress.load.run`` starts it (``ves serve`` on a throwaway data folder,
SQLite catalog, local Prefect server and worker) and one copy of the synthetic lobby story is
processed, so the normal clients read a published run. In one run of the service:

1. without slow clients: ``--clients`` normal clients (``stress.load.run``'s readers: list, get,
   scene graph, timeline, evidence view, thumbnails, ask) for ``--seconds``; their p99 is the
   reference;
2. ``--connections`` slow connections are opened, a third of each kind, and each sends one byte
   a second: ``headers`` (slowloris: a GET whose header block never ends), ``json body`` (a POST
   ask with all its headers and a ``Content-Length`` body that trickles) and ``upload body``
   (the upload ``PUT /api/videos/{id}/content`` of a registered slot, ``Content-Length`` 1 MiB,
   trickling). Once they are all open, the normal clients run again for ``--seconds``, beside
   them. They must get 0 errors; their p99 against the reference is the ratio printed;
3. the slow connections go on trickling until the server closes them or ``--hold-s`` has passed
   since they opened: how many the server closed, after how long (min, median, max), and what it
   answered first (e.g. ``408``), per kind.

The last line is the summary::

    slow clients: 300 slow connections, 0 errors, p99 x1.3 (41 ms vs 31 ms), 300/300 closed
    by the server in 10-21 s

(one line).

Exit code 1 when a normal request failed or a slow connection outlived ``--hold-s``.
``tests/stress/test_load.py`` runs a short version inside ``make test``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from stress.load.run import Tally, readers
from stress.load.world import Service, World, conclude, lobby_clip, make_world, throwaway_service

KINDS = ("headers", "json body", "upload body")
UPLOAD_BYTES = 2**20  # the declared size of the slow uploads


@dataclass
class Slow:
    """One slow connection: when it opened, when the server closed it, what it answered."""

    kind: str
    opened_s: float = 0.0
    closed_s: float | None = None
    answer: str = ""

    @property
    def lived_s(self) -> float | None:
        return None if self.closed_s is None else self.closed_s - self.opened_s


def _requests(service: Service, world: World) -> dict[str, bytes]:
    """The start of each kind's request: the bytes sent at once, before the trickle."""
    host = urlsplit(service.url).netloc
    auth = f"Authorization: Bearer {world.key}\r\n"
    video = world.videos[0].video_id
    with service.client(world.key) as client:
        spec = {
            "filename": "slow.mp4",
            "size_bytes": UPLOAD_BYTES,
            "content_type": "video/mp4",
            "sha256": hashlib.sha256(b"\0" * UPLOAD_BYTES).hexdigest(),
        }
        body = {"title": "slow upload", "source_type": "upload", "upload": spec}
        slot = client.post("/api/videos/add", json=body).json()["video_id"]
    return {
        "headers": f"GET /api/product/videos HTTP/1.1\r\nHost: {host}\r\n{auth}X-Slow: ".encode(),
        "json body": (
            f"POST /api/product/videos/{video}/ask HTTP/1.1\r\nHost: {host}\r\n{auth}"
            "Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
            '{"question": "'
        ).encode(),
        "upload body": (
            f"PUT /api/videos/{slot}/content HTTP/1.1\r\nHost: {host}\r\n{auth}"
            f"Content-Type: video/mp4\r\nContent-Length: {UPLOAD_BYTES}\r\n\r\n"
        ).encode(),
    }


async def trickle(host: str, port: int, start: bytes, slow: Slow, hold_s: float) -> None:
    """Send ``start``, then a byte a second until the server closes or answers, or ``hold_s``
    after the connection opened."""
    reader, writer = await asyncio.open_connection(host, port)
    slow.opened_s = time.monotonic()
    answered = asyncio.create_task(reader.read(64))
    try:
        writer.write(start)
        while time.monotonic() < slow.opened_s + hold_s:
            await writer.drain()
            done, _ = await asyncio.wait({answered}, timeout=1.0)
            if done:
                first = answered.result()
                slow.closed_s = time.monotonic()
                slow.answer = first.split(b"\r\n")[0].decode(errors="replace") or "closed"
                return
            writer.write(b"a")
    except (ConnectionError, OSError) as exc:
        slow.closed_s = time.monotonic()
        slow.answer = type(exc).__name__
    finally:
        answered.cancel()
        writer.close()


async def keep_slow(
    address: tuple[str, int],
    start: bytes,
    kind: str,
    hold_s: float,
    stop: asyncio.Event,
    made: list[Slow],
) -> None:
    """One slow client: a slow connection, and another a second after the server closes it, until
    ``stop`` (as an attacker keeps its connections up); each one made is added to ``made``."""
    while True:
        slow = Slow(kind)
        made.append(slow)
        try:
            await trickle(*address, start, slow, hold_s)
        except OSError as exc:  # not even connected: counted as not closed by the server
            slow.answer = f"no connection ({exc})"
            return
        if stop.is_set() or slow.closed_s is None:
            return
        await asyncio.sleep(1.0)  # then the next one, at the trickle's pace


@dataclass(frozen=True)
class SlowResult:
    alone: Tally
    beside: Tally
    slow: list[Slow]  # every slow connection made
    hold_s: float
    connections: int  # kept up at a time

    def ratio(self, q: float = 0.99) -> float:
        """The normal clients' ``q`` quantile beside the slow connections against alone."""
        return self.beside.quantile("all", q) / self.alone.quantile("all", q)

    def closed(self) -> list[float]:
        return sorted(s.lived_s for s in self.slow if s.lived_s is not None)

    def ok(self) -> bool:
        errors = self.alone.error_count() + self.beside.error_count()
        return errors == 0 and self.beside.total() > 0 and len(self.closed()) == len(self.slow)

    def summary(self) -> str:
        closed = self.closed()
        within = f" in {closed[0]:.0f}-{closed[-1]:.0f} s" if closed else ""
        errors = self.alone.error_count() + self.beside.error_count()
        return (
            f"slow clients: {self.connections} slow connections at a time ({len(self.slow)} made), "
            f"{errors} errors, "
            f"p99 x{self.ratio():.1f} ({self.beside.quantile('all', 0.99) * 1e3:.0f} ms vs "
            f"{self.alone.quantile('all', 0.99) * 1e3:.0f} ms), "
            f"{len(closed)}/{len(self.slow)} closed by the server{within}"
        )

    def report(self) -> list[str]:
        lines = []
        for label, tally in (("without slow clients", self.alone), ("beside them", self.beside)):
            lines.append(
                f"normal clients {label}: {tally.total():,} requests, "
                f"{tally.error_count()} errors, p50 {tally.quantile('all', 0.5) * 1e3:.0f} ms, "
                f"p99 {tally.quantile('all', 0.99) * 1e3:.0f} ms"
            )
        for kind in KINDS:
            mine = [s for s in self.slow if s.kind == kind]
            lived = sorted(s.lived_s for s in mine if s.lived_s is not None)
            answers = sorted({s.answer for s in mine if s.answer})
            spread = (
                f"after {lived[0]:.1f} / {statistics.median(lived):.1f} / {lived[-1]:.1f} s "
                "(min / median / max)"
                if lived
                else ""
            )
            lines.append(
                f"slow {kind}: {len(mine)} connections made, {len(lived)} closed by the server "
                f"within {self.hold_s:.0f} s {spread}; answers: {', '.join(answers) or 'none'}"
            )
        return lines


def _pooled(tally: Tally) -> Tally:
    """``tally`` with every route's latencies also under ``all``."""
    for route in list(tally.seconds):
        tally.seconds["all"].extend(tally.seconds[route])
    return tally


async def slow_clients(
    service: Service, world: World, connections: int, clients: int, seconds: float, hold_s: float
) -> SlowResult:
    alone = _pooled(await readers(service.url, world, clients, seconds, pause_s=0.05))
    starts = _requests(service, world)
    url = urlsplit(service.url)
    assert url.hostname is not None and url.port is not None
    address, stop, made = (url.hostname, url.port), asyncio.Event(), list[Slow]()
    kinds = [KINDS[n % len(KINDS)] for n in range(connections)]
    tasks = [
        asyncio.create_task(keep_slow(address, starts[kind], kind, hold_s, stop, made))
        for kind in kinds
    ]
    while not all(s.opened_s for s in made[:connections]) or len(made) < connections:
        if any(t.done() for t in tasks):
            break  # one could not connect: the readers will tell
        await asyncio.sleep(0.1)
    beside = _pooled(await readers(service.url, world, clients, seconds, pause_s=0.05))
    stop.set()
    await asyncio.gather(*tasks)
    return SlowResult(alone, beside, made, hold_s, connections)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=300)
    parser.add_argument("--clients", type=int, default=10, help="normal clients measured")
    parser.add_argument("--seconds", type=float, default=30.0, help="of each measurement")
    parser.add_argument("--hold-s", type=float, default=120.0, help="how long slow ones may live")
    parser.add_argument("--setting", action="append", default=[], help="VES_NAME=value")
    args = parser.parse_args()
    settings = dict(s.split("=", 1) for s in args.setting)
    with throwaway_service(**settings) as (service, root):
        world = make_world(service, lobby_clip(root), videos=1, runs=0)
        result = asyncio.run(
            slow_clients(service, world, args.connections, args.clients, args.seconds, args.hold_s)
        )
    conclude(result)


if __name__ == "__main__":
    main()
