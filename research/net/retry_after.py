"""The one ``Retry-After`` parser (RFC 9110 §10.2.3), shared by the LLM client
(research/llm/errors.py) and the search backends' HTTP layer (research/search/http.py)."""

from __future__ import annotations

import email.utils
import time


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` header value → seconds to wait (≥ 0): delta-seconds (may be fractional)
    or an HTTP date; None when absent or unparseable (never raises). Callers apply their own cap."""
    value = (value or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
