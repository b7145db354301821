"""URL policy of the live backend: only public http(s) addresses, on every hop; caps; robots; budget."""

from __future__ import annotations

import asyncio
import re
import socket
from pathlib import Path
from typing import Any, ClassVar

import pytest
from webkit import FakeWeb, call, opened, picture, png, toolbox

from toolsight.tools.result import ToolResult
from toolsight.tools.web_tools import SEARCH_BAD_REQUEST
from toolsight.web import Limits, UrlRefused, WebSession
from toolsight.web.live import LiveBackend
from toolsight.web.policy import check_live_url

REFUSED = [
    "file:///etc/passwd",
    "ftp://example.com/x",
    "http://127.0.0.1/",
    "http://127.1.2.3:8080/admin",
    "http://localhost:8000/",
    "http://api.localhost/",
    "http://10.0.0.5/internal",
    "http://172.16.3.4/",
    "http://192.168.1.1/router",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://0.0.0.0/",
    "javascript:alert(1)",
    "",
]


@pytest.mark.parametrize("url", REFUSED)
def test_live_policy_refuses_local_private_and_other_schemes(url: str) -> None:
    with pytest.raises(UrlRefused):
        asyncio.run(check_live_url(url, resolve=False))


def test_public_literal_address_passes_without_lookup() -> None:
    asyncio.run(check_live_url("https://93.184.215.14/page", resolve=False))


def _loopback_name() -> str | None:
    """A host name that really resolves to a loopback address here (the machine's own name, usually)."""
    import ipaddress
    import socket

    for name in (socket.gethostname(), "ip6-localhost", "ip6-loopback"):
        try:
            infos = socket.getaddrinfo(name, None)
        except OSError:
            continue
        if infos and all(ipaddress.ip_address(str(i[4][0]).split("%")[0]).is_loopback for i in infos):
            return name
    return None


def test_hostname_resolving_to_loopback_is_refused() -> None:
    import os

    name = _loopback_name()
    if name is None:
        if os.environ.get("CI"):
            pytest.fail("no host name on this machine resolves to a loopback address (checked the host name, "
                        "ip6-localhost, ip6-loopback)")
        pytest.skip("no host name here resolves to a loopback address")
    assert name != "localhost"
    with pytest.raises(UrlRefused, match="resolves to a loopback address"):
        asyncio.run(check_live_url(f"http://{name}:8080/", resolve=True))
    with pytest.raises(UrlRefused, match="local machine"):
        asyncio.run(check_live_url("http://localhost./", resolve=False))  # trailing dot: still localhost


def test_visit_tool_shows_refusal_to_the_model_and_makes_no_request(tmp_path: Path) -> None:
    async def go() -> list[str]:
        with FakeWeb() as fw:
            env = {"SERPER_API_KEY": "test-key", "SERPER_BASE_URL": fw.base}  # direct reader (no Jina key)
            async with opened(WebSession("live", LiveBackend(env=env, resolve_dns=False))):
                box = toolbox(tmp_path)
                texts = []
                for url in ("file:///etc/passwd", f"{fw.base}/secret", "http://10.1.2.3/", "http://169.254.169.254/"):
                    r = await call(box, "visit", url=url, goal="read it")
                    assert not r.ok
                    assert "could not be accessed" in r.text
                    texts.append(r.error or "")
            assert fw.seen == []  # nothing reached the local server
            return texts

    errors = asyncio.run(go())
    assert "scheme file: is not allowed" in errors[0]
    assert "loopback" in errors[1] and "private" in errors[2] and "link-local" in errors[3]


