"""Slack, Microsoft Teams, e-mail and ~100 other services through Apprise URLs
(``slack://…``, ``msteams://…``, ``mailto://…``, ``json://host/path``...).

Apprise is imported here only, on first use (its plugins take ~0.1 s to load), so the CLI and
the dashboard start without it. Apprise (and urllib3 under it) log a service's full URL, so
while a delivery runs their records from its thread are dropped (``research.notify.base.quiet``);
the warnings among them, scrubbed of the URL's secrets, become the recorded error.

Apprise sends through ``requests``; while a delivery runs, every connection its thread opens
goes through the outbound-URL guard (``research.net.connect_guard``): each connection — each
redirect hop — is checked and pinned to the address checked. The host a URL names
(``json://host/…``, ``mailto://user@host``) is also checked before anything is sent
(:func:`check_host`), which covers the services Apprise reaches without urllib3 (e-mail).
"""

from __future__ import annotations

from typing import Any

from tenacity import Retrying, retry_if_result, stop_after_attempt, wait_exponential

from research.config import Settings
from research.errors import InputError
from research.net.connect_guard import guarded_connections
from research.net.guard import AllowList, BlockedURL, allow_list
from research.net.guard import check_host as guard_host
from research.notify.base import Notification, Outcome, Target, quiet, redact, scrub

MAX_WAIT_S = 30.0


def _apprise() -> Any:
    import apprise  # noqa: PLC0415 - apprise's one lazy import (its plugins load in ~0.1 s)

    return apprise


def service_name(url: str) -> str:
    """The Apprise service a URL names (``Slack``, ``E-Mail``, ``JSON``...).

    Raises:
        InputError: Apprise does not understand the URL (the message shows its redacted form).
    """
    apprise = _apprise()
    with quiet():  # Apprise logs the URL it loads
        plugin = apprise.Apprise.instantiate(url.strip())
    if plugin is None:
        raise InputError(
            f"'{redact(url)}' is not a notification target: use an http(s) webhook URL or an "
            "Apprise URL (slack://…, msteams://…, mailto://…, json://…; see "
            "https://github.com/caronc/apprise/wiki).",
            code="invalid_notify_target",
        )
    return str(getattr(plugin, "service_name", "") or type(plugin).__name__)


def plugin_host(plugin: Any) -> tuple[str, int] | None:
    """``(host, port)`` an Apprise plugin will contact, when its URL names one (``json://``,
    ``mailto://``, self-hosted services); None for services with a fixed API host."""
    host = str(getattr(plugin, "host", "") or "").strip()
    if not host:
        return None
    port = getattr(plugin, "port", None)
    secure = bool(getattr(plugin, "secure", False))
    return host, int(port) if port else (443 if secure else 80)


def check_host(url: str, allow: AllowList | None = None) -> None:
    """Refuse an Apprise URL whose host is or resolves to an internal address (the outbound-URL
    guard, ``research.net.guard``); a host that does not resolve now is left to delivery.

    Raises:
        BlockedURL: ``blocked_address`` (the message names the host, not the URL's secrets).
    """
    apprise = _apprise()
    with quiet():
        plugin = apprise.Apprise.instantiate(url.strip())
    where = plugin_host(plugin) if plugin is not None else None
    if where is None:
        return
    try:
        guard_host(*where, allow)
    except BlockedURL as exc:
        if exc.reason == "blocked_address":
            raise


def send(target: Target, notification: Notification, settings: Settings) -> Outcome:
    """Deliver ``notification`` (title, text, level) to one Apprise target, retrying
    ``settings.notify_attempts`` times with exponential backoff from
    ``settings.notify_backoff_s`` (s); each attempt times out after
    ``settings.notify_timeout_s`` (s, connect and read). Never raises."""
    apprise = _apprise()
    out = Outcome()
    allow = allow_list(settings)
    with quiet() as warnings, guarded_connections(allow):
        try:
            plugin = apprise.Apprise.instantiate(target.url)
        except Exception as exc:  # a plugin that rejects its URL: recorded, never raised
            out.error = scrub(f"{type(exc).__name__}: {exc}", target.url)
            return out
        if plugin is None:
            out.error = "Apprise does not understand this URL"
            return out
        where = plugin_host(plugin)
        try:
            if where is not None:
                guard_host(*where, allow)
        except BlockedURL as exc:
            if exc.reason == "blocked_address":
                out.error = scrub(f"refused by the outbound-URL guard: {exc.message}", target.url)
                return out
        for attr in ("socket_connect_timeout", "socket_read_timeout"):
            if hasattr(plugin, attr):
                setattr(plugin, attr, settings.notify_timeout_s)
        level = {
            "success": apprise.NotifyType.SUCCESS,
            "failure": apprise.NotifyType.FAILURE,
        }.get(notification.level, apprise.NotifyType.INFO)

        def attempt() -> bool:
            out.attempts += 1
            try:
                return bool(
                    plugin.notify(
                        title=notification.title, body=notification.text, notify_type=level
                    )
                )
            except BlockedURL:
                raise  # a refused connection (a redirect hop, a changed DNS answer): no retry
            except Exception as exc:  # a plugin bug must not escape the delivery thread
                warnings.append(f"{type(exc).__name__}: {exc}")
                return False

        try:
            out.ok = Retrying(
                stop=stop_after_attempt(max(1, settings.notify_attempts)),
                wait=wait_exponential(
                    multiplier=max(0.0, settings.notify_backoff_s), max=MAX_WAIT_S
                ),
                retry=retry_if_result(lambda ok: not ok),
                retry_error_callback=lambda state: False,
            )(attempt)
        except BlockedURL as exc:
            out.error = scrub(f"refused by the outbound-URL guard: {exc.message}", target.url)
            return out
    if not out.ok:
        detail = warnings[-1] if warnings else "Apprise reported a failed delivery"
        out.error = scrub(detail, target.url)
    return out
