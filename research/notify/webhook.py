"""Signed webhooks: the notification's JSON body POSTed to an http(s) URL.

Signature scheme (like Stripe's and GitHub's; ``docs/notifications.md`` has a receiver):

- ``X-Research-Timestamp``: Unix seconds when the attempt was sent (an integer, as text).
- ``X-Research-Signature``: ``sha256=`` + the lowercase hex HMAC-SHA256, keyed with
  ``RESEARCH_WEBHOOK_SECRET``, of the bytes ``{timestamp}.{raw body}`` — the timestamp header's
  text, one ``.``, then the request body exactly as received.
- ``X-Research-Event`` (e.g. ``run.complete``) and ``X-Research-Delivery`` (one id per
  target and event, the same on every retry: receivers deduplicate on it).

A receiver recomputes the HMAC over the raw body (before parsing it), compares in constant time
and rejects timestamps more than ``TOLERANCE_S`` from its clock (a replayed request). Without a
secret the body is sent unsigned (no signature header) and the record says ``signed: false``.

Retries (tenacity): connection errors, timeouts, 408, 429 and 5xx answers are retried with
exponential backoff; any other 4xx is final (the receiver refused this body).

The POST goes through the outbound-URL guard (``research.net.guard``): a host that is or
resolves to an internal address (unless allow-listed in ``RESEARCH_OUTBOUND_ALLOW``) is a failed
delivery with the reason, never retried, and nothing is sent; the connection goes to the address
that was checked. Redirects are not followed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid

import httpx
from tenacity import (
    Retrying,
    retry_if_exception_type,
    retry_if_result,
    stop_after_attempt,
    wait_exponential,
)

from research.config import Settings
from research.net.guard import BlockedURL, allow_list, guarded_client
from research.notify.base import Notification, Outcome, Target, quiet, scrub

SIGNATURE_HEADER = "X-Research-Signature"
TIMESTAMP_HEADER = "X-Research-Timestamp"
EVENT_HEADER = "X-Research-Event"
DELIVERY_HEADER = "X-Research-Delivery"
TOLERANCE_S = 300
MAX_WAIT_S = 30.0
USER_AGENT = "ResearchDesk-Webhook/1"


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>``: HMAC-SHA256 keyed with ``secret`` over ``{timestamp}.{body}``."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(
    secret: str,
    body: bytes,
    timestamp: str,
    header: str,
    *,
    now: float | None = None,
    tolerance_s: float = TOLERANCE_S,
) -> bool:
    """True when ``header`` (the ``X-Research-Signature`` value) signs ``body`` at
    ``timestamp`` (the ``X-Research-Timestamp`` value) with ``secret`` and the timestamp is
    within ``tolerance_s`` seconds of ``now`` (default: the clock). Constant-time comparison;
    never raises."""
    try:
        ts = int(timestamp)
    except (TypeError, ValueError):
        return False
    if abs((time.time() if now is None else now) - ts) > tolerance_s:
        return False
    return hmac.compare_digest(signature(secret, timestamp, body), header or "")


def encode(body: dict) -> bytes:
    """The exact bytes POSTed (compact UTF-8 JSON): the signature covers these bytes."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _retryable(response: httpx.Response) -> bool:
    return response.status_code in (408, 429) or response.status_code >= 500


def send(target: Target, notification: Notification, settings: Settings) -> Outcome:
    """POST ``notification.body`` to ``target.url``, signed when ``settings.webhook_secret`` is
    set; ``settings.notify_attempts`` attempts with exponential backoff from
    ``settings.notify_backoff_s`` (s), each timing out after ``settings.notify_timeout_s`` (s).
    Redirects are not followed (a 3xx is a failure); a target the outbound-URL guard refuses
    is a failure at once (``error`` says why). Never raises: the outcome says what happened,
    with any secret of the URL scrubbed from the error."""
    body = encode(notification.body)
    secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else ""
    out = Outcome(signed=bool(secret), delivery_id=uuid.uuid4().hex)

    def attempt(client: httpx.Client) -> httpx.Response:
        out.attempts += 1
        out.status_code = None  # a transport error leaves no status of its own
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            EVENT_HEADER: notification.event,
            DELIVERY_HEADER: out.delivery_id,
            TIMESTAMP_HEADER: stamp,
        }
        if secret:
            headers[SIGNATURE_HEADER] = signature(secret, stamp, body)
        response = client.post(target.url, content=body, headers=headers)
        out.status_code = response.status_code
        return response

    retrying = Retrying(
        stop=stop_after_attempt(max(1, settings.notify_attempts)),
        wait=wait_exponential(multiplier=max(0.0, settings.notify_backoff_s), max=MAX_WAIT_S),
        retry=retry_if_exception_type(httpx.TransportError) | retry_if_result(_retryable),
        # after the last attempt: its response, or its exception raised again
        retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
    )
    try:
        with (
            quiet(),
            guarded_client(allow=allow_list(settings), timeout=settings.notify_timeout_s) as client,
        ):
            response = retrying(attempt, client)
    except BlockedURL as exc:  # not retried: the address will not become public
        out.error = scrub(f"refused by the outbound-URL guard: {exc.message}", target.url)
        return out
    except Exception as exc:  # transport errors after the last attempt, or a bad URL
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        out.error = scrub(detail, target.url)
        return out
    out.ok = response is not None and 200 <= response.status_code < 300
    if not out.ok:
        out.error = f"HTTP {out.status_code}" if out.status_code else "no answer"
    return out
