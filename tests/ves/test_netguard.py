"""The SSRF policy, table-driven over addresses, then whole URLs."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import Any

import pytest

import ves.netguard as netguard
from testkit.media_server import MediaServer
from ves.errors import SourceRejected, SourceUnreachable, ValidationFailed
from ves.netguard import check_url, download, open_source, refusal_reason

ALWAYS_REFUSED = [
    "169.254.169.254",  # cloud metadata
    "fe80::1",
    "224.0.0.1",
    "ff02::1",
    "0.0.0.0",
    "::",
    "240.0.0.1",  # reserved
    "192.0.2.10",  # documentation
    "::ffff:169.254.169.254",  # link-local hidden in IPv6
]
PRIVATE = [
    "127.0.0.1",
    "::1",
    "10.1.2.3",
    "172.16.0.9",
    "192.168.1.1",
    "100.64.0.1",
    "fd00::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
]
PUBLIC = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"]


@pytest.mark.parametrize("address", ALWAYS_REFUSED)
@pytest.mark.parametrize("allow_private", [False, True])
def test_always_refused(address: str, allow_private: bool) -> None:
    assert refusal_reason(ipaddress.ip_address(address), allow_private=allow_private)


@pytest.mark.parametrize("address", PRIVATE)
def test_private_refused_unless_allowed(address: str) -> None:
    ip = ipaddress.ip_address(address)
    assert refusal_reason(ip, allow_private=False)
    assert refusal_reason(ip, allow_private=True) is None


@pytest.mark.parametrize("address", PUBLIC)
def test_public_allowed(address: str) -> None:
    assert refusal_reason(ipaddress.ip_address(address), allow_private=False) is None


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/a.mp4", "gopher://x/", "data:,hi", "/a.mp4"]
)
def test_schemes_other_than_http_are_rejected(url: str) -> None:
    with pytest.raises(SourceRejected, match="scheme"):
        check_url(url, allow_private=True)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/a.mp4",
        "http://localhost:8080/a.mp4",
        "http://2130706433/a.mp4",  # 127.0.0.1 as one decimal number
        "http://[::1]/a.mp4",
        "http://10.0.0.8/a.mp4",
    ],
)
def test_loopback_and_private_hosts_are_rejected_by_default(url: str) -> None:
    with pytest.raises(SourceRejected, match="refused"):
        check_url(url, allow_private=False)
    assert check_url(url, allow_private=True).addresses


def test_metadata_address_is_rejected_even_when_private_is_allowed() -> None:
    with pytest.raises(SourceRejected, match="link-local"):
        check_url("http://169.254.169.254/latest/meta-data/", allow_private=True)


def test_unresolvable_host_is_unreachable() -> None:
    with pytest.raises(SourceUnreachable, match="does not resolve"):
        check_url("http://no-such-host.invalid/a.mp4", allow_private=False)


@pytest.mark.parametrize("url", ["http:///a.mp4", "http://[::1/a.mp4", "http://host:99999/"])
def test_malformed_urls_fail_validation(url: str) -> None:
    with pytest.raises(ValidationFailed):
        check_url(url, allow_private=True)


def test_a_source_is_fetched_at_the_address_its_check_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the connection goes to the address that was checked, not to a second
    lookup. ``media.test`` resolves only through the check's lookup (patched here); a client
    that resolved again at connect time would fail. The name still reaches the server."""
    (tmp_path / "clip.bin").write_bytes(b"0123456789" * 100)
    real = socket.getaddrinfo

    def lookup(host: str, *args: Any, **kwargs: Any) -> Any:
        return real("127.0.0.1" if host == "media.test" else host, *args, **kwargs)

    monkeypatch.setattr(netguard.socket, "getaddrinfo", lookup)
    with MediaServer(tmp_path) as server:
        url = server.url("clip.bin").replace("127.0.0.1", "media.test")
        fetched = download(
            url, tmp_path / "out.bin", allow_private=True, timeout_s=5, max_bytes=10**6
        )
        assert fetched.size == 1000
        with open_source(url, allow_private=True, timeout_s=5) as opened:
            assert opened.url == url  # the final URL keeps the name
            assert opened.response.request.headers["host"] == f"media.test:{server.port}"


def test_a_name_that_rebinds_to_a_refused_address_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = socket.getaddrinfo
    monkeypatch.setattr(
        netguard.socket,
        "getaddrinfo",
        lambda host, *a, **k: real("169.254.169.254" if host == "evil.test" else host, *a, **k),
    )
    with pytest.raises(SourceRejected, match="link-local"):
        download(
            "http://evil.test/x",
            Path("/nonexistent/x"),
            allow_private=True,
            timeout_s=2,
            max_bytes=10,
        )
