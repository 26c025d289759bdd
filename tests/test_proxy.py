"""The reverse-proxy setup (scripts/proxy.py): nginx in front of 2 replicas, tested for real.

Security headers on every response, websocket sessions through the proxy (a shared link opens and a
widget change reruns), stickiness (a client's cookie keeps it on one replica, clients without one are
spread over both), and a reader whose replica dies gets the same view from another one.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from scripts.proxy import SECURITY_HEADERS, Proxy
from scripts.st_client import Reader
from tests.browser.conftest import Server


def _run(coro):
    """asyncio.run in a thread of its own (pytest-playwright's sync API may hold this one's loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture(scope="module")
def proxy():
    with Proxy(replicas=2, debug_headers=True) as p:
        yield p


def _get(url: str, opener=None):
    opener = opener or urllib.request.build_opener()
    with opener.open(url, timeout=10) as r:
        return r.status, dict(r.headers), r.read()


def test_every_response_carries_the_security_headers(proxy):
    for path in ("/", "/two-phases", "/_stcore/health"):
        status, headers, _ = _get(proxy.url + path)
        assert status == 200
        for name, value in SECURITY_HEADERS.items():
            assert headers.get(name) == value, (path, name)
        assert "nginx/" not in headers.get("Server", "")  # server_tokens off


def test_a_cookie_keeps_a_client_on_one_replica_and_new_clients_are_spread(proxy):
    seen_first = set()
    for _ in range(12):
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        upstreams = {_get(proxy.url + "/_stcore/health", opener)[1]["X-Upstream"] for _ in range(4)}
        assert any(c.name == "gpulies_client" for c in jar)
        # the first request (no cookie yet) may land anywhere; with the cookie, always the same one
        later = {_get(proxy.url + "/_stcore/health", opener)[1]["X-Upstream"] for _ in range(4)}
        assert len(later) == 1
        seen_first |= upstreams
    assert len(seen_first) == 2  # both replicas serve


def test_a_session_through_the_proxy_opens_a_link_and_reruns(proxy):
    async def session():
        reader = await Reader.open(proxy.url, "two-phases", "phases_batch=64&gpu=H200+SXM", timeout_s=60)
        assert not reader.last.errors and reader.last.metrics
        before = dict(reader.last.metrics)
        result = await reader.set("phases_batch", 4)
        assert not result.errors and result.metrics != before
        await reader.close()
        return before
    first = _run(session())
    # the same link through the proxy again (probably the other replica): the same numbers
    assert _run(session()) == first


def test_a_reader_whose_replica_dies_gets_the_same_view_from_the_other(proxy):
    async def numbers():
        reader = await Reader.open(proxy.url, "speculative-decoding", "spec_alpha=0.9&spec_k=8",
                                   timeout_s=60)
        await reader.close()
        return reader.last.metrics
    before = _run(numbers())
    victim = proxy.servers[0]
    victim.proc.kill()
    victim.proc.wait(timeout=10)
    try:
        for _ in range(4):  # whichever replica the hash picks, the link opens with the same numbers
            assert _run(numbers()) == before
    finally:
        proxy.servers[0] = Server(port=victim.port)
