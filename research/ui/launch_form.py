"""Launch-form logic: choices offered for every ``RunConfig`` field, the form's values as
keyword arguments of the input gate (:func:`form_values`) and its validator
(:func:`launch_config`), which is ``jobs.make_config``: the form says what to fix in the words
``research run``, the HTTP API and MCP use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from research import jobs
from research.llm.models import resolve_models
from research.models import (  # noqa: F401 - MODES and the ranges: the form's limits (RunConfig)
    MODES,
    PERSPECTIVES_RANGE,
    TURNS_RANGE,
    RunConfig,
    TemplateName,
)

ROLES = ("planner", "question_asker", "expert", "compressor", "outline", "writer", "polish")
SEARCH_BACKENDS = (
    "local",
    "wikipedia",
    "pubmed",
    "clinicaltrials",
    "brave",
    "tavily",
    "serper",
    "searxng",
)
TEMPLATE_LABELS: dict[TemplateName, str] = {
    "auto": "auto (fitted to the kind of question)",
    "comparison": "comparison (A versus B in a setting)",
    "condition": "condition (causes, treatment, prognosis)",
    "device": "device or procedure",
    "drug": "drug (six drug questions)",
    "event": "event (what happened, impact, causes)",
    "general": "general",
    "intervention": "intervention (for a condition or outcome)",
    "person": "person or organisation (life and work)",
}
MODE_LABELS = {"storm": "STORM", "costorm": "Co-STORM"}
MODE_HELP = (
    "STORM: perspective-guided WikiWriter ↔ expert conversations, then an outline and a cited report. "
    "Co-STORM: a moderated round-table of experts that builds a mind map (N, K, L, α below)."
)

# Help texts for the Co-STORM fields, named as in the Co-STORM paper (Jiang et al. 2024, §3–4;
# docs/design.md § Co-STORM round-table).
COSTORM_HELP = {
    "experts": "N — number of LLM experts generated at the warm start from the background search "
    "(paper default N = 3); they take turns in round robin.",
    "max_node_items": "K — maximum information items per mind-map concept; a node holding more than K is "
    "reorganized into new subtopics (paper default K = 10).",
    "moderator_after": "L — number of consecutive answer turns (potential answer / further details) after "
    "which the moderator speaks with a new question (paper default L = 2).",
    "alpha": "α — rerank exponent for the moderator: score = cos(i, topic)^α · (1 − cos(i, question))^(1−α) "
    "over the unused information (paper default α = 0.5).",
    "query_budget": "Search queries the round-table may issue in total; it stops when they are used "
    "(default 30).",
    "max_turns": "Turn cap: round-table turns after the warm start; it stops when reached (default 20). "
    "It also stops earlier when every syllabus question is covered.",
}


def named_corpora(data_dir: Path) -> list[str]:
    """Folder names under ``{data_dir}/corpora/`` (ingested corpora), sorted; [] when none."""
    root = Path(data_dir) / "corpora"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def default_models(llm_model: str | None) -> dict[str, str]:
    """Role → model pre-filled in the form: ``research.llm.models.resolve_models`` when it can
    resolve every role from the environment, else ``llm_model`` (or "") for each role."""
    try:
        return resolve_models({})
    except Exception:
        return {r: llm_model or "" for r in ROLES}


def launch_config(topic: str, values: dict[str, Any]) -> RunConfig:
    """The Launch form's validator: the run's config from the typed ``topic`` and the form's
    ``values`` (:func:`form_values`, plus ``since`` and ``language``), through the one input
    gate, ``jobs.make_config``. Nothing is written.

    Raises:
        InputError / CorpusError: the message the page shows, the same as ``research run``
            and the HTTP API give for the same value.
    """
    return jobs.make_config(topic, **values)


def form_values(
    *,
    corpus: str,
    template: str,
    max_perspectives: int,
    max_turns: int,
    engine: str,
    mode: str,
    search: list[str],
    corpora: list[str],
    models: dict[str, str] | None = None,
    budget_usd: float | None = None,
    budget_tokens: int | None = None,
    costorm: dict | None = None,
    min_databases: int = 1,
    review: bool = False,
    gap_turns: int | None = None,
    depth: str = "standard",
    notify: str = "",
) -> dict[str, Any]:
    """The form's values as ``make_config`` keyword arguments (models/budgets only for litellm,
    ``costorm`` only for Co-STORM; empty model names dropped; zero budgets mean no cap; an empty
    ``search`` is passed through: the input gate makes it ``["local"]`` unless corpora are chosen;
    ``review``: stop for plan review after planning; ``gap_turns``: rounds of gap searches for
    unmet questions (None, the field left empty: the run's default, 2 or
    ``RESEARCH_LOCAL_GAP_TURNS`` for a run whose models are all local); ``depth``: report
    length; ``notify``: the notification targets typed in the form, one URL a line, passed only
    when there is one)."""
    values: dict[str, Any] = {
        "corpus": corpus,
        "template": template,
        "max_perspectives": int(max_perspectives),
        "max_turns": int(max_turns),
        "engine": engine,
        "mode": mode,
        "search": list(search),
        "corpora": list(corpora),
        "min_databases": int(min_databases),
        "review": bool(review),
        "gap_turns": None if gap_turns is None else int(gap_turns),
        "depth": depth,
    }
    if engine == "litellm":
        values["models"] = {r: m.strip() for r, m in (models or {}).items() if m and m.strip()}
        values["budget_usd"] = float(budget_usd) if budget_usd else None
        values["budget_tokens"] = int(budget_tokens) if budget_tokens else None
    if mode == "costorm" and costorm is not None:
        values["costorm"] = dict(costorm)
    if notify and notify.strip():
        values["notify"] = [line.strip() for line in notify.splitlines() if line.strip()]
    return values


DEPTH_LABELS = {
    "brief": "Brief (~300 words)",
    "standard": "Standard (~1,000 words)",
    "deep": "Deep (~2,500 words)",
}
NOTIFY_HELP = (
    "One URL a line. An http(s) URL receives a signed JSON POST (a webhook); an Apprise URL "
    "posts to Slack (slack://…), Microsoft Teams (msteams://…), e-mail (mailto://…) and more. "
    "Sent when the run completes, fails or waits for plan review. The URLs are stored "
    "encrypted; the run shows only their redacted form."
)
GAP_HELP = (
    "After the planned turns, rounds of searches aimed at the syllabus questions still without "
    "enough evidence (up to 6 queries per question). 0 stops research at the turn cap; empty: "
    "2, or 0 when every model is local (RESEARCH_LOCAL_GAP_TURNS)."
)
