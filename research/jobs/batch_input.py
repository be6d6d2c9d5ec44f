"""The input of a batch: a file (or pasted text) of topics with per-row options, checked whole
before anything is queued.

Two file kinds:

* **CSV** (``.csv``; ``.tsv`` for tab-separated): a header row with a ``topic`` column and
  optionally any of :data:`FIELDS` (the ``research run`` option names, ``max_turns`` or
  ``max-turns``). An empty cell means "the shared option, else the default".
* **Text** (any other name): one topic per line; blank lines and lines starting with ``#`` are
  skipped.

Every value is checked by the check ``research.jobs.make_config`` uses for it, with its message,
so an error names the line and the field (``line 4, field max_turns: ...``); then each row goes
through ``make_config`` itself (the one input gate). All errors are reported together and nothing is
queued while any remains.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from research.errors import InputError, ResearchError
from research.jobs.run_config import (
    INT_OPTIONS,
    check_depth,
    check_engine_name,
    check_language,
    check_option_int,
    make_config,
    parse_since,
)
from research.jobs.validation import validate_corpus, validate_topic
from research.llm.validate import parse_models
from research.models import RunConfig
from research.planning.syllabus import check_template
from research.search.multi import validate_backends

MAX_BATCH_RUNS = 200  # one batch; more is a mistake more often than a plan
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_ERRORS_SHOWN = 20
CHOICES = ("depth", "engine", "mode")
COSTORM = {  # batch column → Co-STORM setting (``research run`` flag names)
    "experts": "experts",
    "max_node_items": "max_node_items",
    "moderator_after": "moderator_after",
    "alpha": "alpha",
    "query_budget": "query_budget",
    "costorm_turns": "max_turns",
}
TEXT = ("corpus", "template", "search", "corpora", "since", "language", "model", "models")
NUMBERS = ("budget_usd", "budget_tokens")
FIELDS = (*INT_OPTIONS, *CHOICES, *TEXT, *NUMBERS, "review", *COSTORM)
_TRUE, _FALSE = {"1", "true", "yes", "y", "on"}, {"0", "false", "no", "n", "off", ""}


@dataclass
class BatchRow:
    """One topic of a batch: ``line`` in the file (1 = first line), the raw ``options``
    (column → cell text, empty cells left out)."""

    line: int
    topic: str
    options: dict[str, Any] = field(default_factory=dict)


def field_name(column: str) -> str:
    """A column or option name as a field: ``Max-Turns`` → ``max_turns``."""
    return column.strip().lower().replace("-", "_").replace(" ", "_")


def read_batch_file(path: str | Path) -> list[BatchRow]:
    """The rows of a batch file (CSV by its ``.csv``/``.tsv`` suffix, else one topic per line).

    Raises:
        InputError: missing or unreadable file, not UTF-8, over 2 MB, no topic, a CSV without a
            ``topic`` column or with an unknown column (the message lists the valid ones).
    """
    p = Path(path).expanduser()
    if not p.is_file():
        raise InputError(f"Batch file '{p}' does not exist; give a .csv or a text file of topics.")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise InputError(f"Batch file '{p.name}' is over 2 MB; split it into smaller batches.")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"Batch file '{p.name}' is not UTF-8 text ({exc.reason}); save it as UTF-8."
        ) from None
    except OSError as exc:
        raise InputError(f"Cannot read batch file '{p}': {exc.strerror or exc}.") from None
    suffix = p.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return parse_csv(text, delimiter="\t" if suffix == ".tsv" else ",")
    return parse_topics(text)


def parse_topics(text: str) -> list[BatchRow]:
    """One topic per line (blank and ``#`` lines skipped) as rows without options."""
    rows = [
        BatchRow(line=i, topic=line.strip())
        for i, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.strip().startswith("#")
    ]
    return _checked_count(rows)


def parse_csv(text: str, delimiter: str = ",") -> list[BatchRow]:
    """CSV rows (header first) as batch rows. Raises InputError as :func:`read_batch_file`."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = next(reader, None)
    names = [field_name(h) for h in header or []]
    if "topic" not in names:
        raise InputError(
            "line 1: the CSV header has no 'topic' column; the first line must name the columns, "
            f"e.g. topic,max_turns,depth (option columns: {', '.join(FIELDS)})."
        )
    unknown = [
        h for h, n in zip(header or [], names, strict=True) if n and n not in (*FIELDS, "topic")
    ]
    if unknown:
        raise InputError(
            f"line 1: unknown column(s) {', '.join(repr(u) for u in unknown)}; option columns "
            f"are {', '.join(FIELDS)}."
        )
    rows = []
    for cells in reader:
        line = reader.line_num
        if not any(c.strip() for c in cells):
            continue
        values = {n: c.strip() for n, c in zip(names, cells, strict=False) if n and c.strip()}
        rows.append(BatchRow(line=line, topic=values.pop("topic", ""), options=values))
    return _checked_count(rows)


def _checked_count(rows: list[BatchRow]) -> list[BatchRow]:
    if not rows:
        raise InputError("The batch has no topics; write one topic per line.")
    if len(rows) > MAX_BATCH_RUNS:
        raise InputError(
            f"The batch has {len(rows)} topics; at most {MAX_BATCH_RUNS} per batch. Split it."
        )
    return rows


def check_option(name: str, value: Any) -> Any:
    """One option checked by the validator ``make_config`` uses for it; returns the value to
    pass on (typed). ``name`` is a field of :data:`FIELDS`.

    Raises:
        InputError / CorpusError: the value is not valid (the message says why).
    """
    # the costorm package imports the round-table pipeline: only its mode check is needed here
    from research.costorm.settings import validate_mode  # noqa: PLC0415 - see above

    label = name.replace("_", " ")
    if name in INT_OPTIONS:
        return check_option_int(name, value)
    if name == "depth":
        return check_depth(value)
    if name == "engine":
        return check_engine_name(value)
    if name == "mode":
        return validate_mode(value)
    if name == "corpus":
        return str(validate_corpus(str(value)))
    if name == "template":
        return check_template(str(value))
    if name in ("search", "corpora"):
        names = validate_backends(value) if name == "search" else _names(value)
        return names
    if name == "since":
        return parse_since(str(value))
    if name == "language":
        return check_language(str(value))
    if name == "model":
        return {"*": str(value).strip()}
    if name == "models":
        return parse_models(str(value))
    if name == "review":
        return _bool(label, value)
    if name in NUMBERS or name in COSTORM:
        return _number(label, value, integer=name in ("budget_tokens",))
    raise InputError(f"Unknown option {name!r}; options are {', '.join(FIELDS)}.")


def _names(value: Any) -> list[str]:
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return [str(x).strip() for x in items if str(x).strip()]


def _bool(label: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE | _FALSE:
        return text in _TRUE
    raise InputError(f"{label} must be true or false (yes/no, 1/0); got {str(value)[:40]!r}.")


def _number(label: str, value: Any, *, integer: bool) -> float | int:
    try:
        number = float(str(value).strip())
    except ValueError:
        raise InputError(f"{label} must be a number; got {str(value)[:40]!r}.") from None
    if integer and not number.is_integer():
        raise InputError(f"{label} must be a whole number; got {str(value)[:40]!r}.")
    return int(number) if integer or number.is_integer() else number


def config_options(options: dict[str, Any]) -> dict[str, Any]:
    """Checked options (:func:`check_option` values) as ``make_config`` keyword arguments:
    ``model``/``models`` → ``models`` (and the litellm engine unless one is given), the Co-STORM
    columns → ``costorm``."""
    out: dict[str, Any] = {}
    models: dict[str, str] = {}
    costorm: dict[str, Any] = {}
    for name, value in options.items():
        if name in ("model", "models"):
            models.update(value)
        elif name in COSTORM:
            costorm[COSTORM[name]] = value
        else:
            out[name] = value
    if models:
        out["models"] = models
        out.setdefault("engine", "litellm")
    if costorm:
        out["costorm"] = costorm
    return out


def build_configs(rows: list[BatchRow], shared: dict[str, Any] | None = None) -> list[RunConfig]:
    """Every row as a ``RunConfig`` (its options over ``shared``, the batch-wide options by the
    same field names; None values in ``shared`` are left out). Nothing is written.

    Raises:
        InputError: one message listing every bad value (``option max_turns: ...`` for a shared
            one, ``line 4, field depth: ...`` for a row, ``line 4: ...`` for a row
            ``make_config`` refuses as a whole), at most 20 of them.
    """
    errors: list[str] = []
    base: dict[str, Any] = {}
    for name, value in (shared or {}).items():
        if value is None or value == "" or value == []:
            continue
        try:
            base[field_name(name)] = check_option(field_name(name), value)
        except ResearchError as exc:
            errors.append(f"option {field_name(name)}: {exc.message}")
    if errors:
        raise InputError(_joined(errors), code="invalid_batch")
    configs = []
    for row in rows:
        checked = dict(base)
        bad = False
        try:
            topic = validate_topic(row.topic)
        except ResearchError as exc:
            errors.append(f"line {row.line}, field topic: {exc.message}")
            continue
        for name, value in row.options.items():
            try:
                checked[name] = check_option(name, value)
            except ResearchError as exc:
                errors.append(f"line {row.line}, field {name}: {exc.message}")
                bad = True
        if bad:
            continue
        try:
            configs.append(make_config(topic, **config_options(checked)))
        except ResearchError as exc:
            errors.append(f"line {row.line}: {exc.message}")
    if errors:
        raise InputError(_joined(errors), code="invalid_batch")
    return configs


def _joined(errors: list[str]) -> str:
    shown = errors[:MAX_ERRORS_SHOWN]
    more = len(errors) - len(shown)
    tail = f"\n(and {more} more)" if more else ""
    head = "The batch was not queued; fix these and submit it again:\n"
    return head + "\n".join(f"- {e}" for e in shown) + tail