def test_redirect_to_a_private_address_is_refused_on_the_second_hop(tmp_path: Path) -> None:
    async def go(fw: FakeWeb) -> None:
        backend = LiveBackend(env={"SERPER_API_KEY": "k"}, allowed_origins=(fw.base,))
        try:
            ok = await backend.fetch(f"{fw.base}/ok", 10_000)
            assert ok.status == 200 and ok.body == b"fine"
            with pytest.raises(UrlRefused, match="private"):
                await backend.fetch(f"{fw.base}/jump", 10_000)
            with pytest.raises(UrlRefused, match="loopback"):
                await backend.fetch(f"{fw.base}/jump-local", 10_000)
        finally:
            await backend.aclose()

    with FakeWeb() as fw:
        fw.pages["/ok"] = (200, "text/plain", b"fine", {})
        fw.pages["/jump"] = (302, "text/plain", b"", {"Location": "http://10.9.8.7/x"})
        fw.pages["/jump-local"] = (301, "text/plain", b"", {"Location": "http://127.0.0.1:9/x"})
        asyncio.run(go(fw))
        assert [s.path for s in fw.seen] == ["/ok", "/jump", "/jump-local"]  # the private hops never happened


def test_size_cap_stops_a_large_body(tmp_path: Path) -> None:
    async def go(fw: FakeWeb) -> None:
        backend = LiveBackend(env={"SERPER_API_KEY": "k"}, allowed_origins=(fw.base,))
        try:
            got = await backend.fetch(f"{fw.base}/big", 300_000)
            assert len(got.body) == 200_000
            with pytest.raises(Exception, match="byte cap"):
                await backend.fetch(f"{fw.base}/big", 100_000)
        finally:
            await backend.aclose()

    with FakeWeb() as fw:
        fw.pages["/big"] = (200, "application/octet-stream", b"x" * 200_000, {})
        asyncio.run(go(fw))


def test_robots_txt_disallow_is_honoured_by_the_direct_reader(tmp_path: Path) -> None:
    async def go(fw: FakeWeb) -> None:
        backend = LiveBackend(env={"SERPER_API_KEY": "k"}, allowed_origins=(fw.base,))
        try:
            page = await backend.read_page(f"{fw.base}/open/page")
            assert "Harbour notes" in page.text and page.text.startswith("Title: Harbour")
            with pytest.raises(UrlRefused, match=r"robots\.txt"):
                await backend.read_page(f"{fw.base}/private/page")
        finally:
            await backend.aclose()

    html = (b"<html><head><title>Harbour</title></head><body><article><h1>Harbour notes</h1>"
            + b"<p>The harbour was dredged in 1901 and again in 1950, when the new quay opened.</p>" * 3
            + b"</article></body></html>")
    with FakeWeb() as fw:
        fw.pages["/robots.txt"] = (200, "text/plain", b"User-agent: *\nDisallow: /private/\n", {})
        fw.pages["/open/page"] = (200, "text/html", html, {})
        fw.pages["/private/page"] = (200, "text/html", html, {})
        asyncio.run(go(fw))
        assert "/private/page" not in [s.path for s in fw.seen]


def test_page_bytes_for_a_tool_honour_robots_txt_too(tmp_path: Path) -> None:
    """`session.fetch(url, kind="page")` (VisualToolBench's official page tool reads the bytes itself) asks
    robots.txt like the reader; a refusal is a recorded failure the model reads."""
    async def go(fw: FakeWeb) -> None:
        session = WebSession("live", LiveBackend(env={"SERPER_API_KEY": "k"}, allowed_origins=(fw.base,)))
        async with opened(session):
            got = await session.fetch(f"{fw.base}/open/page", kind="page")
            assert got.ok and b"quay" in got.body
            with pytest.raises(UrlRefused, match=r"robots\.txt"):
                await session.fetch(f"{fw.base}/private/page", kind="page")
            img = await session.fetch(f"{fw.base}/private/pic.png", kind="image")  # images: no robots rule
            assert img.ok

    with FakeWeb() as fw:
        fw.pages["/robots.txt"] = (200, "text/plain", b"User-agent: *\nDisallow: /private/\n", {})
        fw.pages["/open/page"] = (200, "text/html", b"<p>the new quay</p>", {})
        fw.pages["/private/page"] = (200, "text/html", b"<p>secret</p>", {})
        fw.pages["/private/pic.png"] = (200, "image/png", png(picture(1)), {})
        asyncio.run(go(fw))
        assert "/private/page" not in [s.path for s in fw.seen]


