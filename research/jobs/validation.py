"""The gate for user input: topics, corpus paths and integer options.

Every check raises :class:`research.errors.InputError` or :class:`research.errors.CorpusError`
with a message that says what to fix; none of them writes anything. A run's options reach them
through the one input gate, ``research.jobs.run_config.make_config``; other commands (``research
list --limit``, ``research serve --port``...) use them directly.

Topic rules (documented choices):

* Unicode is normalized to NFC, so a topic typed with combining accents and one typed with
  precomposed letters are the same topic.
* Tabs, newlines and other whitespace (``str.split`` whitespace: NBSP, U+2028, ...) are
  *normalized*: every run of whitespace becomes one plain space and the ends are stripped, so a
  topic pasted from a multi-line text box is accepted.
* Any other control character (Unicode category ``Cc``: NUL, ESC, DEL, C1 controls) is
  *rejected*, as are lone surrogates (``Cs``; they come from command-line bytes that are not
  valid UTF-8). Format characters (``Cf``, e.g. the right-to-left mark) are text and are kept.
* A topic containing ``../`` or ``..\\`` is rejected with a request to remove path components
  (file names are always derived safely elsewhere; the message just keeps intent clear).
* At most :data:`MAX_TOPIC_CHARS` characters (code points, after normalization).
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

from research.errors import CorpusError, InputError

MAX_TOPIC_CHARS = 500
_FIRST_LINE_LIMIT = 16 * 1024 * 1024  # bytes read when checking a JSONL file's first record
_NORMALIZED_CONTROLS = {"\t", "\n", "\r"}


def _describe(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def validate_topic(topic: str) -> str:
    """Return the cleaned topic (NFC, whitespace collapsed to single spaces, stripped).

    Args:
        topic: the research question as typed.

    Returns:
        The topic to store, 1–500 characters.

    Raises:
        InputError: not a string, empty or whitespace-only, longer than 500 characters (the
            message gives the length and the limit), containing a control character or NUL
            (the message gives its position and code point), invalid UTF-8, or containing
            ``../`` / ``..\\``.
    """
    if not isinstance(topic, str):
        raise InputError(f"The topic must be text, not {type(topic).__name__}.")
    for i, ch in enumerate(topic):
        cat = unicodedata.category(ch)
        if cat == "Cs":
            raise InputError(
                "The topic is not valid UTF-8 text (character "
                f"{i + 1} is an undecodable byte); retype it or fix the terminal encoding."
            )
        if cat == "Cc" and ch not in _NORMALIZED_CONTROLS:
            raise InputError(
                f"The topic contains a control character ({_describe(ch)}) at position "
                f"{i + 1}; remove it and use plain text."
            )
    cleaned = " ".join(unicodedata.normalize("NFC", topic).split())
    if not cleaned:
        raise InputError(
            "The topic is empty; type a research question, e.g. "
            "'Imatinib in chronic myeloid leukaemia'."
        )
    if len(cleaned) > MAX_TOPIC_CHARS:
        raise InputError(
            f"The topic is {len(cleaned):,} characters long; the limit is "
            f"{MAX_TOPIC_CHARS}. Shorten it to the core question."
        )
    if "../" in cleaned or "..\\" in cleaned:
        raise InputError(
            "The topic contains a path component ('../' or '..\\'); remove path components "
            "and describe the subject in words."
        )
    return cleaned


def validate_corpus(path: str | Path) -> Path:
    """Check a local corpus and return its absolute path.

    A corpus is either a ``.jsonl`` file whose first non-blank line is a JSON object (one
    ``{id, title, url, text, source}`` document per line), or a folder holding at least one
    (non-hidden) file.

    Args:
        path: file or folder; ``~`` is expanded.

    Returns:
        The resolved path.

    Raises:
        CorpusError: missing path, wrong file type, empty file or folder, unreadable file, or a
            first line that is not a JSON object.
    """
    hint = "pass a .jsonl file (one JSON document per line) or a folder of documents"
    if path is None or (isinstance(path, str) and not path.strip()):
        raise CorpusError(f"No corpus path given; {hint}.")
    if not isinstance(path, (str, os.PathLike)):
        raise CorpusError(f"The corpus path must be a file path, not {type(path).__name__}.")
    text = os.fspath(path)
    if "\x00" in text:
        raise CorpusError(f"The corpus path contains a NUL character; {hint}.")
    try:
        p = Path(text).expanduser().resolve()
        exists, is_file, is_dir = p.exists(), p.is_file(), p.is_dir()
    except (OSError, RuntimeError, ValueError) as exc:
        raise CorpusError(f"Cannot use corpus path '{text[:200]}': {exc}; {hint}.") from exc
    if not exists:
        raise CorpusError(f"Corpus path '{p}' does not exist; {hint}.")
    if is_dir:
        _check_folder(p, hint)
    elif is_file:
        _check_jsonl(p, hint)
    else:
        raise CorpusError(f"Corpus path '{p}' is neither a file nor a folder; {hint}.")
    return p


def _check_folder(p: Path, hint: str) -> None:
    try:
        for _root, dirs, files in os.walk(p):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            if any(not f.startswith(".") for f in files):
                return
    except OSError as exc:
        raise CorpusError(f"Cannot read corpus folder '{p}': {exc}.") from exc
    raise CorpusError(f"Corpus folder '{p}' holds no documents; add files to it or {hint}.")


def _check_jsonl(p: Path, hint: str) -> None:
    if p.suffix.lower() != ".jsonl":
        raise CorpusError(f"Corpus file '{p.name}' is not a .jsonl file; {hint}.")
    try:
        with p.open("r", encoding="utf-8") as fh:
            for lineno, line in enumerate(  # noqa: B007 - lineno is read after the loop
                iter(lambda: fh.readline(_FIRST_LINE_LIMIT), ""), start=1
            ):
                if line.strip():
                    break
            else:
                raise CorpusError(f"Corpus file '{p}' is empty; {hint}.")
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"Corpus file '{p}' is not UTF-8 text ({exc.reason}); save it as UTF-8 JSONL."
        ) from exc
    except OSError as exc:
        raise CorpusError(
            f"Cannot read corpus file '{p}': {exc.strerror or exc}; check its permissions."
        ) from exc
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CorpusError(
            f"Corpus file '{p.name}' line {lineno} is not JSON ({exc.msg}); each line must be "
            'one JSON object such as {"id", "title", "url", "text", "source"}.'
        ) from exc
    if not isinstance(record, dict):
        raise CorpusError(
            f"Corpus file '{p.name}' line {lineno} is a JSON {type(record).__name__}, not an "
            'object; each line must be one document object with a "text" field.'
        )


def validate_int(name: str, value: int | str, lo: int, hi: int) -> int:
    """Return ``value`` as an int within ``[lo, hi]`` (inclusive).

    Accepts ints, integral floats and strings of an integer (as typed on a command line).

    Raises:
        InputError: not a whole number, a bool, or out of range; the message names ``name``
            and the allowed range.
    """
    expected = f"{name} must be a whole number from {lo} to {hi}"
    if isinstance(value, bool):
        raise InputError(f"{expected}; got {value}.")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            raise InputError(f"{expected}; got '{value[:40]}'.") from None
    else:
        raise InputError(f"{expected}; got {str(value)[:40]}.")
    if not lo <= number <= hi:
        raise InputError(f"{expected}; got {number}.")
    return number
