"""The one gate for a run's inputs: :func:`make_config` turns what a person typed into a
``RunConfig`` or raises an error that says what to fix.

Every front end calls it with the options as it received them: ``research run`` (its flags as
typed), ``POST /runs`` (the JSON body), the MCP tool ``start_research`` and the dashboard's
Launch form (``research.ui.launch_form.launch_config``); a batch checks each cell with the same
per-option checks (:func:`check_option_int`, :func:`check_engine_name`, :func:`check_depth`)
before each row goes through :func:`make_config`. So the same bad value gets the same message
and code wherever it was typed. The text rules of a topic and a corpus path are
``research.jobs.validation``; the checks of the other layers (templates, search backends,
models and budgets, dates, languages, notification targets) are called from here.

Nothing here writes a run: the data dir is only probed (a file created and removed).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from research import models as m
from research.config import load_settings
from research.engines.factory import check_engine
from research.errors import InputError
from research.jobs.validation import validate_corpus, validate_int, validate_topic
from research.llm.language import check_language as language_code
from research.llm.local import all_local
from research.llm.models import resolve_models
from research.llm.validate import validate_llm_options
from research.models import RunConfig
from research.notify import targets as notify_targets
from research.planning.syllabus import check_template
from research.search.multi import validate_search
from research.search.since import parse_since as since_window

# option → (the name an error message gives it, its inclusive range)
INT_OPTIONS: dict[str, tuple[str, tuple[int, int]]] = {
    "max_perspectives": ("max perspectives", m.PERSPECTIVES_RANGE),
    "max_turns": ("max turns", m.TURNS_RANGE),
    "min_databases": ("min databases", m.MIN_DATABASES_RANGE),
    "gap_turns": ("gap turns", m.GAP_TURNS_RANGE),
}


def make_config(
    topic: str,
    *,
    corpus: str | Path | None = None,
    template: str = "auto",
    review: bool = False,
    max_perspectives: int | str = 4,
    max_turns: int | str = 3,
    engine: str | None = "extractive",
    mode: str = "storm",
    costorm: dict | None = None,
    search: str | list[str] | None = None,
    corpora: str | list[str] | None = None,
    models: dict[str, str] | None = None,
    budget_usd: float | str | None = None,
    budget_tokens: int | str | None = None,
    min_databases: int | str = 1,
    cassette_mode: str | None = None,
    cassette_path: str | Path | None = None,
    gap_turns: int | str | None = None,
    depth: str = "standard",
    since: str | None = None,
    language: str | None = "en",
    notify: str | list[str] | None = None,
) -> RunConfig:
    """Validate user input into a RunConfig. Nothing is written.

    The checks go in this order, so a request with several mistakes is told about the first:
    the data dir, the topic, the engine, the template, the integer options, the depth, the mode
    (and plan review), the search choice, the corpus, then the Co-STORM settings, the models and
    budgets, the date window, the language, the engine's models and keys and the notification
    targets. Integer options may be ints or their text as typed (``"3"``); ``engine`` None
    means the extractive engine.

    ``mode``: "storm" or "costorm"; ``costorm``: Co-STORM settings (``CoStormSettings`` field
    names: experts, max_node_items, moderator_after, alpha, query_budget, max_turns).
    ``search``: backends (``"local,pubmed"`` or a list; default ``["local"]``); ``corpora``:
    ingested corpus names searched too (``research.search.multi.validate_search``).
    ``corpus`` (default ``settings.default_corpus``) is only required when the ``local`` backend
    is searched; otherwise it is checked when given and left empty when not. ``min_databases``:
    1–8 distinct source types ``check_completion`` requires (docs/design.md § Source collector;
    default 1 = off). ``template``: ``auto`` (default; a syllabus fitted to the topic), or a
    template name (``research.planning.syllabus.template_choices``).
    ``review``: stop in ``awaiting_review`` after planning (STORM mode only).
    ``cassette_mode`` ("record" / "replay") and ``cassette_path``: the run's LLM cassette.
    ``gap_turns``: rounds of gap searches for unmet questions after the planned turns (0–5; 0 =
    stop at the turn cap); None (not given): :func:`default_gap_turns`, 2, or
    ``RESEARCH_LOCAL_GAP_TURNS`` (0) for a run whose models are all local. ``depth``: report
    length, ``brief``, ``standard`` (default) or ``deep`` (about 300 / 1,000 / 2,500 words).
    ``since``: ``YYYY[-MM[-DD]]`` date window (``research.search.since``); ``language``: ISO 639-1
    code the litellm engine writes in (``research.llm.language``; the extractive engine cannot
    translate and says so).
    ``notify``: the run's notification targets (``--notify``; http(s) webhook or Apprise URLs, a
    list or one string separated by spaces, commas or newlines): the config keeps their
    redacted forms in ``notify`` and the URLs only in memory until ``create_run`` stores them
    encrypted (``research.notify.targets``). The notification settings are checked here too.

    Raises:
        InputError / CorpusError: with a message that says what to fix (codes
            ``invalid_input``, ``unknown_engine``, ``unknown_template``, ``corpus_error``,
            ``data_dir_unwritable``…).
    """
    # the costorm package imports the round-table pipeline: only its settings check is needed here
    from research.costorm.settings import validate_costorm, validate_mode  # noqa: PLC0415 - see above

    settings = load_settings()
    check_data_dir(settings.data_dir)
    topic = validate_topic(topic)
    engine = check_engine_name(engine or "extractive")
    template = check_template(template)  # raises with the valid names
    ints = {
        "max_perspectives": check_option_int("max_perspectives", max_perspectives),
        "max_turns": check_option_int("max_turns", max_turns),
        "min_databases": check_option_int("min_databases", min_databases),
    }
    if gap_turns not in (None, ""):
        ints["gap_turns"] = check_option_int("gap_turns", gap_turns)
    depth = check_depth(depth)
    mode = validate_mode(mode)
    if review and mode == "costorm":
        raise InputError(
            "Plan review is for STORM runs (the Co-STORM round-table has no plan to review); "
            "turn review off or use mode storm.",
            code="invalid_input",
        )
    backends, names = validate_search(search, corpora, settings)
    # a corpora-only run (no 'local' backend) needs no default corpus; an explicit one is still checked
    corpus_path = (
        validate_corpus(corpus or settings.default_corpus) if corpus or "local" in backends else ""
    )
    costorm_settings = validate_costorm(costorm)
    llm = validate_llm_options(engine, models, budget_usd, budget_tokens)
    ints.setdefault("gap_turns", default_gap_turns(engine, llm["models"]))
    config = RunConfig(
        topic=topic,
        corpus=str(corpus_path),
        template=template,
        review=bool(review),
        engine=engine,
        mode=mode,
        costorm=costorm_settings,
        **ints,
        search=backends,
        corpora=names,
        **llm,
        cassette_mode=cassette_mode or None,
        cassette_path=str(cassette_path or ""),
        depth=depth,
        since=parse_since(since),
        language=check_language(language),
    )
    check_engine(config)
    notify_targets.check_settings(settings)  # a bad RESEARCH_NOTIFY_ON / target URL, before any run
    return notify_targets.attach(config, notify_targets.check_targets(notify))


def default_gap_turns(engine: str, models: dict[str, str] | None = None) -> int:
    """The gap rounds of a run that names none: ``RESEARCH_LOCAL_GAP_TURNS`` (default 0) when
    the run's engine is litellm and every role's model is served locally
    (``research.llm.local.all_local``), else ``RunConfig``'s default, 2. A gap round is a turn
    per unmet question: on a small local model with 2 cores they made about 16 of a 2×2 run's
    20 turns, each a question, a reply and its summary cards. A hosted model's default is
    unchanged. A role without a model counts as not local (``check_engine`` reports it)."""
    hosted = int(m.RunConfig.model_fields["gap_turns"].default)
    if engine != "litellm":
        return hosted
    try:
        resolved = resolve_models(models)
    except InputError:
        return hosted
    return load_settings().local_gap_turns if all_local(resolved) else hosted


def check_option_int(name: str, value: Any) -> int:
    """One of the integer options of :data:`INT_OPTIONS` (``max_turns``...) as an int in its
    range; ``value`` may be an int or its text as typed.

    Raises:
        InputError: not a whole number or out of range, e.g. "max turns must be a whole number
            from 1 to 10; got 0."
    """
    label, (lo, hi) = INT_OPTIONS[name]
    return validate_int(label, value, lo, hi)


def check_engine_name(engine: Any) -> str:
    """``engine`` when it names an engine (``extractive`` or ``litellm``).

    Raises:
        InputError (code ``unknown_engine``): anything else; the message names the engines.
    """
    if engine not in m.ENGINES:
        raise InputError(
            f"Unknown engine {str(engine)[:40]!r}: use 'extractive' (offline) or 'litellm'.",
            code="unknown_engine",
        )
    return str(engine)


def check_depth(depth: Any) -> str:
    """``depth`` when it is a report depth (``brief``, ``standard`` or ``deep``).

    Raises:
        InputError: anything else; the message lists the depths.
    """
    if depth not in m.DEPTHS:
        raise InputError(
            f"Unknown report depth {str(depth)[:40]!r}: choose one of {', '.join(m.DEPTHS)}.",
            code="invalid_input",
        )
    return str(depth)


def parse_since(text: str | None) -> str | None:
    """``--since`` checked (``research.search.since.parse_since``)."""
    return since_window(text)


def check_language(code: str | None) -> str:
    """``--language`` checked (``research.llm.language.check_language``)."""
    return language_code(code)


def engine_options(
    engine: str | None, model: str | None = None, models: dict[str, str] | None = None
) -> dict[str, Any]:
    """``make_config`` keyword arguments for a run's engine and models, as ``research run``
    reads ``--engine``/``--model``/``--models``: ``model`` serves every role (``"*"``) under the
    per-role ``models``, and either implies the litellm engine unless ``engine`` names one.

    Returns:
        ``{"models": {...}, "engine": ...}``, ``{"engine": ...}`` without a model, or ``{}``.
    """
    merged = {**({"*": model.strip()} if model and model.strip() else {}), **(models or {})}
    if merged:
        return {"models": merged, "engine": engine or "litellm"}
    return {"engine": engine} if engine else {}


def check_data_dir(data_dir: Path) -> Path:
    """Make sure ``RESEARCH_DATA_DIR`` is a folder this process can write (created if missing;
    a probe file is written and removed).

    Raises:
        InputError (code ``data_dir_unwritable``): read-only, a file, or not creatable.
    """

    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".write-probe-"):
            pass
    except OSError as exc:
        raise InputError(
            f"The data dir '{data_dir}' is not a writable folder ({exc.strerror or exc}); set "
            "RESEARCH_DATA_DIR to a folder this process can write.",
            code="data_dir_unwritable",
        ) from None
    return data_dir
