"""The outbound-URL guard (``research.net.guard``) on its three roads out: a webhook, an Apprise
URL that names a host (``json://``) and a page the scraper fetches. Real receivers
(``http.server`` on loopback addresses, in threads), real httpx, real Apprise over requests; the
guard's decisions come from the real resolver (``localhost`` resolves to loopback).

Refused: loopback (IPv4 and IPv6), the cloud metadata address, the three private IPv4 ranges, the
IPv6 unique-local range, an IPv4-mapped IPv6 loopback, a name that resolves to loopback, and a
redirect from an allow-listed host to an address that is not allowed. Accepted: an allow-listed
host. A refused target is an error when it is set and a failed delivery, with the reason, when
it fires; nothing reaches the refused receiver."""

from __future__ import annotations

import ipaddress
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from research.config import load_settings
from research.errors import InputError
from research.net.guard import BlockedURL, check_url, guarded_client, is_internal, parse_allow
from research.notify import apprise_target, webhook
from research.notify.base import Notification, Target
from research.notify.targets import check_targets
from research.search.scrape import ScrapeError, scrape_url

REFUSED_HOSTS = [
    "127.0.0.1",
    "[::1]",
    "169.254.169.254",
    "10.1.2.3",
    "172.16.0.9",
    "172.31.255.254",
    "192.168.1.20",
    "[fc00::1]",
    "[fd12:3456::1]",
    "[::ffff:7f00:1]",  # ::ffff:127.0.0.1 (Apprise reads IPv6 hosts in hex only)
    "localhost",  # a name that resolves to loopback
]
PAGE = (
    "<html><head><title>Trial news</title></head><body><article><h1>Trial news</h1><p>"
    + "The phase 3 trial met its primary endpoint of progression-free survival. " * 8
    + "</p></article></body></html>"
).encode()


