"""Which URLs the web layer may touch, and how much it may do: schemes, addresses, sizes, budget.

Live mode: http and https only; a host that is, or resolves to, a private, loopback, link-local,
multicast, reserved or unspecified address is refused (the model must not reach the machine or
its network); every redirect hop is checked again. The offline backend and the local image host
are the only parts of toolsight that talk to 127.0.0.1, and they do so by their own table of
URLs, never by a URL the model chose.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from toolsight.web.types import BudgetExceeded, UrlRefused

SCHEMES = ("http", "https")


@dataclass(frozen=True)
class Limits:
    """Per-run caps. Sizes in bytes, times in seconds."""

    max_requests: int = 2000
    timeout_s: float = 20.0
    max_page_bytes: int = 5_000_000
    max_image_bytes: int = 15_000_000
    max_redirects: int = 5
    max_page_chars: int = 150_000  # the reference's WEBCONTENT_MAXLENGTH


def _bad_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return _bad_ip(ip.ipv4_mapped)
    for attr, what in (("is_loopback", "loopback"), ("is_link_local", "link-local"), ("is_private", "private"),
                       ("is_multicast", "multicast"), ("is_reserved", "reserved"),
                       ("is_unspecified", "unspecified")):
        if getattr(ip, attr):
            return what
    return None


def check_syntax(url: str) -> tuple[str, str]:
    """(scheme, host) of an absolute http(s) URL; UrlRefused otherwise."""
    if not isinstance(url, str) or not url.strip():
        raise UrlRefused("empty URL; pass an absolute http:// or https:// URL")
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise UrlRefused(f"URL scheme {scheme + ':' if scheme else '(none)'} is not allowed in {url!r}; "
                         "only http and https URLs can be fetched")
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        raise UrlRefused(f"URL {url!r} has no host")
    return scheme, host


def check_host_literal(host: str, url: str) -> None:
    """Refuse hosts that name the local machine or a private network without a DNS lookup."""
    if host == "localhost" or host.endswith(".localhost"):
        raise UrlRefused(f"{url!r} names the local machine (localhost); it cannot be fetched")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return
    bad = _bad_ip(ip)
    if bad:
        raise UrlRefused(f"{url!r} points to a {bad} address ({ip}); only public addresses can be fetched")


async def check_live_url(url: str, resolve: bool = True) -> None:
    """The full live-mode check: scheme, literal host, then every address the name resolves to."""
    _, host = check_syntax(url)
    check_host_literal(host, url)
    try:
        ipaddress.ip_address(host)
        return  # a literal public address needs no lookup
    except ValueError:
        pass
    if not resolve:
        return
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise UrlRefused(f"could not resolve the host of {url!r} ({exc.strerror or exc})") from None
    for info in infos:
        addr = str(info[4][0])
        try:
            ip = ipaddress.ip_address(addr.split("%", 1)[0])
        except ValueError:
            continue
        bad = _bad_ip(ip)
        if bad:
            raise UrlRefused(f"{url!r} resolves to a {bad} address ({ip}); only public addresses can be fetched")


class Budget:
    """A per-run count of web requests; thread-safe. `take()` raises once it is used up."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def take(self, what: str) -> None:
        with self._lock:
            if self.used >= self.limit:
                raise BudgetExceeded(
                    f"the web request budget of this run ({self.limit} requests) is used up; {what} was not done. "
                    "Answer with what you have."
                )
            self.used += 1
