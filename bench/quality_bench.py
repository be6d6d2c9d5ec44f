"""Item 8 — report quality, offline, on FreshWiki (STORM paper §5 metrics).

For each topic of a FreshWiki-layout folder (``topic_list.csv``, ``json/<File>.json``,
``txt/<File>.txt``): the article's sentences (lead + every section, headings removed) are
shuffled (seed 8) and written as a one-sentence-per-document JSONL corpus; the extractive
pipeline runs on it (``research.jobs.make_config`` + ``run_foreground``, temp data dir, private
Redis); the outline is scored against the article's headings with STORM's heading soft recall
(``bench.metrics.heading_soft_recall``), the report with ROUGE-1 / ROUGE-L F1 against the
article text (``rouge-score``, Porter stemming, as STORM's ``compute_rouge_scores``), and the
final citations with ``research.citations.check_integrity`` (must be 100% sound). Each
row also carries ``report_quality`` (``research.devtools.report_quality``) for item 12.

Golden headings follow STORM's ``get_sections``: every ``#`` line of the txt file, stopping at
References / External links / See also / Notes. Predicted headings: the outline's sections and
subsections. Baseline (same run): the soft recall of a trivial outline, the article's 4 most
common generic Wikipedia headings ``Background, History, Aftermath, Reception`` — so the ratio
says how much better than a topic-blind outline the engine does.
"""

from __future__ import annotations

import csv
import json
import random
import re
from pathlib import Path

from bench.common import Figure, file_name, scoped_env
from bench.metrics import heading_soft_recall
from bench.redis_env import private_redis
from bench.report_quality_bench import summary
from research.citations import check_integrity
from research.devtools.report_quality import measure
from research.jobs import make_config, run_foreground
from research.models import Outline, Report
from research.search.embeddings import get_embedder
from research.store.connection import get_redis
from research.store.runs import RunStore

GENERIC_OUTLINE = ["Background", "History", "Aftermath", "Reception"]
_STOP = ("references", "external links", "see also", "notes")
_SENT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def topics(folder: Path) -> list[str]:
    """Topics listed in ``folder/topic_list.csv`` whose json and txt files exist."""
    with (folder / "topic_list.csv").open(encoding="utf-8") as fh:
        names = [row["topic"] for row in csv.DictReader(fh)]
    return [
        t
        for t in names
        if (folder / "json" / f"{file_name(t)}.json").is_file()
        and (folder / "txt" / f"{file_name(t)}.txt").is_file()
    ]


def golden_headings(txt: str) -> list[str]:
    """STORM ``get_sections``: ``#`` lines until a References-like heading."""
    out = []
    for line in txt.splitlines():
        line = line.strip()
        if line.startswith("#"):
            h = line.strip("#").strip()
            if h.lower().startswith(_STOP):
                break
            out.append(h)
    return out


def _terminated(sentence: str) -> str:
    """The sentence with the full stop FreshWiki's json dropped: its section sentences were split
    on ". " and stored without it ("… entered the far eastern Pacific"), unlike the article's
    txt; a document of the bench corpus carries the sentence as the article prints it."""
    s = sentence.strip()
    return s if not s or s[-1] in ".!?\"'”’)" else s + "."


def article_sentences(article: dict) -> list[str]:
    """Every sentence of a FreshWiki json article (lead, then sections depth-first), no headings,
    each ending in its full stop (``_terminated``)."""
    out = [_terminated(s) for s in _SENT.split(article.get("summary") or "") if s.strip()]

    def walk(sections: list[dict]) -> None:
        for sec in sections:
            out.extend(
                _terminated(x["sentence"])
                for x in sec.get("section_content", [])
                if x.get("sentence", "").strip()
            )
            walk(sec.get("subsections", []))

    walk(article.get("content", []))
    return out


def write_corpus(topic: str, sentences: list[str], path: Path, seed: int = 8) -> Path:
    """Shuffled one-sentence documents; titles carry no heading (``<topic> — passage n``)."""
    order = list(range(len(sentences)))
    random.Random(seed).shuffle(order)
    slug = file_name(topic)
    with path.open("w", encoding="utf-8") as fh:
        for n, i in enumerate(order, 1):
            fh.write(
                json.dumps(
                    {
                        "id": f"fw:{slug}:{n}",
                        "title": f"{topic} — passage {n}",
                        "url": f"https://bench.invalid/{slug}/{n}",
                        "text": sentences[i],
                        "source": "web",
                    }
                )
                + "\n"
            )
    return path


