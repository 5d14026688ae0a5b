"""A bounded, SSRF-guarded, read-only file over HTTP: the first bytes of a source and whatever
else its demuxer seeks to, fetched by byte ranges, never more than a byte budget nor past a
deadline.

PyAV opens a file-like object through Python callbacks (``read``, ``seek``, ``tell``), so the
container's own demuxer decides what to read: the head of an MP4 whose index (``moov``) comes
first, the index at the end of one written without ``faststart``, the ``Info`` of an MKV. Each
request goes through ``ves.netguard.open_source`` (every address checked, redirects checked hop by
hop, connections pinned). A server that ignores ``Range`` (200 instead of 206) is read as one
stream from its start, so a seek forward costs the bytes skipped.

The deadline is checked at each chunk as it arrives: ``iter_bytes()`` without a size, because
with one httpx waits for that many bytes first (a server trickling 100 bytes every 50 ms held a
64 KiB read for 33 s). A socket that goes silent waits at most the timeout its request was sent
with (the time left then), so a read ends within twice the limit at worst.

Past the budget a read answers end-of-file instead of raising, so the demuxer fails on its own
terms; ``exhausted`` then tells the caller the budget, not the file, ran out.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass

from ves.errors import SourceUnreachable
from ves.netguard import Opened, open_source, read_errors_translated

BLOCK_BYTES = 256 * 1024  # a 10-minute MP4's index fits in one or two blocks
_TOTAL = re.compile(r"bytes \d+-\d+/(\d+)")


@dataclass(frozen=True)
class ReadBounds:
    """The bounds of one header read: bytes fetched, a wall-clock deadline, the address policy."""

    max_bytes: int
    deadline: float  # ``time.monotonic()`` after which nothing more is fetched
    allow_private: bool

    def remaining_s(self) -> float:
        """Seconds left before the deadline (a timeout for the next request)."""
        return max(self.deadline - time.monotonic(), 0.001)

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline


class RangedFile:
    """``url`` as a seekable read-only file, fetched in blocks of ``BLOCK_BYTES`` on demand.

    Use as a context manager: a server without ranges keeps one response open while read.
    """

    def __init__(self, url: str, bounds: ReadBounds) -> None:
        self.url, self.bounds = url, bounds
        self.size: int | None = None  # the whole resource's length, when the server says it
        self.fetched = 0  # bytes received over the network
        self.exhausted = False  # a read was cut short by the byte budget
        self.ranges: bool | None = None  # None until the first answer
        self._blocks: dict[int, bytes] = {}
        self._stream: Iterator[bytes] | None = None
        self._streamed = bytearray()
        self._pos = 0
        self._exits = ExitStack()

    def __enter__(self) -> RangedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._exits.close()

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence == 2 and self.size is None:
            raise OSError("the size of the source is not known")
        base = {0: 0, 1: self._pos, 2: self.size or 0}[whence]
        self._pos = max(base + offset, 0)
        return self._pos

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes at the position (b"" at the end, or once the budget is spent)."""
        if self.ranges is None:
            self._first_answer()
        want = BLOCK_BYTES if n < 0 else n
        if self.size is not None:
            want = min(want, self.size - self._pos)
        if want <= 0:
            return b""
        data = self._read_streamed(want) if not self.ranges else self._read_ranged(want)
        self._pos += len(data)
        return data

    def _first_answer(self) -> None:
        """Ask for the first block; a 200 answer means the server ignores ranges, and its one
        response then stays open to be read as far as the demuxer needs."""
        opened = self._exits.enter_context(self._open(0))
        self.ranges = opened.response.status_code == 206
        self._note_size(opened)
        if self.ranges:
            with read_errors_translated():
                self._blocks[0] = self._body(opened, BLOCK_BYTES)
            self._exits.close()  # one request per block: nothing stays open
        else:
            self._stream = opened.response.iter_bytes()

    def _open(self, start: int) -> AbstractContextManager[Opened]:
        if self.bounds.expired():
            raise SourceUnreachable("the source did not answer in time")
        return open_source(
            self.url,
            allow_private=self.bounds.allow_private,
            timeout_s=self.bounds.remaining_s(),
            headers={"Range": f"bytes={start}-{start + BLOCK_BYTES - 1}"},
        )

    def _note_size(self, opened: Opened) -> None:
        """The resource's length: a 206's ``Content-Range`` total, a 200's ``Content-Length``
        (what the server claims: used for the bitrate, never trusted as a bound)."""
        headers = opened.response.headers
        total = _TOTAL.match(headers.get("content-range", ""))
        length = headers.get("content-length", "")
        if total:
            self.size = int(total.group(1))
        elif opened.response.status_code == 200 and length.isdigit():
            self.size = int(length)

    def _budget(self, want: int) -> int:
        left = self.bounds.max_bytes - self.fetched
        if left < want:
            self.exhausted = True
        return max(min(left, want), 0)

    def _body(self, opened: Opened, limit: int) -> bytes:
        """At most ``limit`` bytes of the answer, within the budget and the deadline."""
        body = bytearray()
        allowed = self._budget(limit)
        for chunk in opened.response.iter_bytes():
            body.extend(chunk)
            if len(body) >= allowed:
                break
            if self.bounds.expired():
                raise SourceUnreachable("the source did not answer in time")
        self.fetched += min(len(body), allowed)
        return bytes(body[:allowed])

    def _read_ranged(self, want: int) -> bytes:
        index, offset = divmod(self._pos, BLOCK_BYTES)
        block = self._blocks.get(index)
        if block is None:
            with self._open(index * BLOCK_BYTES) as opened:
                if opened.response.status_code != 206:
                    raise SourceUnreachable("the source stopped answering byte ranges")
                block = self._blocks[index] = self._body(opened, BLOCK_BYTES)
        return block[offset : offset + want]

    def _read_streamed(self, want: int) -> bytes:
        """From the one streamed answer: what arrived is kept, so seeking back is free."""
        end = self._pos + want
        while len(self._streamed) < end and self._pull():
            pass
        return bytes(self._streamed[self._pos : end])

    def _pull(self) -> bool:
        assert self._stream is not None
        if self._budget(1) == 0 or self.bounds.expired():
            if self.bounds.expired():
                raise SourceUnreachable("the source did not answer in time")
            return False
        with read_errors_translated():
            chunk = next(self._stream, b"")
        chunk = chunk[: self._budget(len(chunk))]
        self._streamed.extend(chunk)
        self.fetched += len(chunk)
        return bool(chunk)
