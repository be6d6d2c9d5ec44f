"""A source's identity and the checks of the collector's inputs, with no Redis.

- ``dedup_key`` (``id:{type}:{external_id}`` or ``url:{canonical_url}``) and ``canonical_url``:
  when two saves are one source (docs/design.md § Source collector); the search merge and the
  run comparison key their results the same way;
- ``check_syllabus``: a syllabus the collector can store (≥ 1 question, unique keys like
  ``clinical.efficacy`` of ≤ ``MAX_QUESTION_KEY_CHARS`` characters);
- ``_text``: a ``save_source`` / ``register_citation`` text field, stripped (InputError when
  a required one is missing or empty);
- the shapes of the ids the collector accepts: ``SOURCE_ID_RE`` (``src_012``, group 1 = the
  number) and ``CITATION_ID_RE``.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from courlan import normalize_url

from research.errors import InputError
from research.models import Syllabus
from research.store import keys

MAX_QUESTION_KEY_CHARS = 64
SOURCE_ID_RE = re.compile(r"^src_(\d{3,})$")
CITATION_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,100}$")


def canonical_url(url: str) -> str:
    """Canonical form of a URL for dedup: courlan's normalisation (lowercase scheme and host,
    default port and tracking parameters removed, query sorted), no fragment, no trailing slash."""

    text = url.strip()
    try:
        text = normalize_url(text, trailing_slash=False)
    except (ValueError, TypeError):  # pragma: no cover - courlan rejects very odd input
        text = text.lower()
    parts = urlsplit(text)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), parts.query, ""))


def dedup_key(source_type: str, external_id: str, url: str) -> str:
    """Identity of a source (docs/design.md § Source collector): ``id:{type}:{external_id}`` when
    there is an external id (case-insensitive), else ``url:{canonical_url}``."""
    if external_id.strip():
        return f"id:{source_type.strip().lower()}:{external_id.strip().lower()}"
    return f"url:{canonical_url(url)}"


def _text(name: str, value: object, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise InputError(f"save_source needs {name} as a non-empty string (got {value!r:.60}).")
    return value.strip()


def check_syllabus(syllabus: Syllabus) -> Syllabus:
    """Return ``syllabus`` if usable by the collector, else raise InputError saying what to fix:
    at least one question, unique keys, keys like ``clinical.efficacy`` of ≤ 64 characters."""
    if not isinstance(syllabus, Syllabus) or not syllabus.questions:
        raise InputError(
            "The collector needs a Syllabus with at least one question (see research.planning.syllabus)."
        )
    seen = set()
    for q in syllabus.questions:
        if (
            not keys.QUESTION_KEY_RE.fullmatch(q.key)
            or len(q.key) > MAX_QUESTION_KEY_CHARS
            or q.key in seen
        ):
            raise InputError(
                f"Syllabus question key '{q.key[:80]}' is malformed, duplicated or longer than "
                f"{MAX_QUESTION_KEY_CHARS} characters; use unique keys like 'clinical.efficacy'."
            )
        seen.add(q.key)
    return syllabus
