"""Connections to the addresses the URL policy checked: no DNS rebinding between the check and the connect.

A policy that resolves a name, checks the address and then lets the HTTP client resolve the name
again can be fooled: the name answers a public address to the check and 127.0.0.1 to the connect
(DNS rebinding). Here the HTTP client never resolves a name itself. Its network backend
(`PinnedNetwork`, an httpcore backend wrapped around the default one) resolves the host once per
connection with the session's resolver, checks *every* address it got (`policy.check_addresses`:
one private address refuses the name) and connects only to those checked addresses, in order. TLS
still verifies the certificate against the host name (httpcore passes it separately), and each
redirect hop is a new request, so it is resolved and checked again. Origins given as trusted
(`allowed`, `scheme://host:port`: a test server, a proxy set in code) connect without the check.

The client built here (`pinned_client`) ignores proxy settings from the environment: a proxy would
resolve the name itself, beyond the policy.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpcore
import httpx

from toolsight.web.policy import check_addresses, check_host_literal
from toolsight.web.types import UrlRefused

#: an async function: host name -> the addresses it resolves to (strings, in the resolver's order)
Resolver = Callable[[str], Awaitable[list[str]]]


async def system_resolver(host: str) -> list[str]:
    """The system's resolver (getaddrinfo, TCP), addresses in its order."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise UrlRefused(f"could not resolve the host {host!r} ({exc.strerror or exc})") from None
    return [str(i[4][0]) for i in infos]


class PinnedNetwork(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that connects only to checked addresses (see the module docstring)."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend, resolver: Resolver,
                 trusted: Iterable[tuple[str, int]] = ()) -> None:
        self.inner = inner
        self.resolver = resolver
        self.trusted = {(h.lower(), p) for h, p in trusted}
        #: every (host, port, address) connected to, for the manifest's debugging and the tests
        self.connected: list[tuple[str, int, str]] = []

    async def addresses(self, host: str, port: int) -> list[str]:
        """The addresses a connection to `host:port` may use: checked, or `host` itself when trusted."""
        bare = host.strip("[]")
        if (bare.lower(), port) in self.trusted:
            return [bare]
        shown = f"{host}:{port}"
        check_host_literal(bare.lower().rstrip("."), shown)
        try:
            import ipaddress

            ipaddress.ip_address(bare)
            return check_addresses(shown, [bare])
        except ValueError:
            pass
        return check_addresses(shown, await self.resolver(bare))

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        last: Exception | None = None
        for addr in await self.addresses(host, port):
            try:
                stream = await self.inner.connect_tcp(addr, port, timeout=timeout, local_address=local_address,
                                                      socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout, OSError) as exc:
                last = exc
                continue
            self.connected.append((host, port, addr))
            return stream
        assert last is not None
        raise last

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used for web fetches")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def origin_key(origin: str) -> tuple[str, int]:
    """(host, port) of `scheme://host[:port]` (the default port of the scheme when none is given)."""
    url = httpx.URL(origin)
    port = url.port or (443 if url.scheme == "https" else 80)
    return url.host.lower(), port


def pinned_client(timeout: float, headers: dict[str, str], resolver: Resolver | None = None,
                  trusted_origins: Iterable[str] = ()) -> tuple[httpx.AsyncClient, PinnedNetwork]:
    """An httpx client whose connections go only to checked addresses; and its network backend."""
    transport = httpx.AsyncHTTPTransport(verify=ssl.create_default_context(), trust_env=False)
    pool = transport._pool  # httpx builds the httpcore pool; its network backend is swapped here
    if not isinstance(pool, httpcore.AsyncConnectionPool) or not hasattr(pool, "_network_backend"):
        raise RuntimeError("this httpx/httpcore version cannot pin connections; toolsight needs httpx 0.28")
    network = PinnedNetwork(pool._network_backend, resolver or system_resolver,
                            [origin_key(o) for o in trusted_origins])
    pool._network_backend = network
    client = httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=False, headers=headers,
                               trust_env=False)
    return client, network
