"""Where notifications go: parsing and checking target URLs, the targets of the settings and
of one run, and which events are sent.

A run's targets live in two forms (see ``RunConfig.notify``):

- the redacted display forms in the run's config (``https://hooks.example.org/… #1a2b3c``) —
  safe in the run's hash, ``research show --json``, exports and the dashboard;
- the full URLs, which may hold tokens or passwords, only in memory from the input gate
  (``attach``, called by ``research.jobs.make_config``) to ``research.jobs.create_run``, which
  stores them encrypted (``keep``: ``research.notify.seal``) under ``run:{id}:notify:targets``.
  The process that ends the run — a dashboard thread, the CLI or an RQ worker — opens them
  there (``run_targets``).

Settings-level targets (``RESEARCH_WEBHOOK_URLS``, ``RESEARCH_APPRISE_URLS``) and the webhook
secret stay in the environment (or secrets.toml) and are read when a notification is sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

from research.config import Settings
from research.errors import InputError
from research.models import RunConfig
from research.net.guard import ALLOW_VAR, BlockedURL, check_url
from research.notify import apprise_target
from research.notify.base import WEBHOOK_SCHEMES, Origin, Target, redact
from research.notify.seal import seal, unseal
from research.store.runs import RunStore

MAX_TARGETS = 10
MAX_URL_CHARS = 2000
RUN_EVENTS = {
    "complete": "run.complete",
    "failed": "run.failed",
    "awaiting_review": "run.awaiting_review",
}
EVENTS: tuple[str, ...] = (*RUN_EVENTS.values(), "batch.complete")  # every event sent
_SPLIT = re.compile(r"[\s,]+")


def parse_target(url: str, origin: Origin = "run", *, guard: bool = False) -> Target:
    """One target from its URL: ``http(s)://`` is a webhook, any other scheme Apprise knows is an
    Apprise target. ``guard``: also refuse a host that is or resolves to an internal address
    (the outbound-URL guard; a host that does not resolve now is left to delivery) — done where
    a target is set; at delivery the guard refuses it again and the record says why.

    Raises:
        InputError (code ``invalid_notify_target``): empty, too long, control characters, not a
            URL, a webhook without a host, or a scheme Apprise does not know; (code
            ``blocked_notify_target``) an internal address not allow-listed in
            ``RESEARCH_OUTBOUND_ALLOW``. The message shows only the redacted form of the URL.
    """
    text = (url or "").strip()
    if not text:
        raise InputError("A notification target is empty.", code="invalid_notify_target")
    if len(text) > MAX_URL_CHARS or any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise InputError(
            f"The notification target '{redact(text)}' is longer than {MAX_URL_CHARS} characters "
            "or holds control characters.",
            code="invalid_notify_target",
        )
    if "://" not in text:
        raise InputError(
            f"'{redact(text)}' is not a URL: give an http(s) webhook URL or an Apprise URL "
            "such as slack://…, msteams://…, mailto://….",
            code="invalid_notify_target",
        )
    scheme = text.split("://", 1)[0].lower()
    if scheme in WEBHOOK_SCHEMES:
        try:
            host = urlsplit(text).hostname
        except ValueError:
            host = None
        if not host:
            raise InputError(
                f"The webhook URL '{redact(text)}' has no host.", code="invalid_notify_target"
            )
        if guard:
            _guard(text, lambda: check_url(text))
        return Target("webhook", text, origin)
    apprise_target.service_name(text)  # raises InputError for a URL Apprise does not know
    if guard:
        _guard(text, lambda: apprise_target.check_host(text))
    return Target("apprise", text, origin)


def _guard(url: str, check: Callable[[], object]) -> None:
    """Run an outbound-URL guard check; a refused address becomes an InputError that names
    only the redacted URL and the setting that allows it."""
    try:
        check()
    except BlockedURL as exc:
        if exc.reason != "blocked_address":
            return  # unresolvable now: delivery tries (and records) it
        raise InputError(
            f"The notification target '{redact(url)}' points at an internal address "
            "(loopback, private, link-local, multicast or reserved), which notifications may "
            f"not reach; an admin may allow its host or network in {ALLOW_VAR}.",
            code="blocked_notify_target",
        ) from None


def split_urls(text: str) -> list[str]:
    """URLs separated by spaces, commas or newlines (a comma inside a URL is written ``%2C``)."""
    return [u for u in _SPLIT.split(text or "") if u]


def check_targets(urls: list[str] | tuple[str, ...] | str | None) -> list[Target]:
    """Per-run targets from ``--notify`` / the launch form (a list, or one string of URLs
    ``split_urls`` separates), duplicates dropped, in order.

    Raises:
        InputError: a bad target (``parse_target``) or more than ``MAX_TARGETS``.
    """
    raw = (
        split_urls(urls)
        if isinstance(urls, str)
        else [u for x in urls or [] for u in split_urls(x)]
    )
    targets: list[Target] = []
    for url in raw:
        target = parse_target(url, "run", guard=True)
        if target.url not in {t.url for t in targets}:
            targets.append(target)
    if len(targets) > MAX_TARGETS:
        raise InputError(
            f"{len(targets)} notification targets; a run may have at most {MAX_TARGETS}.",
            code="invalid_notify_target",
        )
    return targets


def attach(config: RunConfig, targets: list[Target]) -> RunConfig:
    """``config`` with ``notify`` = the targets' display forms and the full URLs attached in
    memory only (``RunConfig.attach_notify_targets``). Returns a new config."""
    out = config.model_copy(update={"notify": [t.display for t in targets]})
    out.attach_notify_targets([t.url for t in targets])
    return out


def sealed(config: RunConfig, settings: Settings) -> str | None:
    """The encrypted token of the config's attached targets, or None when it has none.
    Raises ResearchError (code ``notify_key``) when the key is unusable (``seal``)."""
    urls = config.notify_targets
    return seal(urls, settings) if urls else None


def keep(store: RunStore, run_id: str, token: str | None) -> None:
    """Store a run's encrypted targets (``sealed``); nothing when ``token`` is None."""
    if token:
        store.notifications.put_sealed_targets(run_id, token)


