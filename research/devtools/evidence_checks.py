"""Checks that the coverage chart, ``report.questions`` and the report text say the same thing
about each syllabus question, and an evidence-based section fit that can fail.

``evidence_checks(store, run_id)`` returns a dict (used by the bench and the tests):

* ``questions``: per question ``{key, chart_met, report_answered, text_answered, agree,
  sources_counted, sources_without_evidence, passages, stop_reason}``: *chart* is the design's
  (docs/design.md § Source collector) count of sources with evidence against ``min_sources``;
  *report* is ``Report.questions``' status; *text* is whether the question's section states that it is not answered
  (``UNMET_MARK``);
* ``agree_all``: every question agrees three ways; ``sources_without_evidence``: sources counted
  for a question without a passage for it in ``report.questions[].evidence`` (must be 0);
* ``cited_sources`` (references), ``words`` (lead + sections, citation markers removed);
* ``gap_rounds``: ``gap.round`` events of the run;
* ``evidence_fit``: the share of the sentences of question sections (the unmet statement
  excluded) whose ``evidence_score`` for their own question is ≥ ``EVIDENCE_MIN`` — unlike
  cosine to "topic: heading", a sentence that merely names the topic scores low, so this figure
  can fail; ``misfit``: a few sentences below the bar.
"""

from __future__ import annotations

import re
from typing import Any

from research import citations
from research.devtools.report_quality import markdown_sentences
from research.evidence.judge import EVIDENCE_MIN, score_passages
from research.models import Question, Report, Syllabus
from research.store.runs import RunStore
from research.text.vectors import Vectors

UNMET_MARK = " is not answered: "


def _plain(text: str) -> str:
    return citations.LOCAL_RE.sub("", citations.DRAFT_RE.sub("", text)).strip()


def _sentences(text: str) -> list[str]:
    return [s for s in markdown_sentences(_plain(text)) if s.strip()]


def evidence_checks(store: RunStore, run_id: str, vectors: Vectors | None = None) -> dict:
    """The checks of the module docstring for a complete STORM run.

    Raises:
        ValueError: the run has no report or no syllabus yet.
    """
    report = store.get_doc(run_id, "report", Report)
    syllabus = store.get_doc(run_id, "syllabus", Syllabus)
    if report is None or syllabus is None:
        raise ValueError(f"run {run_id} has no report or syllabus yet")
    topic = store.get_run(run_id).config.topic
    collector = store.collector(run_id)
    counts = collector.question_counts()
    finalized = collector.finalize_sources()["questions"]
    by_key = {q.key: q for q in report.questions}
    section_text = {s.heading: s.text for s in report.sections}
    rows: list[dict[str, Any]] = []
    fit_pairs: list[tuple[Question, str]] = []
    for q in syllabus.questions:
        rq = by_key.get(q.key)
        text = section_text.get(rq.heading, "") if rq else ""
        counted = [s["source_id"] for s in finalized.get(q.key, {}).get("sources", [])]
        with_ev = {p.source_id for p in (rq.evidence if rq else []) if p.question == q.key}
        chart = counts.get(q.key, 0) >= q.min_sources
        answered = bool(rq and rq.status == "answered")
        text_answered = bool(text.strip()) and f"{q.label}{UNMET_MARK}" not in text
        rows.append(
            {
                "key": q.key,
                "chart_met": chart,
                "report_answered": answered,
                "text_answered": text_answered,
                "agree": chart == answered == text_answered,
                "sources_counted": len(counted),
                "sources_without_evidence": [s for s in counted if s not in with_ev],
                "passages": len(rq.evidence) if rq else 0,
                "stop_reason": rq.stop_reason if rq else "",
            }
        )
        fit_pairs += [(q, s) for s in _sentences(text) if UNMET_MARK not in f" {s}"]
    fit, misfit = None, []
    if fit_pairs:
        vectors = vectors or Vectors()
        scores = [
            float(score_passages([q], [s], topic=topic, vectors=vectors)[0, 0])
            for q, s in fit_pairs
        ]
        fit = sum(s >= EVIDENCE_MIN for s in scores) / len(scores)
        misfit = [
            {"question": q.key, "sentence": s, "score": round(v, 3)}
            for (q, s), v in zip(fit_pairs, scores, strict=True)
            if v < EVIDENCE_MIN
        ][:10]
    body = " ".join([report.lead, *[s.text for s in report.sections]])
    events = store.events(run_id)
    return {
        "questions": rows,
        "agree_all": all(r["agree"] for r in rows),
        "answered": sum(r["report_answered"] for r in rows),
        "sources_without_evidence": sum(len(r["sources_without_evidence"]) for r in rows),
        "cited_sources": len(report.references),
        "words": len(re.findall(r"\b\w[\w'-]*\b", _plain(body))),
        "gap_rounds": sum(1 for e in events if e.type == "gap.round"),
        "evidence_fit": fit,
        "misfit": misfit,
    }
