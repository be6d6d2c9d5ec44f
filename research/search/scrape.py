"""``scrape_url``: fetch a web page and extract its main text (trafilatura, Barbaresi 2021),
with an SSRF guard (OWASP SSRF Prevention Cheat Sheet: allow only http(s); resolve the host and
refuse private, loopback, link-local, reserved, multicast and unspecified addresses; re-check
every redirect hop).

* Size cap: ``MAX_BYTES`` (5 MB) of body, streamed; larger pages are cut there.
* Timeout: the shared HTTP timeout (``RESEARCH_HTTP_TIMEOUT``, default 15 s).
* Redirects: followed by hand, at most ``MAX_REDIRECTS`` (5), each target re-checked.
* Allow-list: ``RESEARCH_SCRAPE_ALLOW_HOSTS`` (comma-separated host names or IPs) are fetched
  even when they resolve to internal addresses (an analyst's intranet wiki, a test server).

Known limit: the address is checked at resolution time; a DNS answer that changes between the
check and httpx's own lookup (DNS rebinding) is not pinned.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from research.config import load_settings
from research.errors import ResearchError
from research.search.http import USER_AGENT, timeout

MAX_BYTES = 5_000_000
MAX_REDIRECTS = 5
ALLOW_VAR = "RESEARCH_SCRAPE_ALLOW_HOSTS"


class ScrapeError(ResearchError):
    """A page could not be scraped. ``reason``: ``bad_scheme``, ``blocked_address``,
    ``unresolvable``, ``too_many_redirects``, ``http_error``, ``timeout``, ``network``,
    ``not_html``, ``no_text``."""

    code = "scrape_error"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class ScrapeResult:
    """A scraped page: ``url`` asked for, ``final_url`` after redirects, HTTP ``status``,
    ``html`` (raw, ≤ MAX_BYTES), main ``text`` and ``title`` (trafilatura), ``truncated`` when the
    body hit the size cap."""

    url: str
    final_url: str
    status: int
    content_type: str
    html: str
    text: str
    title: str
    truncated: bool = False


def allowed_hosts() -> set[str]:
    """Lowercase host names/IPs from ``RESEARCH_SCRAPE_ALLOW_HOSTS``."""
    return {
        h.strip().lower().strip("[]")
        for h in load_settings().scrape_allow_hosts.split(",")
        if h.strip()
    }


def _blocked(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_multicast
        or ip.is_unspecified
        or not ip.is_global
    )


def check_url(url: str, allow: set[str] | None = None) -> str:
    """Raise ScrapeError unless ``url`` is http(s) and every address its host resolves to is
    public (or the host is allow-listed). Returns the host.

    Raises:
        ScrapeError: ``bad_scheme`` (file:, ftp:, data:...), ``blocked_address`` (private,
            loopback, link-local such as 169.254.169.254, reserved...), ``unresolvable``.
    """
    allow = allowed_hosts() if allow is None else allow
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        raise ScrapeError(
            "bad_scheme", f"only http(s) pages can be scraped, not {parts.scheme or 'a bare path'}:"
        )
    host = (parts.hostname or "").lower()
    if not host:
        raise ScrapeError("bad_scheme", f"the URL {url[:100]!r} has no host name")
    if host in allow:
        return host
    try:
        infos = socket.getaddrinfo(
            host, parts.port or (443 if parts.scheme == "https" else 80), type=socket.SOCK_STREAM
        )
    except (socket.gaierror, UnicodeError) as exc:
        raise ScrapeError("unresolvable", f"cannot resolve {host}: {exc}") from None
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if _blocked(ip):
            raise ScrapeError(
                "blocked_address",
                f"refusing {host}: it resolves to the internal address {ip} "
                f"(add the host to {ALLOW_VAR} to allow it)",
            )
    return host


def _extract(html: str) -> tuple[str, str]:
    import trafilatura  # noqa: PLC0415 - ~0.1 s with lxml: only when a page is scraped

    text = (
        trafilatura.extract(html, include_comments=False, include_tables=True, favor_recall=True)
        or ""
    )
    meta = trafilatura.extract_metadata(html)
    return text, (meta.title if meta and meta.title else "")


def scrape_url(
    url: str, *, max_bytes: int = MAX_BYTES, client: httpx.Client | None = None
) -> ScrapeResult:
    """Fetch ``url`` (SSRF-guarded, size-capped, redirects re-checked) and extract its main text.

    Raises:
        ScrapeError: see ``ScrapeError.reason``; nothing is fetched from a refused address.
    """
    allow = allowed_hosts()
    own = client is None
    client = client or httpx.Client(
        timeout=timeout(), follow_redirects=False, headers={"User-Agent": USER_AGENT}
    )
    current = url.strip()
    try:
        for _ in range(MAX_REDIRECTS + 1):
            check_url(current, allow)
            try:
                with client.stream(
                    "GET", current, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.5"}
                ) as resp:
                    if resp.is_redirect and resp.headers.get("location"):
                        current = urljoin(current, resp.headers["location"])
                        continue
                    if resp.status_code >= 400:
                        raise ScrapeError(
                            "http_error", f"{current[:200]} answered HTTP {resp.status_code}"
                        )
                    body, truncated = bytearray(), False
                    for chunk in resp.iter_bytes():
                        body += chunk
                        if len(body) >= max_bytes:
                            body, truncated = body[:max_bytes], True
                            break
                    ctype = resp.headers.get("content-type", "")
                    encoding = resp.encoding or "utf-8"
                    status = resp.status_code
            except httpx.TimeoutException:
                raise ScrapeError("timeout", f"{current[:200]} did not answer in time") from None
            except httpx.TransportError as exc:
                raise ScrapeError(
                    "network", f"cannot fetch {current[:200]} ({type(exc).__name__})"
                ) from None
            if ctype and not any(t in ctype for t in ("html", "xml", "text/plain")):
                raise ScrapeError(
                    "not_html", f"{current[:200]} is {ctype.split(';')[0]}, not a web page"
                )
            html = bytes(body).decode(encoding, errors="replace")
            text, title = _extract(html) if "plain" not in ctype else (html, "")
            if not text.strip():
                raise ScrapeError("no_text", f"no main text found on {current[:200]}")
            return ScrapeResult(
                url=url,
                final_url=current,
                status=status,
                content_type=ctype,
                html=html,
                text=text.strip(),
                title=title,
                truncated=truncated,
            )
        raise ScrapeError(
            "too_many_redirects", f"more than {MAX_REDIRECTS} redirects from {url[:200]}"
        )
    finally:
        if own:
            client.close()