def run_targets(store: RunStore, run_id: str, settings: Settings) -> list[Target]:
    """The run's own targets, decrypted. Raises ResearchError (code ``notify_key``) when they do
    not open with this process's key; a stored URL no longer valid is skipped."""
    token = store.notifications.sealed_targets(run_id)
    if not token:
        return []
    targets = []
    for url in unseal(token, settings):
        try:
            targets.append(parse_target(url, "run"))
        except InputError:
            continue
    return targets


def settings_targets(settings: Settings, *, strict: bool = False) -> list[Target]:
    """The targets of ``RESEARCH_WEBHOOK_URLS`` (each must be http(s)) and
    ``RESEARCH_APPRISE_URLS``. A bad one is skipped, or with ``strict`` raises InputError
    naming the variable (and only the redacted URL)."""
    out: list[Target] = []
    for var, secret, kind in (
        ("RESEARCH_WEBHOOK_URLS", settings.webhook_urls, "webhook"),
        ("RESEARCH_APPRISE_URLS", settings.apprise_urls, "apprise"),
    ):
        for url in split_urls(secret.get_secret_value() if secret else ""):
            try:
                target = parse_target(url, "settings", guard=strict)
                if target.kind != kind:
                    raise InputError(
                        f"'{redact(url)}' is not {'an http(s)' if kind == 'webhook' else 'an Apprise'} URL.",
                        code="invalid_notify_target",
                    )
            except InputError as exc:
                if strict:
                    raise InputError(f"{var}: {exc.message}", code=exc.code) from None
                continue
            out.append(target)
    return out


def _short(event: str) -> str:
    """A run event by its status (``run.failed`` → ``failed``); others in full."""
    return event.split(".", 1)[-1] if event.startswith("run.") else event


def enabled_events(settings: Settings) -> set[str]:
    """The events ``RESEARCH_NOTIFY_ON`` turns on: names such as ``complete``, ``run.failed``
    or ``all``, separated by commas; empty means none.

    Raises:
        InputError (code ``invalid_config``): an unknown name (the message lists the valid ones).
    """
    out: set[str] = set()
    for word in split_urls(settings.notify_on.lower()):
        if word == "all":
            out.update(EVENTS)
            continue
        match = [e for e in EVENTS if word in (e, _short(e))]
        if not match:
            raise InputError(
                f"RESEARCH_NOTIFY_ON names {word[:40]!r}, not an event; use any of "
                f"{', '.join(_short(e) for e in EVENTS)} (or all).",
                code="invalid_config",
            )
        out.update(match)
    return out


def check_settings(settings: Settings) -> None:
    """Fail fast on notification settings that cannot work: a bad ``RESEARCH_NOTIFY_ON`` or a
    bad target in ``RESEARCH_WEBHOOK_URLS`` / ``RESEARCH_APPRISE_URLS``. Raises InputError."""
    enabled_events(settings)
    settings_targets(settings, strict=True)
