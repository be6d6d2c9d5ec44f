"""The notifier's three values: a :class:`Target` (where), a :class:`Notification` (what) and an
:class:`Outcome` (how one delivery went).

A notification is not tied to runs: ``research.notify.payload.run_notification`` builds the
three run events, and anything else that ends (a batch of runs, say) builds its own
``Notification`` with its own ``event`` name and body, then hands it to
``research.notify.deliver.send`` — signing, retries, Apprise and the delivery records are the
same code.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

TargetKind = Literal["webhook", "apprise"]
Origin = Literal["settings", "run"]
Level = Literal["success", "failure", "info"]
WEBHOOK_SCHEMES = ("http", "https")


def redact(url: str) -> str:
    """The display form of a target URL: what may be stored, logged and shown.

    A webhook keeps its scheme, host and port (``https://hooks.example.org/…``); an Apprise URL
    only its scheme (``slack://…``), since its host part is often a token. A short fingerprint
    (the first 6 hex digits of the URL's SHA-256) tells apart two targets that look alike:
    ``https://hooks.example.org/… #1a2b3c``. Never raises.
    """
    text = url.strip()
    tag = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:6]
    try:
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        if scheme in WEBHOOK_SCHEMES and parts.hostname:
            port = f":{parts.port}" if parts.port else ""
            return f"{scheme}://{parts.hostname}{port}/… #{tag}"
    except ValueError:  # a malformed port or netloc: show the scheme only
        scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    scheme = "".join(c for c in scheme if c.isalnum() or c in "+-.")[:20]
    return f"{scheme or 'url'}://… #{tag}"


@dataclass(frozen=True)
class Target:
    """One place to notify.

    Attributes:
        kind: ``webhook`` (http/https: the signed JSON payload is POSTed) or ``apprise``
            (any other scheme Apprise knows: ``slack://``, ``msteams://``, ``mailto://``, ``json://``...).
        url: the full URL, possibly with tokens or passwords; kept out of ``repr`` and never
            stored in clear.
        origin: ``settings`` (environment) or ``run`` (``--notify`` / the launch form).
    """

    kind: TargetKind
    url: str = field(repr=False)
    origin: Origin = "run"

    @property
    def display(self) -> str:
        """The redacted display form (``redact``)."""
        return redact(self.url)


@dataclass(frozen=True)
class Notification:
    """What is sent: the webhook JSON body and the human title/text Apprise services show.

    Attributes:
        event: e.g. ``run.complete``; the webhook body's ``event`` and ``X-Research-Event``.
        body: the JSON object POSTed to webhooks (must hold ``event``).
        title, text: one-line title and a few lines of plain text (Slack, Teams, e-mail).
        level: ``success``, ``failure`` or ``info`` (Apprise's notification type).
        subject: what the notification is about (a run id), for logs and records.
    """

    event: str
    body: dict[str, Any]
    title: str
    text: str
    level: Level = "info"
    subject: str = ""


@dataclass
class Outcome:
    """How one delivery went, after its retries.

    Attributes:
        ok: delivered. status_code: the last HTTP status (webhooks; None without an answer).
        error: why not ("" when ok; secrets scrubbed). attempts: attempts made.
        signed: the body carried a signature. delivery_id: the ``X-Research-Delivery`` id.
    """

    ok: bool = False
    status_code: int | None = None
    error: str = ""
    attempts: int = 0
    signed: bool = False
    delivery_id: str = ""


def scrub(text: str, url: str) -> str:
    """``text`` (an exception message, a log line) with the URL and every part of it that may be
    secret — user, password, path segments, query values of 4+ characters — replaced by ``…``;
    clipped to 300 characters."""
    secrets: set[str] = {url.strip()}
    try:
        parts = urlsplit(url.strip())
        secrets.update(p for p in (parts.username, parts.password) if p)
        secrets.update(seg for seg in parts.path.split("/") if len(seg) >= 4)
        secrets.update(kv.split("=", 1)[-1] for kv in parts.query.split("&") if kv)
        if parts.scheme.lower() not in WEBHOOK_SCHEMES and parts.netloc:
            secrets.add(parts.netloc)  # an Apprise URL's host part is often a token
    except ValueError:
        pass
    out = text
    for s in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
        out = out.replace(s, "…")
    return out[:300]


# Loggers that write a request's full URL (httpx at INFO, urllib3 at DEBUG, Apprise at DEBUG):
# while a thread delivers a notification their records from that thread are dropped.
LOUD_LOGGERS = ("apprise", "httpx", "urllib3.connectionpool", "urllib3.util.retry")
_muffled: dict[int, list[str]] = {}


class _Muffle(logging.Filter):
    """Drops the records of delivering threads (``quiet``), keeping their WARNING+ messages."""

    def filter(self, record: logging.LogRecord) -> bool:
        lines = _muffled.get(record.thread or 0)
        if lines is None:
            return True
        if record.levelno >= logging.WARNING:
            lines.append(record.getMessage())
        return False


for _name in LOUD_LOGGERS:
    logging.getLogger(_name).addFilter(_Muffle())


@contextmanager
def quiet() -> Iterator[list[str]]:
    """While a delivery runs in this thread, keep the HTTP and Apprise loggers' records out of
    every log (they name the target's full URL, which may hold a token): a logger filter drops
    this thread's records, whichever handlers are attached. Yields the list their WARNING+
    messages are collected in (unscrubbed: pass them through ``scrub`` before keeping any)."""
    lines: list[str] = []
    me = threading.get_ident()
    _muffled[me] = lines
    try:
        yield lines
    finally:
        _muffled.pop(me, None)