def test_budget_is_per_run_and_the_model_is_told(tmp_path: Path) -> None:
    async def go(fw: FakeWeb) -> list[str]:
        backend = LiveBackend(env=fw.env())
        async with opened(WebSession("live", backend, limits=Limits(max_requests=2))):
            box = toolbox(tmp_path)
            out = [(await call(box, "text_search", query=f"q{i}")).text for i in range(3)]
        return out

    with FakeWeb(organic=[{"title": "A", "link": "https://a.example/"}]) as fw:
        texts = asyncio.run(go(fw))
        assert texts[0].startswith("A Google search for 'q0' found 1 results")
        assert "budget of this run (2 requests) is used up" in texts[2]
        assert len([s for s in fw.seen if s.path == "/search"]) == 2


@pytest.mark.parametrize("tool", ["text_search", "image_search"])
def test_a_search_without_a_string_query_is_an_error_the_model_reads(tool: str, tmp_path: Path) -> None:
    """Checked before any web request: no session is open here, and none is needed."""
    async def go() -> tuple[ToolResult, ToolResult]:
        box = toolbox(tmp_path)
        return await call(box, tool, queries=["a"]), await call(box, tool, query=["a", "b"])

    missing_query, not_a_string = asyncio.run(go())
    assert not missing_query.ok and missing_query.text == SEARCH_BAD_REQUEST
    assert not not_a_string.ok and not_a_string.text == f"Error in {tool}: 'query' must be a string, got list"


class _StubDnsLoop(asyncio.SelectorEventLoop):
    """An event loop whose name lookup answers from a table: no DNS query leaves the machine, and the
    policy's own `loop.getaddrinfo` call is the one being answered (nothing of the policy is replaced)."""

    table: ClassVar[dict[str, list[str]]] = {}
    asked: ClassVar[list[str]] = []

    async def getaddrinfo(self, host: bytes | str | None, port: bytes | str | int | None, *,
                          family: int = 0, type: int = 0, proto: int = 0, flags: int = 0,
                          ) -> list[tuple[Any, Any, int, str, tuple[Any, ...]]]:
        assert isinstance(host, str)
        _StubDnsLoop.asked.append(host)
        out: list[tuple[Any, Any, int, str, tuple[Any, ...]]] = []
        for addr in self.table[host]:
            fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
            sockaddr: tuple[Any, ...] = (addr, 0, 0, 0) if fam == socket.AF_INET6 else (addr, 0)
            out.append((fam, socket.SOCK_STREAM, 6, "", sockaddr))
        return out


def _check_with_dns(url: str, table: dict[str, list[str]]) -> None:
    _StubDnsLoop.table = table
    _StubDnsLoop.asked = []
    with asyncio.Runner(loop_factory=_StubDnsLoop) as runner:
        runner.run(check_live_url(url, resolve=True))


@pytest.mark.parametrize("addresses, bad", [
    (["93.184.215.14", "10.0.0.7"], "a private address (10.0.0.7)"),
    (["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "127.0.0.1"], "a loopback address (127.0.0.1)"),
    (["2606:2800:21f:cb07:6820:80da:af6b:8b2c", "fe80::1"], "a link-local address (fe80::1)"),
])
def test_a_host_resolving_to_a_public_and_a_private_address_is_refused(addresses: list[str], bad: str) -> None:
    """Issue 24 item 7: every address a name resolves to is checked, not only the first (the one the
    HTTP client happens to try may be any of them). The message names the bad address."""
    with pytest.raises(UrlRefused, match=re.escape(f"'http://mixed.example/x' resolves to {bad}")):
        _check_with_dns("http://mixed.example/x", {"mixed.example": addresses})
    assert _StubDnsLoop.asked == ["mixed.example"]
    _check_with_dns("http://public.example/x", {"public.example": addresses[:-1]})  # public ones only: fine
    assert _StubDnsLoop.asked == ["public.example"]
