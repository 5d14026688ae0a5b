"""Guard against server-side request forgery when the service fetches a user's URL.

The policy: only ``http`` and ``https``; resolve the host and look at EVERY address it resolves to;
refuse link-local (cloud metadata at 169.254.169.254 lives there), multicast, unspecified and
reserved addresses always; refuse loopback and private addresses unless the operator allows them
(``VES_ALLOW_PRIVATE_SOURCES``). Redirects are followed by hand so that each hop is checked again.

HTTP-client (httpx) errors are translated into ``SourceUnreachable`` here and nowhere else.
"""

from __future__ import annotations

import hashlib
import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from ves.errors import LimitExceeded, SourceRejected, SourceUnreachable, ValidationFailed

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_MAX_REDIRECTS = 5
_PROBE_BYTES = 2048
# Private ranges an operator may allow: RFC 1918, carrier-grade NAT, IPv6 unique-local.
_PRIVATE_NETS = tuple(
    ipaddress.ip_network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
)


@dataclass(frozen=True)
class CheckedUrl:
    """A URL that passed the policy, with the addresses its host resolved to."""

    url: str
    host: str
    addresses: tuple[str, ...]


@dataclass(frozen=True)
class Downloaded:
    """A source fetched to a local file."""

    path: Path
    sha256: str
    size: int


@dataclass(frozen=True)
class ProbeResult:
    """What a source URL answered when contacted."""

    final_url: str
    status: int
    content_type: str | None
    first_bytes: bytes


def _unmap(address: IPAddress) -> IPAddress:
    """IPv4 addresses hidden in IPv6 (``::ffff:127.0.0.1``, 6to4) are judged as IPv4."""
    if isinstance(address, ipaddress.IPv6Address):
        return address.ipv4_mapped or address.sixtofour or address
    return address