class Receiver:
    """An HTTP server on ``host`` (a loopback address) recording every request; a path listed
    in ``redirects`` answers 307 to its URL, any other path 200 with :data:`PAGE`."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.requests: list[dict] = []
        self.redirects: dict[str, str] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.requests.append(
                    {"method": self.command, "path": self.path, "headers": dict(self.headers)}
                    | {"body": body}
                )
                target = outer.redirects.get(self.path)
                if target:
                    self.send_response(307)
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(PAGE)))
                self.end_headers()
                self.wfile.write(PAGE)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.host = host
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str = "/", scheme: str = "http") -> str:
        return f"{scheme}://{self.host}:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def allowed():
    """A receiver on 127.0.0.1 (the allow-listed host) and one on 127.0.0.2 (not allowed)."""
    a, b = Receiver("127.0.0.1"), Receiver("127.0.0.2")
    yield a, b
    a.close()
    b.close()


@pytest.fixture()
def guard_env(data_dir, monkeypatch):
    """Fast notification retries; the allow-list is set by each test."""
    for name, value in {
        "RESEARCH_NOTIFY_BACKOFF_S": "0.01",
        "RESEARCH_NOTIFY_TIMEOUT_S": "3",
        "RESEARCH_NOTIFY_ATTEMPTS": "2",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("RESEARCH_OUTBOUND_ALLOW", "RESEARCH_SCRAPE_ALLOW_HOSTS", "RESEARCH_WEBHOOK_URLS"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _notification() -> Notification:
    return Notification(
        event="run.complete",
        body={"event": "run.complete", "run_id": "0123456789abcdef"},
        title="Research run complete: a topic",
        text="3 sources",
        level="success",
    )


def _deliver(url: str):
    kind = "webhook" if url.startswith("http") else "apprise"
    target = Target(kind, url, "run")
    send = webhook.send if kind == "webhook" else apprise_target.send
    return send(target, _notification(), load_settings())


def test_internal_addresses_are_told_apart_from_public_ones():
    for text in ("127.0.0.1", "::1", "169.254.169.254", "10.0.0.1", "172.16.0.1", "192.168.0.1",
                 "fc00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "2002:7f00:1::1", "0.0.0.0",
                 "224.0.0.1", "ff02::1", "100.64.0.1", "240.0.0.1", "fe80::1"):  # fmt: skip
        assert is_internal(ipaddress.ip_address(text)), text
    for text in ("8.8.8.8", "172.32.0.1", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"):
        assert not is_internal(ipaddress.ip_address(text)), text
    allow = parse_allow("hooks.internal, 10.0.0.0/8 [::1]")
    assert allow.allows_host("HOOKS.internal.") and not allow.allows_host("other")
    assert allow.allows_address(ipaddress.ip_address("10.9.8.7"))
    assert allow.allows_address(ipaddress.ip_address("::ffff:10.9.8.7"))
    assert allow.allows_address(ipaddress.ip_address("::1"))


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_refused_for_a_webhook_an_apprise_url_and_a_scraped_page(guard_env, host):
    port = ":9"  # discard: nothing is sent anyway
    hook, app, page = (
        f"http://{host}{port}/hook",
        f"json://{host}{port}/hook",
        f"http://{host}{port}/p",
    )
    with pytest.raises(BlockedURL) as refused:
        check_url(hook)
    assert refused.value.reason == "blocked_address" and "RESEARCH_OUTBOUND_ALLOW" in str(
        refused.value
    )
    # set as a target: a clear error naming the setting
    for url in (hook, app):
        with pytest.raises(InputError) as exc:
            check_targets([url])
        assert exc.value.code == "blocked_notify_target", url
        assert "RESEARCH_OUTBOUND_ALLOW" in exc.value.message
    # fired (a target stored earlier, an allow-list since narrowed): a failed delivery with why
    for url in (hook, app):
        out = _deliver(url)
        assert not out.ok and "refused by the outbound-URL guard" in (out.error or ""), out
        assert out.attempts <= 1  # not retried: the address will not become public
    with pytest.raises(ScrapeError) as scraped:
        scrape_url(page)
    assert scraped.value.reason == "blocked_address"


def test_allow_listed_host_is_accepted_everywhere(guard_env, allowed):
    ok, _ = allowed
    guard_env.setenv("RESEARCH_OUTBOUND_ALLOW", "127.0.0.1")
    assert [t.kind for t in check_targets([ok.url("/w"), ok.url("/a", "json")])] == [
        "webhook",
        "apprise",
    ]
    assert _deliver(ok.url("/w")).ok
    assert _deliver(ok.url("/a", "json")).ok
    page = scrape_url(ok.url("/page"))
    assert page.title == "Trial news" and "primary endpoint" in page.text
    assert {r["path"] for r in ok.requests} == {"/w", "/a", "/page"}


def test_a_redirect_from_an_allowed_host_to_a_refused_address_is_not_followed(guard_env, allowed):
    ok, other = allowed
    guard_env.setenv("RESEARCH_OUTBOUND_ALLOW", "127.0.0.1")  # 127.0.0.2 stays refused
    for path in ("/w", "/a", "/page"):
        ok.redirects[path] = other.url("/stolen")
    hook = _deliver(ok.url("/w"))
    assert not hook.ok and hook.error == "HTTP 307"  # webhooks never follow redirects
    app = _deliver(ok.url("/a", "json"))
    assert not app.ok and "refused by the outbound-URL guard" in (app.error or ""), app.error
    with pytest.raises(ScrapeError) as scraped:
        scrape_url(ok.url("/page"))
    assert scraped.value.reason == "blocked_address" and "127.0.0.2" in str(scraped.value)
    assert other.requests == []  # nothing reached the refused address
    # with 127.0.0.2 allowed too, the same redirects are followed: the guard was the reason
    guard_env.setenv("RESEARCH_OUTBOUND_ALLOW", "127.0.0.1, 127.0.0.2")
    assert _deliver(ok.url("/a", "json")).ok
    assert scrape_url(ok.url("/page")).final_url == other.url("/stolen")
    assert len(other.requests) == 2


def test_the_connection_goes_to_the_checked_address_with_the_host_name_kept(allowed):
    ok, _ = allowed
    port = ok.server.server_address[1]
    with guarded_client(allow=parse_allow("localhost")) as client:
        resp = client.get(f"http://localhost:{port}/named")
    assert resp.status_code == 200 and resp.request.url.host == "localhost"
    assert ok.requests[-1]["headers"]["Host"] == f"localhost:{port}"
    with guarded_client(allow=parse_allow("")) as client, pytest.raises(BlockedURL):
        client.get(f"http://localhost:{port}/named")
    for dotted in ("http://[::ffff:127.0.0.1]/", "http://[::ffff:169.254.169.254]/"):
        with pytest.raises(BlockedURL):
            check_url(dotted)
        with pytest.raises(ScrapeError):
            scrape_url(dotted)
    with pytest.raises(BlockedURL) as bad:
        check_url("file:///etc/passwd")
    assert bad.value.reason == "bad_scheme"
    assert httpx.get(ok.url("/plain")).status_code == 200  # other clients are untouched