def score_topic(
    topic: str, folder: Path, work: Path, max_perspectives: int, max_turns: int
) -> dict:
    """Run the extractive pipeline on one topic's shuffled sentences; returns its scores."""
    from rouge_score import rouge_scorer  # noqa: PLC0415 - the bench extra (make bench installs it)

    article = json.loads((folder / "json" / f"{file_name(topic)}.json").read_text(encoding="utf-8"))
    txt = (folder / "txt" / f"{file_name(topic)}.txt").read_text(encoding="utf-8")
    gold = golden_headings(txt)
    sentences = article_sentences(article)
    corpus = write_corpus(topic, sentences, work / f"{file_name(topic)}.jsonl")
    state = run_foreground(
        make_config(
            topic, corpus=str(corpus), max_perspectives=max_perspectives, max_turns=max_turns
        )
    )
    if state.status != "complete":
        return {"topic": topic, "status": state.status, "error": state.error}
    store = RunStore(get_redis())
    outline = store.get_doc(state.run_id, "outline", Outline)
    report = store.get_doc(state.run_id, "report", Report)
    predicted = [h for s in outline.sections for h in (s.heading, *s.subsections)]
    encode = get_embedder().encode
    body = "\n\n".join([report.lead, *[s.text for s in report.sections]])
    problems = check_integrity(body, len(report.references))
    plain = re.sub(r"\s*\[\d+\]", "", body)
    quality = summary(measure(report, topic, encode))  # item 12 (bench.report_quality_bench)
    reference = " ".join(sentences)
    rouge = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True).score(reference, plain)
    return {
        "topic": topic,
        "status": "complete",
        "golden": gold,
        "predicted": predicted,
        "soft_recall": heading_soft_recall(gold, predicted, encode) if gold else None,
        "generic_soft_recall": heading_soft_recall(gold, GENERIC_OUTLINE, encode) if gold else None,
        "rouge1": rouge["rouge1"].fmeasure,
        "rougeL": rouge["rougeL"].fmeasure,
        "citations": len(report.references),
        "integrity_problems": problems,
        "report_quality": quality,
        "sentences": len(sentences),
        "wall_s": state.wall_s,
    }


def run(
    folder: Path, limit: int | None = None, max_perspectives: int = 3, max_turns: int = 2
) -> tuple[list[Figure], list[dict]]:
    """Score ``limit`` topics (all when None) of ``folder``; returns (figures, per-topic rows)."""

    names = topics(folder)[:limit] if limit else topics(folder)
    if not names:
        raise FileNotFoundError(
            f"no FreshWiki topics in {folder} (need topic_list.csv, json/, txt/)"
        )
    rows = []
    with (
        private_redis() as (url, d),
        scoped_env(
            RESEARCH_DATA_DIR=str(d / "data"), REDIS_URL=url, RESEARCH_INDEX_DIR=str(d / "indexes")
        ),
    ):
        work = d / "corpora"
        work.mkdir()
        for topic in names:
            rows.append(score_topic(topic, folder, work, max_perspectives, max_turns))
    done = [r for r in rows if r["status"] == "complete" and r["soft_recall"] is not None]

    def mean(k):
        return sum(r[k] for r in done) / len(done) if done else None

    sound = sum(1 for r in done if not r["integrity_problems"])
    n = len(names)
    per = "; ".join(
        f"{r['topic']}: HSR {r['soft_recall']:.2f} R1 {r['rouge1']:.2f} RL {r['rougeL']:.2f}"
        for r in done
    )
    figs = [
        Figure(
            8,
            "quality.heading soft recall (mean)",
            mean("soft_recall"),
            "",
            baseline=mean("generic_soft_recall"),
            baseline_label="generic 4-heading outline",
            target="> 1",
            note=f"{len(done)}/{n} topics completed; engine extractive, {max_perspectives} perspectives × "
            f"{max_turns} turns; per topic: {per}",
        ),
        Figure(
            8,
            "quality.ROUGE-1 F1 vs article (mean)",
            mean("rouge1"),
            "",
            note="info: no baseline system offline",
        ),
        Figure(8, "quality.ROUGE-L F1 vs article (mean)", mean("rougeL"), ""),
        Figure(
            8,
            "quality.citation integrity",
            100.0 * sound / n if n else None,
            "%",
            target=">= 100",
            target_on="value",
            note=f"{sound}/{n} reports with every [n] sound",
        ),
    ]
    return figs, rows
