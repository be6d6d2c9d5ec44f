"""Item 20 — evidence per question on real runs (extractive engine, shared corpus, defaults).

Runs, each on a private Redis with the bench's index cache:

* the drug run ``research run "Trastuzumab in HER2-positive breast cancer" --template drug``
  (defaults: 4 perspectives × 3 turns, 2 gap rounds, depth standard);
* the focused run "Trastuzumab cardiotoxicity in HER2-positive breast cancer" (``--template
  auto``, defaults);
* the drug run at ``--depth brief`` and ``--depth deep``.

Per run (``research.devtools.evidence_checks`` + ``research.devtools.report_quality``): whether
the coverage chart, ``report.questions`` and the text agree on every question, sources counted
without a passage, questions answered, distinct sources cited, words, gap rounds, the
evidence-based section fit (share of question-section sentences whose evidence score for their
own question passes the bar: a figure the topic's words cannot satisfy), near-duplicates,
truncated fragments and citation integrity. Targets are the acceptance figures of the evidence
work: agreement on every question, 0 sources without evidence, ≥ 20 distinct sources on the drug
run, ≥ 4 questions answered on the cardiotoxicity run, deep ≥ 2 × brief words.
"""

from __future__ import annotations

import os
from pathlib import Path

from bench.common import Figure, scoped_env

ITEM = 20
DRUG = "Trastuzumab in HER2-positive breast cancer"
CARDIO = "Trastuzumab cardiotoxicity in HER2-positive breast cancer"
_REPO = Path(__file__).resolve().parents[1]


def one_run(corpus: Path, topic: str, template: str, **options) -> dict:
    """Run ``topic`` on a private Redis; returns the checks, the quality measure and the
    markdown (``{topic, status, run_id, wall_s, checks, measure, markdown}``)."""
    from bench.redis_env import private_redis  # noqa: PLC0415 - bench modules load what their item needs, when it runs

    index_dir = os.environ.get("RESEARCH_INDEX_DIR") or str(_REPO / ".cache" / "bench" / "indexes")
    with (
        private_redis() as (url, d),
        scoped_env(RESEARCH_DATA_DIR=str(d / "data"), REDIS_URL=url, RESEARCH_INDEX_DIR=index_dir),
    ):
        from research.devtools.evidence_checks import evidence_checks  # noqa: PLC0415 - bench modules load what their item needs, when it runs
        from research.devtools.report_quality import measure  # noqa: PLC0415 - bench modules load what their item needs, when it runs
        from research.jobs import make_config, run_foreground  # noqa: PLC0415 - bench modules load what their item needs, when it runs
        from research.models import Report, Syllabus  # noqa: PLC0415 - bench modules load what their item needs, when it runs
        from research.store import open_store  # noqa: PLC0415 - bench modules load what their item needs, when it runs

        state = run_foreground(make_config(topic, corpus=str(corpus), template=template, **options))
        row: dict = {"topic": topic, "options": options, "status": state.status}
        row.update(run_id=state.run_id, wall_s=state.wall_s, error=state.error)
        if state.status != "complete":
            return row
        store = open_store()
        report = store.get_doc(state.run_id, "report", Report)
        syllabus = store.get_doc(state.run_id, "syllabus", Syllabus)
        m = measure(report, topic, syllabus_keys=syllabus.keys() if syllabus else None)
        row.update(
            checks=evidence_checks(store, state.run_id),
            measure={
                k: m[k]
                for k in (
                    "near_duplicate_rate",
                    "truncated_fragment_rate",
                    "section_fit",
                    "citation_integrity",
                    "sentences",
                )
            },
            markdown=report.markdown,
        )
    return row


def _figs(label: str, row: dict) -> list[Figure]:
    if row.get("status") != "complete":
        return [
            Figure(ITEM, f"evidence.{label}.status", None, status="not measured", note=str(row))
        ]
    c, m = row["checks"], row["measure"]
    return [
        Figure(
            ITEM,
            f"evidence.{label}.agree_all",
            float(c["agree_all"]),
            target=">= 1",
            target_on="value",
        ),
        Figure(
            ITEM,
            f"evidence.{label}.sources_without_evidence",
            float(c["sources_without_evidence"]),
            target="<= 0",
            target_on="value",
        ),
        Figure(ITEM, f"evidence.{label}.questions_answered", float(c["answered"])),
        Figure(ITEM, f"evidence.{label}.cited_sources", float(c["cited_sources"])),
        Figure(ITEM, f"evidence.{label}.words", float(c["words"])),
        Figure(ITEM, f"evidence.{label}.gap_rounds", float(c["gap_rounds"])),
        Figure(ITEM, f"evidence.{label}.evidence_fit", c["evidence_fit"]),
        Figure(ITEM, f"evidence.{label}.cosine_section_fit", m["section_fit"]),
        Figure(
            ITEM,
            f"evidence.{label}.near_duplicate_rate",
            m["near_duplicate_rate"],
            target="<= 0",
            target_on="value",
        ),
        Figure(
            ITEM,
            f"evidence.{label}.truncated_fragment_rate",
            m["truncated_fragment_rate"],
            target="<= 0",
            target_on="value",
        ),
        Figure(
            ITEM,
            f"evidence.{label}.citation_integrity",
            float(bool(m["citation_integrity"])),
            target=">= 1",
            target_on="value",
        ),
    ]


def run(corpus: Path) -> tuple[list[Figure], list[dict]]:
    """The four runs and their figures; rows for the results JSON (markdown included, so the
    reports can be read afterwards)."""
    rows = {
        "drug": one_run(corpus, DRUG, "drug"),
        "cardio": one_run(corpus, CARDIO, "auto"),
        "brief": one_run(corpus, DRUG, "drug", depth="brief"),
        "deep": one_run(corpus, DRUG, "drug", depth="deep"),
    }
    figs: list[Figure] = []
    for label, row in rows.items():
        figs += _figs(label, row)
    done = {k: r for k, r in rows.items() if r.get("status") == "complete"}
    if "drug" in done:
        figs.append(
            Figure(
                ITEM,
                "evidence.drug.cited_sources_target",
                float(done["drug"]["checks"]["cited_sources"]),
                target=">= 20",
                target_on="value",
            )
        )
    if "cardio" in done:
        figs.append(
            Figure(
                ITEM,
                "evidence.cardio.answered_target",
                float(done["cardio"]["checks"]["answered"]),
                target=">= 4",
                target_on="value",
            )
        )
    if "brief" in done and "deep" in done:
        brief, deep = done["brief"]["checks"]["words"], done["deep"]["checks"]["words"]
        figs.append(
            Figure(
                ITEM,
                "evidence.deep_over_brief_words",
                float(deep),
                baseline=float(brief),
                target=">= 2",
                target_on="ratio",
            )
        )
    return figs, list(rows.values())