def refusal_reason(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why ``address`` may not be fetched, or None when it may."""
    address = _unmap(address)
    if address.is_link_local:
        return "a link-local address (such as cloud metadata)"
    if address.is_multicast:
        return "a multicast address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return None if allow_private else "a loopback address"
    if any(address in net for net in _PRIVATE_NETS):
        return None if allow_private else "a private address"
    if not address.is_global:
        return "a reserved address"
    return None


def _resolve(host: str, port: int) -> tuple[str, ...]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise SourceUnreachable(f"the host {host!r} does not resolve") from exc
    return tuple(dict.fromkeys(str(info[4][0]) for info in infos))


def check_url(url: str, *, allow_private: bool) -> CheckedUrl:
    """Check ``url`` against the policy and resolve its host.

    Raises:
        ValidationFailed: the URL is not a URL at all.
        SourceRejected: the scheme or an address of the host is refused.
        SourceUnreachable: the host does not resolve.
    """
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise ValidationFailed(f"not a valid URL: {exc}") from exc
    if parts.scheme not in {"http", "https"}:
        scheme = parts.scheme or "(none)"
        raise SourceRejected(f"the URL scheme {scheme!r} is refused; use http or https")
    host = parts.hostname
    if not host:
        raise ValidationFailed("the URL has no host")
    addresses = _resolve(host, port)
    for text in addresses:
        reason = refusal_reason(
            ipaddress.ip_address(text.split("%")[0]), allow_private=allow_private
        )
        if reason:
            raise SourceRejected(
                f"the host {host!r} resolves to {text}, {reason}, which is refused"
            )
    return CheckedUrl(url=url, host=host, addresses=addresses)


@contextmanager
def _httpx_errors_translated() -> Iterator[None]:
    """The one place where HTTP-client errors become ``SourceUnreachable``."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise SourceUnreachable("the source did not answer in time") from exc
    except httpx.HTTPError as exc:
        raise SourceUnreachable(f"the source could not be reached: {exc}") from exc


@contextmanager
def read_errors_translated() -> Iterator[None]:
    """HTTP-client errors raised while reading an opened source's body OUTSIDE the block of
    ``open_source`` (a response kept open across calls) become ``SourceUnreachable`` too."""
    with _httpx_errors_translated():
        yield


@dataclass(frozen=True)
class Opened:
    """An answering source: the streaming response and the final URL, by name."""

    response: httpx.Response
    url: str


def _pinned_request(
    client: httpx.Client,
    url: str,
    address: str,
    headers: dict[str, str] | None,
    method: str = "GET",
    content: bytes | None = None,
) -> httpx.Request:
    """A GET of ``url`` that connects to ``address`` (already checked), not to a new lookup.

    Resolving again at connect time would let a hostile DNS answer differently the second time
    (DNS rebinding) and reach an address the check refused. The name still travels in the Host
    header and, for https, as the TLS server name, so virtual hosts and certificates work.
    """
    parts = urlsplit(url)
    userinfo, _, hostport = parts.netloc.rpartition("@")
    literal = f"[{address}]" if ":" in address else address
    netloc = (f"{userinfo}@" if userinfo else "") + literal
    netloc += f":{parts.port}" if parts.port else ""
    extensions = {"sni_hostname": parts.hostname} if parts.scheme == "https" else {}
    return client.build_request(
        method,
        urlunsplit(parts._replace(netloc=netloc)),
        headers={**(headers or {}), "Host": hostport},
        content=content,
        extensions=extensions,
    )


def _send_pinned(
    client: httpx.Client,
    url: str,
    checked: CheckedUrl,
    headers: dict[str, str] | None,
    content: bytes | None = None,
) -> httpx.Response:
    """Send to the checked addresses in turn until one accepts the connection (a GET, or a POST
    of ``content``)."""
    failure: httpx.ConnectError | None = None
    method = "GET" if content is None else "POST"
    for address in checked.addresses:
        try:
            request = _pinned_request(client, url, address, headers, method, content)
            return client.send(request, stream=True)
        except httpx.ConnectError as exc:
            failure = exc
    assert failure is not None
    raise failure


@contextmanager
def open_source(
    url: str, *, allow_private: bool, timeout_s: float, headers: dict[str, str] | None = None
) -> Iterator[Opened]:
    """A streaming GET of ``url``, following redirects by hand and checking every hop.

    Each hop connects to an address its check accepted. Errors while the caller reads the body
    are translated too.

    Raises:
        SourceRejected: a hop of the redirect chain breaks the policy.
        SourceUnreachable: no answer, a timeout, an HTTP error status or too many redirects.
    """
    with (
        httpx.Client(follow_redirects=False, timeout=timeout_s) as client,
        _httpx_errors_translated(),
    ):
        for _ in range(_MAX_REDIRECTS + 1):
            checked = check_url(url, allow_private=allow_private)
            response = _send_pinned(client, url, checked, headers)
            try:
                if response.is_redirect:
                    url = urljoin(url, response.headers.get("location", ""))
                    continue
                if response.status_code not in {200, 206}:
                    raise SourceUnreachable(f"the source answered HTTP {response.status_code}")
                yield Opened(response, url)
                return
            finally:
                response.close()
    raise SourceUnreachable(f"more than {_MAX_REDIRECTS} redirects")


def post(
    url: str, body: bytes, headers: dict[str, str], *, allow_private: bool, timeout_s: float
) -> int:
    """POST ``body`` to ``url`` (a webhook receiver) and return the answer's status.

    Every address of the host is checked and the connection pinned to one, as for sources;
    redirects are NOT followed (a 3xx is returned as it is). The body of the answer is not read
    beyond its first bytes.

    Raises:
        SourceRejected: the URL breaks the policy (now: DNS may have changed since it was set).
        SourceUnreachable: no answer or a timeout.
    """
    with (
        httpx.Client(follow_redirects=False, timeout=timeout_s) as client,
        _httpx_errors_translated(),
    ):
        checked = check_url(url, allow_private=allow_private)
        response = _send_pinned(client, url, checked, headers, body)
        try:
            _read_at_most(response, _PROBE_BYTES)
            return response.status_code
        finally:
            response.close()


def probe_url(url: str, *, allow_private: bool, timeout_s: float) -> ProbeResult:
    """Contact ``url`` (following checked redirects) and read its first bytes."""
    headers = {"Range": f"bytes=0-{_PROBE_BYTES - 1}"}
    with open_source(url, allow_private=allow_private, timeout_s=timeout_s, headers=headers) as o:
        first = _read_at_most(o.response, _PROBE_BYTES)
        content_type = o.response.headers.get("content-type")
        return ProbeResult(o.url, o.response.status_code, content_type, first)


def download(
    url: str, dest: Path, *, allow_private: bool, timeout_s: float, max_bytes: int
) -> Downloaded:
    """Stream ``url`` into ``dest``, hashing on the way, refusing more than ``max_bytes``.

    Raises:
        LimitExceeded: the source is bigger than ``max_bytes`` (nothing is left behind).
        SourceRejected, SourceUnreachable: as ``open_source``.
    """
    digest, size = hashlib.sha256(), 0
    try:
        with (
            open_source(url, allow_private=allow_private, timeout_s=timeout_s) as opened,
            dest.open("wb") as out,
        ):
            for chunk in opened.response.iter_bytes(1 << 16):
                size += len(chunk)
                if size > max_bytes:
                    raise LimitExceeded(f"the source is larger than the limit of {max_bytes} bytes")
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    return Downloaded(dest, digest.hexdigest(), size)


def _read_at_most(response: httpx.Response, limit: int) -> bytes:
    buffer = bytearray()
    for chunk in response.iter_bytes():
        buffer.extend(chunk)
        if len(buffer) >= limit:
            break
    return bytes(buffer[:limit])
