"""Guard against server-side request forgery when the service fetches a user's URL.

The policy: only ``http`` and ``https``; resolve the host and look at EVERY address it resolves to;
refuse link-local (cloud metadata at 169.254.169.254 lives there), multicast, unspecified and
reserved addresses always; refuse loopback and private addresses unless the operator allows them
(``VES_ALLOW_PRIVATE_SOURCES``). Redirects are followed by hand so that each hop is checked again.

HTTP-client (httpx) errors are translated into ``SourceUnreachable`` here and nowhere else.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from ves.errors import SourceRejected, SourceUnreachable, ValidationFailed

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


def probe_url(url: str, *, allow_private: bool, timeout_s: float) -> ProbeResult:
    """Contact ``url`` (following checked redirects) and read its first bytes.

    Raises:
        SourceRejected: a hop of the redirect chain breaks the policy.
        SourceUnreachable: no answer, a timeout, an HTTP error status or too many redirects.
    """
    with httpx.Client(follow_redirects=False, timeout=timeout_s) as client:
        for _ in range(_MAX_REDIRECTS + 1):
            check_url(url, allow_private=allow_private)
            result = _fetch_head_bytes(client, url)
            if result.status in {301, 302, 303, 307, 308}:
                url = result.final_url
                continue
            return result
    raise SourceUnreachable(f"more than {_MAX_REDIRECTS} redirects")


def _fetch_head_bytes(client: httpx.Client, url: str) -> ProbeResult:
    headers = {"Range": f"bytes=0-{_PROBE_BYTES - 1}"}
    try:
        with client.stream("GET", url, headers=headers) as response:
            if response.is_redirect:
                location = urljoin(url, response.headers.get("location", ""))
                return ProbeResult(location, response.status_code, None, b"")
            if response.status_code not in {200, 206}:
                raise SourceUnreachable(f"the source answered HTTP {response.status_code}")
            first = _read_at_most(response, _PROBE_BYTES)
            content_type = response.headers.get("content-type")
            return ProbeResult(url, response.status_code, content_type, first)
    except httpx.TimeoutException as exc:
        raise SourceUnreachable("the source did not answer in time") from exc
    except httpx.HTTPError as exc:
        raise SourceUnreachable(f"the source could not be reached: {exc}") from exc


def _read_at_most(response: httpx.Response, limit: int) -> bytes:
    buffer = bytearray()
    for chunk in response.iter_bytes():
        buffer.extend(chunk)
        if len(buffer) >= limit:
            break
    return bytes(buffer[:limit])
