"""Coverage responses of the source collector (docs/design.md § Collector tools).

Pure functions from a syllabus and per-question source counts to the flat, ✓/⚠, actionable
dicts that ``get_progress`` and ``check_completion`` return, plus ``fit_response``, which keeps
every agent-facing response under 500 characters (docs/design.md § Collector tools)
by dropping the least useful entries first. No Redis here; ``research.store.collector`` reads
the counts and calls these.
"""

from __future__ import annotations

import json
from typing import Any

from research.models import Syllabus

MAX_RESPONSE_CHARS = 500  # docs/design.md § Collector tools: all responses < 500 chars
NEXT_FOCUS_MAX = 3
TYPE_NAMES = {
    "pubmed": "PubMed",
    "clinicaltrials.gov": "ClinicalTrials.gov",
    "clinicaltrials": "ClinicalTrials.gov",
    "chembl": "ChEMBL",
    "wikipedia": "Wikipedia",
    "web": "Web",
    "local": "Local",
}


def display_type(source_type: str) -> str:
    """Human name of a source type for messages: ``"pubmed"`` → ``"PubMed"``."""
    return TYPE_NAMES.get(source_type, source_type[:24])


def plural(n: int, word: str) -> str:
    """``plural(1, "source")`` → ``"1 source"``; ``plural(3, "source")`` → ``"3 sources"``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def response_chars(resp: dict[str, Any]) -> int:
    """Length of ``resp`` as the agent sees it: JSON with ``ensure_ascii=False``, in characters."""
    return len(json.dumps(resp, ensure_ascii=False))


def fit_response(
    resp: dict[str, Any], trims: list[tuple[str, list[Any]]], limit: int = MAX_RESPONSE_CHARS
) -> dict[str, Any]:
    """Trim ``resp`` in place until its JSON is under ``limit`` characters (docs/design.md § Collector tools).

    ``trims`` is ``[(field, items in drop order), ...]``: entries of the dict or list
    ``resp[field]`` are dropped in that order (least useful first) and ``resp["truncated"]``
    records how many were dropped per field. Strings over 120 characters are clipped last.
    """
    dropped: dict[str, int] = {}

    def size() -> int:
        return response_chars({**resp, "truncated": dropped} if dropped else resp)

    for field, order in trims:
        for item in order:
            if size() < limit:
                break
            container = resp[field]
            if isinstance(container, dict):
                container.pop(item, None)
            elif item in container:
                container.remove(item)
            dropped[field] = dropped.get(field, 0) + 1
    if dropped:
        resp["truncated"] = dropped
    for k, v in list(resp.items()):
        if size() >= limit and isinstance(v, str) and len(v) > 120:
            resp[k] = v[:119] + "…"
    return resp


def deficits(syllabus: Syllabus, counts: dict[str, int]) -> dict[str, int]:
    """``key → sources still needed`` for unmet questions, largest first (ties: syllabus order)."""
    need = {q.key: q.min_sources - counts.get(q.key, 0) for q in syllabus.questions}
    return dict(sorted(((k, n) for k, n in need.items() if n > 0), key=lambda kv: -kv[1]))


def _topic(label: str) -> str:
    """Label as running text: lowercase except acronyms (``"IP Coverage"`` → ``"IP coverage"``)."""
    return " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in label.split())[:40]


def progress_report(syllabus: Syllabus, counts: dict[str, int], total: int) -> dict[str, Any]:
    """Seed 000 ``get_progress`` response from per-question counts (pure; < 500 chars).

    Returns ``{"total", "questions": {key: "✓ 8 sources" | "⚠ 2 sources (need 3 more)"},
    "summary": "3/6 questions complete, 22 more sources needed", "next_focus": [keys]}`` where
    ``next_focus`` holds up to 3 unmet keys with the largest deficit first.
    """
    gaps = deficits(syllabus, counts)
    lines = {}
    for q in syllabus.questions:
        have = plural(counts.get(q.key, 0), "source")
        lines[q.key] = f"⚠ {have} (need {gaps[q.key]} more)" if q.key in gaps else f"✓ {have}"
    done, n = len(syllabus.questions) - len(gaps), len(syllabus.questions)
    needed = sum(gaps.values())
    summary = f"{done}/{n} questions complete, " + (
        f"{plural(needed, 'more source')} needed" if needed else "no more sources needed"
    )
    resp: dict[str, Any] = {
        "total": total,
        "questions": lines,
        "summary": summary,
        "next_focus": list(gaps)[:NEXT_FOCUS_MAX],
    }
    met = [q.key for q in reversed(syllabus.questions) if q.key not in gaps]
    return fit_response(
        resp,
        [
            ("questions", met + list(reversed(gaps))),
            ("next_focus", list(reversed(resp["next_focus"]))),
        ],
    )


def completion_report(
    syllabus: Syllabus,
    counts: dict[str, int],
    *,
    source_types: list[str] | None = None,
    min_databases: int = 1,
) -> dict[str, Any]:
    """Seed 000 ``check_completion`` response (pure; < 500 chars).

    Returns ``{"ready": bool, "progress": "3/6 questions complete (50%)", "missing": {key:
    "Need 3 more sources (currently 2/5)"}, "suggestion": "Focus on ..."}``; ``missing`` is in
    syllabus order; the suggestion names the (up to) two questions with the largest deficit.
    With ``min_databases`` > 1 (docs/design.md § Completion "Sources span multiple databases"), ``source_types``
    (distinct types saved) must number at least that; ``"databases": "1/2 databases (PubMed)"``
    is added and ``ready`` is False below it.
    """
    gaps = deficits(syllabus, counts)
    n = len(syllabus.questions)
    done = n - len(gaps)
    missing = {
        q.key: f"Need {plural(gaps[q.key], 'more source')} (currently {counts.get(q.key, 0)}/{q.min_sources})"
        for q in syllabus.questions
        if q.key in gaps
    }
    if gaps:
        asked = [syllabus.get(k) for k in list(gaps)[:2]]
        labels = [_topic(q.label) for q in asked if q is not None]
        suggestion = f"Focus on {' and '.join(labels)}"
    else:
        suggestion = f"All {plural(n, 'question')} have enough sources; you can finish."
    resp = {
        "ready": not gaps,
        "progress": f"{done}/{n} questions complete ({round(100 * done / n)}%)",
        "missing": missing,
        "suggestion": suggestion,
    }
    # docs/design.md § Source collector: criterion "Sources span multiple databases"
    if min_databases > 1:
        have = list(source_types or [])
        names = ", ".join(display_type(t) for t in have) or "none"
        resp["databases"] = f"{len(have)}/{min_databases} databases ({names})"
        if len(have) < min_databases:
            resp["ready"] = False
            if not gaps:
                resp["suggestion"] = (
                    f"Search {plural(min_databases - len(have), 'more database')} for sources"
                )
    return fit_response(resp, [("missing", list(reversed(gaps)))])
