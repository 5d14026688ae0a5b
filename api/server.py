"""How ``ves serve`` runs the API: uvicorn, with a deadline for each request's headers.

    python -m api.server --host 127.0.0.1 --port 8000 [--log-level info]

uvicorn closes a connection that stays idle between two requests (``timeout_keep_alive``, 5 s),
but not one that is in the middle of sending a request's line and headers: a client sending them
a byte a second (slowloris) held its connection for as long as it liked, and enough of them take
every file descriptor of the API process (``stress/slow_clients/run.py``). This runs the same app
(``api.main:app``, as ``uvicorn api.main:app --factory``) with uvicorn's h11 protocol plus one
deadline: the request line and headers must arrive within ``VES_HEADER_TIMEOUT_S`` of the
connection's opening, or of the end of its previous answer; past it the API answers 408
``request_timeout`` (problem+json, ``Connection: close``) and closes the connection. The body's
deadline (``VES_BODY_TIMEOUT_S``, ``VES_BODY_MIN_RATE``) is the request guard's
(``api/middleware.py``): the body is read by the app.

A deadline bounds how long a slow connection is held, not how many are held at once: that is the
process's open-file limit (one file per connection), which is raised here from its soft to its
hard limit (``ulimit -Hn``; the soft limit is often 1024).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from api.problems import PROBLEM_MEDIA_TYPE, problem_body
from ves.errors import RequestTimeout
from ves.settings import Settings


def _timeout_answer(timeout_s: float) -> bytes:
    error = RequestTimeout(f"the request's headers did not arrive within {timeout_s:g} s")
    body = json.dumps(problem_body(error, None)).encode()
    head = (
        f"HTTP/1.1 408 Request Timeout\r\nContent-Type: {PROBLEM_MEDIA_TYPE}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def header_deadline_protocol(timeout_s: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request headers take longer than
    ``timeout_s`` (408 first)."""
    answer = _timeout_answer(timeout_s)

    class HeaderDeadlineProtocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._await_headers()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not None and not self.cycle.response_complete:
                self._cancel()  # the headers are in: the request is the app's now
            else:
                self._await_headers()  # a request has begun (or bytes of one) but no headers

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel()
            super().connection_lost(exc)

        def _await_headers(self) -> None:
            if self._deadline is None and not self.transport.is_closing():
                self._deadline = self.loop.call_later(timeout_s, self._expired)

        def _cancel(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if self.cycle is not None and not self.cycle.response_complete:
                return  # raced with the headers' arrival
            if not self.transport.is_closing():
                self.transport.write(answer)
                self.transport.close()

    return HeaderDeadlineProtocol


def config(host: str, port: int, log_level: str, settings: Settings) -> uvicorn.Config:
    """The API's uvicorn configuration, as ``ves serve`` runs it."""
    return uvicorn.Config(
        "api.main:app",
        factory=True,
        host=host,
        port=port,
        log_level=log_level,
        server_header=False,
        http=header_deadline_protocol(settings.header_timeout_s),
    )


def raise_open_files_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit (each connection is one
    file; a soft limit of 1024 is common), as Go's runtime does; the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft >= hard:
        return soft
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args()
    raise_open_files_limit()
    os.environ["VES_HOST"] = args.host  # the app (made by the factory) knows where it listens
    uvicorn.Server(config(args.host, args.port, args.log_level, Settings())).run()


if __name__ == "__main__":
    main()
