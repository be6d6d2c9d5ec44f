"""Item 12 — report quality as an analyst reads it, offline, extractive engine.

Metrics: ``research.devtools.report_quality`` (definitions in its docstring): near-duplicate
sentence rate (MiniLM cosine >= 0.92 or same text), truncated-fragment rate (``…``/``...``,
no end punctuation, lower-case start), section fit (nearest ``"<topic>: <heading>"`` is the
sentence's own heading), questions answered (``report.questions``, when the Report has it),
citation integrity; plus STORM's heading soft recall from item 8.

Two sets of reports:

* **FreshWiki**: the reports item 8 writes (``bench.quality_bench``: each shared FreshWiki
  topic's article shuffled into a one-sentence-per-document corpus, extractive run, general
  template). Figures are means over topics. Baseline (same metrics, same code): the human
  Wikipedia article itself (``txt/<topic>.txt`` parsed by ``report_from_markdown``) — what a
  human editor's text scores. Its duplicate rate includes FreshWiki's own copy errors (e.g.
  Hurricane Hilary prints the Impact subsections twice).
* **Drug corpus**: the issue's acceptance run, ``research run "Trastuzumab in HER2-positive
  breast cancer" --corpus shared/data/corpus/docs.jsonl --template drug`` (CLI defaults: 4
  perspectives × 3 turns), on a private Redis and temp data dir; index cache from
  ``RESEARCH_INDEX_DIR`` (else ``.cache/bench/indexes``). Targets are the issue's "Done when":
  near-duplicates 0, truncated fragments 0, section fit >= 0.85, every syllabus question
  answered or stated insufficient, citation integrity 100 %, >= 25 sources, >= 10 citations.
"""

from __future__ import annotations

import os
from pathlib import Path

from bench.common import Figure, file_name, not_measured, scoped_env
from bench.redis_env import private_redis
from research.devtools.report_quality import measure, report_from_markdown
from research.jobs import make_config, run_foreground, run_summary
from research.models import Report, Syllabus
from research.search.embeddings import get_embedder
from research.store import open_store

DRUG_TOPIC = "Trastuzumab in HER2-positive breast cancer"
ITEM = 12
_KEYS = ("near_duplicate_rate", "truncated_fragment_rate", "section_fit", "questions_answered")
_REPO = Path(__file__).resolve().parents[1]


def summary(m: dict, examples: int = 3) -> dict:
    """The JSON-sized part of a ``measure`` result: figures, counts and a few example sentences."""
    q = m["questions"]
    return {
        **{
            k: m[k]
            for k in (*_KEYS, "sentences", "section_sentences", "citation_integrity", "references")
        },
        "questions": q,
        "addressed": q["addressed_share"] if q else None,
        "near_duplicates": m["near_duplicates"][:examples],
        "truncated_fragments": m["truncated_fragments"][:examples],
        "misplaced": m["misplaced"][:examples],
    }


def human_baseline(topic: str, folder: Path, encode) -> dict:
    """``summary(measure(...))`` of the FreshWiki article of ``topic`` (the human reference)."""

    txt = (folder / "txt" / f"{file_name(topic)}.txt").read_text(encoding="utf-8")
    return summary(measure(report_from_markdown(txt, topic), topic, encode))


def _mean(values: list) -> float | None:
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def freshwiki_figures(rows: list[dict], folder: Path) -> tuple[list[Figure], list[dict]]:
    """Figures over item 8's per-topic rows (each with ``report_quality``); adds the human baseline.

    Returns ``(figures, per-topic rows {topic, ours, human, soft_recall})``.
    """

    encode = get_embedder().encode
    done = [r for r in rows if r.get("status") == "complete" and r.get("report_quality")]
    out = [
        {
            "topic": r["topic"],
            "soft_recall": r.get("soft_recall"),
            "ours": r["report_quality"],
            "human": human_baseline(r["topic"], folder, encode),
        }
        for r in done
    ]
    if not out:
        return [
            not_measured(ITEM, "report.freshwiki", f"no completed FreshWiki topic of {len(rows)}")
        ], out
    n = f"{len(out)}/{len(rows)} FreshWiki topics, mean per topic"

    def ours(k):
        return _mean([r["ours"][k] for r in out])

    def human(k):
        return _mean([r["human"][k] for r in out])

    q = ours("questions_answered")
    figs = [
        Figure(
            ITEM,
            "report.freshwiki near-duplicate sentence rate",
            ours("near_duplicate_rate"),
            "",
            baseline=human("near_duplicate_rate"),
            baseline_label="human article",
            note=n,
        ),
        Figure(
            ITEM,
            "report.freshwiki truncated-fragment rate",
            ours("truncated_fragment_rate"),
            "",
            baseline=human("truncated_fragment_rate"),
            baseline_label="human article",
        ),
        Figure(
            ITEM,
            "report.freshwiki section fit",
            ours("section_fit"),
            "",
            baseline=human("section_fit"),
            baseline_label="human article",
            note="share of section sentences nearest (MiniLM) to their own '<topic>: <heading>'",
        ),
        Figure(
            ITEM,
            "report.freshwiki heading soft recall (mean)",
            _mean([r["soft_recall"] for r in out]),
            "",
            target=">= 0.827",
            target_on="value",
            note="item 8's figure; must not drop below 0.827",
        ),
    ]
    figs.append(
        Figure(
            ITEM,
            "report.freshwiki questions answered",
            q,
            "",
            note="share of report.questions answered",
        )
        if q is not None
        else not_measured(
            ITEM,
            "report.freshwiki questions answered",
            "the Report has no `questions` field in this version",
        )
    )
    return figs, out


