"""What every LLM prompt is told besides its step's instructions: today's date (so recent
sources are not rejected as "impossible" and "recent" means something) and, when the run is not
in English, the language to write in (search queries stay in English, which the literature
backends serve best).

The lines are appended to the system message by ``research.llm.session.LLMSession.call``, after
the step marker the loopback server keys on.
"""

from __future__ import annotations

from datetime import UTC, datetime

from research.errors import InputError

LANGUAGES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "pl": "Polish",
    "sv": "Swedish",
    "da": "Danish",
    "fi": "Finnish",
    "no": "Norwegian",
    "cs": "Czech",
    "tr": "Turkish",
    "ja": "Japanese",
    "zh": "Chinese",
    "ko": "Korean",
    "ru": "Russian",
    "ar": "Arabic",
}


def check_language(code: str | None) -> str:
    """A supported ISO 639-1 code (lower-cased; empty → "en").

    Raises:
        InputError (code ``bad_language``): not one of ``LANGUAGES`` (the message lists them).
    """
    value = str(code or "en").strip().lower()
    if value not in LANGUAGES:
        raise InputError(
            f"--language {str(code)[:20]!r} is not supported; use one of "
            + ", ".join(f"{k} ({v})" for k, v in LANGUAGES.items()),
            code="bad_language",
        )
    return value


def today() -> str:
    """Today's date, ISO ``YYYY-MM-DD`` (UTC)."""
    return datetime.now(UTC).date().isoformat()


def context_lines(language: str = "en") -> str:
    """The lines appended to every system prompt: today's date, and for a non-English run the
    language to write in."""
    lines = [
        f"Today's date is {today()}. Sources published up to today are real; do not treat "
        "a recent date as impossible."
    ]
    if language and language != "en":
        name = LANGUAGES.get(language, language)
        lines.append(
            f"Write every question, answer, summary and report text in {name}. Keep search "
            "queries in English (the search backends serve English best); keep citation "
            "markers like [1] and JSON keys unchanged."
        )
    return "\n".join(lines)
