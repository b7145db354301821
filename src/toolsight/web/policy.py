"""Which URLs the web layer may touch, and how much it may do: schemes, addresses, sizes, budget.

Live mode: http and https only; a host that is, or resolves to, any address that is not public
(`bad_ip`: loopback, private, link-local, shared/CGNAT, site-local, documentation, multicast,
reserved, unspecified, and IPv6 forms that embed such an IPv4 address) is refused — the model must
not reach the machine or its network. Every address of a lookup is checked (`check_addresses`),
and the live client connects only to an address it checked (`web/pinned.py`: resolved once per
connection, no second lookup); every redirect hop is checked again. The offline backend and the local image host
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


_V4_DENY = [(ipaddress.ip_network(n), why) for n, why in (
    ("0.0.0.0/8", "unspecified"), ("10.0.0.0/8", "private"), ("100.64.0.0/10", "shared (carrier-grade NAT)"),
    ("127.0.0.0/8", "loopback"), ("169.254.0.0/16", "link-local"), ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignment"), ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "6to4 relay"), ("192.168.0.0/16", "private"), ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"), ("203.0.113.0/24", "documentation"), ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"))]
_V6_DENY = [(ipaddress.ip_network(n), why) for n, why in (
    ("::/128", "unspecified"), ("::1/128", "loopback"), ("64:ff9b:1::/48", "local-use NAT64"),
    ("100::/64", "discard-only"), ("2001::/23", "IETF protocol assignment"), ("2001:db8::/32", "documentation"),
    ("fc00::/7", "private (unique local)"), ("fe80::/10", "link-local"), ("fec0::/10", "site-local"),
    ("ff00::/8", "multicast"))]
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_V4_COMPATIBLE = ipaddress.ip_network("::/96")


def embedded_v4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries: mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d),
    6to4 (2002::/16), Teredo (2001::/32: server and client) and NAT64 (64:ff9b::/96)."""
    out: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        out.append(ip.ipv4_mapped)
    if ip.sixtofour is not None:
        out.append(ip.sixtofour)
    if ip.teredo is not None:
        out.extend(ip.teredo)
    if ip in _NAT64 or (ip in _V4_COMPATIBLE and int(ip) > 1):
        out.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return out


def bad_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why `ip` may not be fetched (None when it is a public address): every address that is not
    `is_global`, by an explicit table (not only the running Python's), and every IPv6 form that
    carries an IPv4 address is judged by that IPv4 address too."""
    if isinstance(ip, ipaddress.IPv6Address):
        for v4 in embedded_v4(ip):
            why = bad_ip(v4)
            if why:
                return f"{why} (embedded in {ip})"
        table = _V6_DENY
    else:
        table = _V4_DENY
    for net, why in table:
        if ip in net:
            return why
    if not ip.is_global:
        return "non-global"
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
    bad = bad_ip(ip)
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
    check_addresses(url, [str(info[4][0]) for info in infos])


def check_addresses(url: str, addresses: list[str]) -> list[str]:
    """Every address a name resolved to must be public (one private address refuses the name: the
    client could pick it); the checked addresses, without scope ids. UrlRefused otherwise."""
    if not addresses:
        raise UrlRefused(f"the host of {url!r} has no address")
    out: list[str] = []
    for addr in addresses:
        try:
            ip = ipaddress.ip_address(addr.split("%", 1)[0])
        except ValueError:
            raise UrlRefused(f"the host of {url!r} resolved to {addr!r}, which is not an IP address") from None
        bad = bad_ip(ip)
        if bad:
            raise UrlRefused(f"{url!r} resolves to a {bad} address ({ip}); only public addresses can be fetched")
        if str(ip) not in out:
            out.append(str(ip))
    return out


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