def drug_run(corpus: Path, max_perspectives: int = 4, max_turns: int = 3) -> dict:
    """Run the trastuzumab drug-template topic (extractive) on a private Redis; returns its row:
    ``{topic, status, run_id, wall_s, sources, citations, syllabus, measure: summary(...)}``."""

    index_dir = os.environ.get("RESEARCH_INDEX_DIR") or str(_REPO / ".cache" / "bench" / "indexes")
    with (
        private_redis() as (url, d),
        scoped_env(RESEARCH_DATA_DIR=str(d / "data"), REDIS_URL=url, RESEARCH_INDEX_DIR=index_dir),
    ):
        state = run_foreground(
            make_config(
                DRUG_TOPIC,
                corpus=str(corpus),
                template="drug",
                max_perspectives=max_perspectives,
                max_turns=max_turns,
            )
        )
        row = {
            "topic": DRUG_TOPIC,
            "status": state.status,
            "run_id": state.run_id,
            "wall_s": state.wall_s,
            "error": state.error,
        }
        if state.status != "complete":
            return row
        store = open_store()
        report = store.get_doc(state.run_id, "report", Report)
        syllabus = store.get_doc(state.run_id, "syllabus", Syllabus)
        keys = syllabus.keys() if syllabus else []
        counts = run_summary(state.run_id)
        row.update(
            sources=counts["sources"],
            citations=counts["citations"],
            syllabus=keys,
            markdown=report.markdown,
            measure=summary(measure(report, DRUG_TOPIC, syllabus_keys=keys), examples=10),
        )
    return row


def drug_figures(row: dict) -> list[Figure]:
    """The issue-12 acceptance figures of ``drug_run``'s row (targets on the value)."""
    if row.get("status") != "complete":
        return [
            not_measured(
                ITEM, "report.drug run", f"run ended {row.get('status')}: {row.get('error')}"
            )
        ]
    m = row["measure"]
    note = (
        f"{DRUG_TOPIC!r}, --template drug, extractive; {m['sentences']} sentences, "
        f"{row['sources']} sources, {row['citations']} citations"
    )
    figs = [
        Figure(
            ITEM,
            "report.drug near-duplicate sentence rate",
            m["near_duplicate_rate"],
            "",
            target="<= 0",
            target_on="value",
            note=note,
        ),
        Figure(
            ITEM,
            "report.drug truncated-fragment rate",
            m["truncated_fragment_rate"],
            "",
            target="<= 0",
            target_on="value",
        ),
        Figure(
            ITEM,
            "report.drug section fit",
            m["section_fit"],
            "",
            target=">= 0.85",
            target_on="value",
        ),
        Figure(
            ITEM,
            "report.drug citation integrity",
            100.0 if m["citation_integrity"] else 0.0,
            "%",
            target=">= 100",
            target_on="value",
        ),
        Figure(
            ITEM,
            "report.drug sources",
            float(row["sources"]),
            "",
            target=">= 25",
            target_on="value",
        ),
        Figure(
            ITEM,
            "report.drug citations",
            float(row["citations"]),
            "",
            target=">= 10",
            target_on="value",
        ),
    ]
    q = m["questions"]
    if q is None:
        figs.append(
            not_measured(
                ITEM,
                "report.drug questions answered or stated insufficient",
                f"the Report has no `questions` field in this version "
                f"({len(row['syllabus'])} syllabus questions)",
                target=">= 1",
            )
        )
    else:
        figs.append(
            Figure(
                ITEM,
                "report.drug questions answered or stated insufficient",
                q["addressed_share"],
                "",
                target=">= 1",
                target_on="value",
                note=f"{q['answered']} answered, {q['stated_insufficient']}/{q['insufficient']} "
                f"insufficient stated, missing {q['missing']}",
            )
        )
    return figs


def run(
    freshwiki_rows: list[dict],
    folder: Path,
    corpus: Path,
    max_perspectives: int = 4,
    max_turns: int = 3,
) -> tuple[list[Figure], dict]:
    """Item 12: FreshWiki figures from item 8's rows, then the drug run. Returns
    ``(figures, {"freshwiki": per-topic rows, "drug": drug row})`` for the results JSON."""
    figs, fw = freshwiki_figures(freshwiki_rows, folder)
    drug = drug_run(corpus, max_perspectives, max_turns)
    return figs + drug_figures(drug), {"freshwiki": fw, "drug": drug}
