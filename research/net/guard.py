"""The outbound-URL guard: no request to an internal address on a run's or a token's say-so.

Every request the product sends to an address someone else chose — a webhook, an Apprise target
that names a host, a page the scraper fetches from search results — goes through here (OWASP
Server-Side Request Forgery Prevention Cheat Sheet; GitLab's and GitHub's webhook rules):

* only ``http``/``https`` (Apprise checks its own schemes);
* the host is resolved and **every** address it resolves to must be public: loopback,
  link-local (169.254.169.254, the cloud metadata address), private (10/8, 172.16/12,
  192.168/16, fc00::/7), shared, multicast, reserved and unspecified addresses are refused, in
  IPv4 and IPv6, including IPv4 addresses inside IPv6 (``::ffff:127.0.0.1``, 6to4, Teredo);
* the connection is made to the address that was checked (:class:`GuardedTransport` rewrites
  the request to that IP and keeps ``Host`` and the TLS server name), so a DNS answer that
  changes between the check and the connection (DNS rebinding) cannot redirect it;
* each redirect hop is a new request through the same transport, so it is checked again.

``RESEARCH_OUTBOUND_ALLOW`` (also read from the older ``RESEARCH_SCRAPE_ALLOW_HOSTS``) lists
host names, IP addresses or networks (CIDR) that may be reached although internal — a team's
own Slack proxy, an intranet wiki, a test server on loopback. A host name on the list allows
whatever it resolves to; an address or network allows those addresses under any name.

No well-kept library does this for synchronous httpx clients (the candidates on PyPI are
async-only or months-old single-author releases), so this is a small transport of our own on
httpx's public ``HTTPTransport`` and httpcore's ``sni_hostname`` request extension.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from research.config import Settings, load_settings
from research.errors import ResearchError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
ALLOW_VAR = "RESEARCH_OUTBOUND_ALLOW"
_SPLIT = re.compile(r"[\s,]+")


class BlockedURL(ResearchError):
    """An outbound URL the guard refuses.

    Attributes:
        reason: ``bad_scheme`` (not http/https), ``no_host``, ``unresolvable`` or
            ``blocked_address`` (the host is or resolves to an internal address).
        host: the URL's host (lowercase), "" when it has none.
    """

    code = "blocked_url"

    def __init__(self, reason: str, message: str, host: str = "") -> None:
        super().__init__(message)
        self.reason, self.host = reason, host


@dataclass(frozen=True)
class AllowList:
    """Targets reachable although internal (``RESEARCH_OUTBOUND_ALLOW``).

    Attributes:
        hosts: lowercase host names (``hooks.internal``, ``localhost``).
        networks: IP networks; a single address is a /32 or /128 network.
    """

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    def allows_host(self, host: str) -> bool:
        """True when the host name itself is on the list."""
        return host.lower().rstrip(".") in self.hosts

    def allows_address(self, ip: IPAddress) -> bool:
        """True when ``ip`` lies in a listed network (an IPv4-mapped IPv6 address counts as its
        IPv4 address)."""
        candidates = [ip]
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
            candidates.append(ip.ipv4_mapped)
        return any(c.version == n.version and c in n for c in candidates for n in self.networks)


def parse_allow(text: str) -> AllowList:
    """The allow-list from its text: entries separated by commas, spaces or newlines, each a
    host name, an IP address or a CIDR network (``10.0.0.0/8``, ``[::1]``, ``fd00::/8``)."""
    hosts: set[str] = set()
    networks: list[IPNetwork] = []
    for raw in _SPLIT.split(text or ""):
        entry = raw.strip().strip("[]").lower().rstrip(".")
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            hosts.add(entry)
    return AllowList(frozenset(hosts), tuple(networks))


def allow_list(settings: Settings | None = None) -> AllowList:
    """The allow-list of the settings (``RESEARCH_OUTBOUND_ALLOW``)."""
    return parse_allow((settings or load_settings()).outbound_allow)


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> Iterator[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries (mapped, 6to4, Teredo server and client)."""
    if ip.ipv4_mapped:
        yield ip.ipv4_mapped
    if ip.sixtofour:
        yield ip.sixtofour
    if ip.teredo:
        yield from ip.teredo


