"""``scrape_url``: fetch a web page and extract its main text (trafilatura, Barbaresi 2021),
through the outbound-URL guard (``research.net.guard``: http(s) only, every address of the host
public or allow-listed in ``RESEARCH_OUTBOUND_ALLOW``, the connection pinned to the checked
address, every redirect hop checked again).

* Size cap: ``MAX_BYTES`` (5 MB) of body, streamed; larger pages are cut there.
* Timeout: the shared HTTP timeout (``RESEARCH_HTTP_TIMEOUT``, default 15 s).
* Redirects: followed by hand, at most ``MAX_REDIRECTS`` (5), each hop through the guard.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin

import httpx

from research.errors import ResearchError
from research.net.guard import ALLOW_VAR, AllowList, BlockedURL, allow_list, guarded_client
from research.net.guard import check_url as guard_check
from research.search.http import USER_AGENT, timeout

MAX_BYTES = 5_000_000
MAX_REDIRECTS = 5
__all__ = ["ALLOW_VAR", "MAX_BYTES", "ScrapeError", "ScrapeResult", "check_url", "scrape_url"]


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


def check_url(url: str, allow: AllowList | None = None) -> str:
    """Raise ScrapeError unless ``url`` is http(s) and every address its host resolves to is
    public (or allow-listed in ``RESEARCH_OUTBOUND_ALLOW``). Returns the host.

    Raises:
        ScrapeError: ``bad_scheme`` (file:, ftp:, data:...), ``blocked_address`` (private,
            loopback, link-local such as 169.254.169.254, reserved...), ``unresolvable``.
    """
    try:
        return guard_check(url, allow).host
    except BlockedURL as exc:
        raise _scrape_error(exc) from None


def _scrape_error(exc: BlockedURL) -> ScrapeError:
    reason = "bad_scheme" if exc.reason in ("bad_scheme", "no_host") else exc.reason
    return ScrapeError(reason, exc.message)


def _extract(html: str) -> tuple[str, str]:
    import trafilatura  # noqa: PLC0415 - ~0.1 s with lxml: only when a page is scraped

    text = (
        trafilatura.extract(html, include_comments=False, include_tables=True, favor_recall=True)
        or ""
    )
    meta = trafilatura.extract_metadata(html)
    return text, (meta.title if meta and meta.title else "")


def scrape_url(url: str, *, max_bytes: int = MAX_BYTES) -> ScrapeResult:
    """Fetch ``url`` (SSRF-guarded, size-capped, redirects re-checked) and extract its main text.

    Raises:
        ScrapeError: see ``ScrapeError.reason``; nothing is fetched from a refused address.
    """
    client = guarded_client(
        allow=allow_list(), timeout=timeout(), headers={"User-Agent": USER_AGENT}
    )
    current = url.strip()
    try:
        for _ in range(MAX_REDIRECTS + 1):
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
            except BlockedURL as exc:  # the guard refused this hop: nothing was sent
                raise _scrape_error(exc) from None
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
        client.close()
