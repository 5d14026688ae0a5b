"""Who is calling: the API key of a request, and a limit on failed attempts per client address.

Keys carry 256 bits of randomness, so guessing one is hopeless; the limit is there so that a
client that tries keys (a leaked list, a script gone wrong) is slowed down and noticed, and so
that a flood of wrong keys costs the catalog nothing. An address that sent
``VES_AUTH_FAIL_LIMIT`` unknown or revoked keys within ``VES_AUTH_FAIL_WINDOW_S`` seconds is
refused with 429 ``rate_limited`` and ``Retry-After`` on every request that needs a key, a valid
one included (else a correct guess would still tell itself apart), until its oldest failure
leaves the window. A request without a key is refused with 401 but is no attempt at a key and is
not counted.

The count is kept in the API process (a sliding window in memory, no catalog write per failure):
with several API processes each counts its own, so an address may make that many failures per
process. The address is the connection's peer (``client_address``).

Keys themselves are never logged nor echoed: errors say only that a key is missing, unknown or
revoked.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable

from fastapi.security import HTTPAuthorizationCredentials
from starlette.requests import HTTPConnection

from storage.catalog.database import Catalog
from storage.catalog.records import Tenant
from storage.catalog.tenants import TenantStore
from ves.errors import RateLimited, Unauthorized

log = logging.getLogger("ves.api")

_SWEEP_ABOVE = 10_000  # addresses kept before stale ones are swept


def client_address(request: HTTPConnection) -> str:
    """The address the connection comes from.

    ``X-Forwarded-For`` is never read here: any client can write it. uvicorn's ``--proxy-headers``
    (on by default) puts the forwarded address here only for connections from
    ``--forwarded-allow-ips`` (``FORWARDED_ALLOW_IPS``, default loopback: a proxy on the same
    machine); a proxy elsewhere needs its address there.
    """
    return request.client.host if request.client else "unknown"


class AuthFailures:
    """Failed authentications per client address in a sliding window, in this process."""

    def __init__(
        self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def refuse_if_limited(self, address: str) -> None:
        """``RateLimited`` while ``address`` has ``limit`` failures inside the window."""
        with self._lock:
            times = self._recent(address, self._clock())
            if len(times) < self.limit:
                return
            wait_s = max(1, math.ceil(times[0] + self.window_s - self._clock()))
        raise RateLimited(
            f"too many failed authentications from this address; retry in {wait_s} s",
            retry_after_s=wait_s,
        )

    def record(self, address: str) -> None:
        """Count one failure of ``address`` (the limit is checked on its next request)."""
        with self._lock:
            now = self._clock()
            if len(self._failures) > _SWEEP_ABOVE:
                for stale in [a for a, t in self._failures.items() if t[-1] <= now - self.window_s]:
                    del self._failures[stale]
            times = self._failures.setdefault(address, deque())
            times.append(now)
            while len(times) > self.limit:
                times.popleft()
            if len(times) == self.limit:
                log.warning(
                    "%d failed authentications from %s within %g s: refused for a while",
                    self.limit,
                    address,
                    self.window_s,
                )

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._failures.get(address, deque())
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times:
            self._failures.pop(address, None)
        return times


def authenticate(
    catalog: Catalog,
    failures: AuthFailures,
    address: str,
    credentials: HTTPAuthorizationCredentials | None,
) -> Tenant:
    """The tenant whose key came with a request from ``address``.

    Raises:
        RateLimited: the address failed too often lately (checked before the key is looked up).
        Unauthorized: no key, or an unknown or revoked one (counted against the address).
    """
    failures.refuse_if_limited(address)
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise Unauthorized("send an API key as 'Authorization: Bearer <key>'")
    tenant = TenantStore(catalog).authenticate(credentials.credentials)
    if tenant is None:
        failures.record(address)
        raise Unauthorized("the API key is unknown or revoked")
    return tenant