def is_internal(ip: IPAddress) -> bool:
    """True for an address the guard refuses: anything not globally routable (loopback,
    link-local, private, shared, reserved, unspecified, documentation) or multicast, checked
    for IPv4 addresses inside IPv6 too."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        return is_internal(ip.ipv4_mapped)  # ::ffff:a.b.c.d is a.b.c.d on a dual-stack socket
    if not ip.is_global or ip.is_multicast:
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        return any(is_internal(v4) for v4 in _embedded_ipv4(ip))
    return False


@dataclass(frozen=True)
class Checked:
    """A URL the guard accepted: its ``host`` (lowercase), ``port`` and the ``address`` to
    connect to (the first address it resolved to, every one of which was checked)."""

    host: str
    port: int
    address: str


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (an IP literal resolves to itself).

    Raises:
        BlockedURL: ``unresolvable``.
    """
    try:
        return [ipaddress.ip_address(host.split("%")[0])]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise BlockedURL("unresolvable", f"cannot resolve {host}: {exc}", host) from None
    out: list[IPAddress] = []
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if ip not in out:
            out.append(ip)
    return out


def check_host(host: str, port: int, allow: AllowList | None = None) -> Checked:
    """Resolve ``host`` and accept it only when every address is public or allow-listed.

    Raises:
        BlockedURL: ``no_host``, ``unresolvable`` or ``blocked_address`` (the message names the
            address and the setting that would allow it).
    """
    allow = allow_list() if allow is None else allow
    host = host.lower().strip("[]").rstrip(".")
    if not host:
        raise BlockedURL("no_host", "the URL has no host")
    addresses = resolve(host, port)
    if not allow.allows_host(host):
        for ip in addresses:
            if is_internal(ip) and not allow.allows_address(ip):
                shown = host if host == str(ip) else f"{host} ({ip})"
                raise BlockedURL(
                    "blocked_address",
                    f"refusing {shown}: an internal address (loopback, private, link-local, "
                    f"multicast or reserved); an admin may allow it in {ALLOW_VAR}",
                    host,
                )
    if not addresses:
        raise BlockedURL("unresolvable", f"cannot resolve {host}: no address", host)
    return Checked(host=host, port=port, address=str(addresses[0]))


def check_url(url: str, allow: AllowList | None = None) -> Checked:
    """Check an http(s) URL (see :func:`check_host`).

    Raises:
        BlockedURL: ``bad_scheme`` for any scheme but http/https, else as ``check_host``.
    """
    try:
        parts = urlsplit(str(url).strip())
        port = parts.port
    except ValueError as exc:
        raise BlockedURL("no_host", f"not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise BlockedURL("bad_scheme", f"only http(s) URLs are fetched, not {scheme or 'a path'}:")
    return check_host(parts.hostname or "", port or (443 if scheme == "https" else 80), allow)


class GuardedTransport(httpx.HTTPTransport):
    """An httpx transport that checks every request's host (:func:`check_url`) and connects to
    the address it checked. The request goes out with its own ``Host`` header and, for https,
    the host as TLS server name (certificates are verified against the name, not the IP).

    Args:
        allow: the allow-list (default: the settings' at each request).
        **kwargs: ``httpx.HTTPTransport`` options (``verify``, ``retries``...).

    Raises (from ``handle_request``):
        BlockedURL: the request was refused; nothing was sent.
    """

    def __init__(self, allow: AllowList | None = None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.allow = allow

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Check, pin and send one request (one hop of a redirect chain)."""
        checked = check_url(str(request.url), self.allow)
        extensions = dict(request.extensions)
        if request.url.scheme == "https":
            extensions.setdefault("sni_hostname", checked.host)
        pinned = httpx.Request(
            request.method,
            request.url.copy_with(host=checked.address),
            headers=request.headers,  # keeps Host: the name the client asked for
            stream=request.stream,
            extensions=extensions,
        )
        return super().handle_request(pinned)


def guarded_client(
    *, allow: AllowList | None = None, follow_redirects: bool = False, **kwargs: object
) -> httpx.Client:
    """An ``httpx.Client`` whose every request (and redirect hop) goes through
    :class:`GuardedTransport`. Environment proxies are not used: the guard decides where the
    connection goes. ``kwargs``: other ``httpx.Client`` options (``timeout``, ``headers``)."""
    return httpx.Client(
        transport=GuardedTransport(allow),
        follow_redirects=follow_redirects,
        **kwargs,  # type: ignore[arg-type]
    )
