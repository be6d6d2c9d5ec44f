"""A big, realistic finished run written straight into Redis and the data dir (no pipeline).

Used to check that every dashboard page stays fast on large runs and by the
benchmarks (``bench/``), which time each page on it::

    from research.devtools.scale_run import build_scale_run
    run_id = build_scale_run(store_or_redis, data_dir, sources=1000, turns=100, artifacts=500)

What it builds (deterministic for given sizes; every page has something to show):

- ``RunState`` ``complete`` (mode storm, template ``drug``, extractive engine label), created
  an hour ago, ``wall_s`` 3,600 s, a report file at ``{data_dir}/reports/{run_id}/report.md``.
- ``sources`` collector sources (docs/design.md § Collector tools: ``save_source``; PubMed, trials
and web mixed, spread
  over every syllabus question), plan, perspectives (``turns // 10`` personas, ≥ 1), survey,
  outline, analysis (40 cross-validated claims, 10 contradictions).
- ``turns`` dialogue turns (each citing 5 sources, pointing at an artifact file).
- ``artifacts`` raw JSON files under ``{data_dir}/research_artifacts/{run_id}/`` with one
  ``ArtifactRecord`` each (two thirds useful).
- A report of 8 sections citing up to 300 references, usage totals and one event per turn
  and per tool call.

Writes only Redis keys of the new run and files under ``data_dir``; takes ~1–3 s for the
default sizes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import redis

from research.engines.labels import OFFLINE_LABEL
from research.models import (
    Analysis,
    ArtifactRecord,
    Claim,
    Contradiction,
    DialogueTurn,
    Outline,
    OutlineSection,
    Perspective,
    Plan,
    Reference,
    Report,
    ReportSection,
    RunConfig,
    Step,
    SummaryCard,
    TopicOutline,
    TurnSource,
)
from research.planning.syllabus import get_template
from research.store.runs import RunStore

TOPIC = "Examplimab in a solid tumour (scale test)"
_TYPES = ("pubmed", "clinicaltrials.gov", "web", "wikipedia")
_MAX_REFS = 300
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def _source_fields(i: int) -> dict:
    stype = _TYPES[i % len(_TYPES)]
    ext = {"pubmed": f"{30000000 + i}", "clinicaltrials.gov": f"NCT{10000000 + i:08d}"}.get(
        stype, ""
    )
    url = {
        "pubmed": f"https://pubmed.ncbi.nlm.nih.gov/{30000000 + i}/",
        "clinicaltrials.gov": f"https://clinicaltrials.gov/study/NCT{10000000 + i:08d}",
        "wikipedia": f"https://en.wikipedia.org/wiki/Scale_source_{i}",
    }.get(stype, f"https://example.org/doc/{i}")
    return {
        "source_type": stype,
        "external_id": ext,
        "url": url,
        "title": f"Examplimab study {i}: biomarker-positive outcomes (cohort {i % 37})",
        "key_excerpts": f"In cohort {i % 37}, examplimab plus chemotherapy improved disease-free survival "
        f"(HR 0.{50 + i % 40}) with infusion reactions in {i % 9 + 1}% of patients.",
    }


def build_scale_run(
    store: RunStore | redis.Redis,
    data_dir: str | Path,
    *,
    sources: int = 1000,
    turns: int = 100,
    artifacts: int = 500,
    hostile: bool = False,
) -> str:
    """Write a finished run of the given size; returns its run id.

    Args:
        store: a ``RunStore`` or a ``redis.Redis`` (``decode_responses=True``).
        data_dir: the app's data dir (``RESEARCH_DATA_DIR``); artifacts and the report file go
            under it.
        sources / turns / artifacts: sizes (≥ 1 each).
        hostile: put :data:`HOSTILE` (a ``<script>`` and an ``onerror=`` payload that set
            ``window.__pwned``) into source titles and excerpts, answers, card summaries and the
            report, for rendering-safety tests.

    Raises:
        ValueError: a size below 1.
    """
    if min(sources, turns, artifacts) < 1:
        raise ValueError("sources, turns and artifacts must each be at least 1")
    store = store if isinstance(store, RunStore) else RunStore(store)
    data_dir = Path(data_dir)
    syllabus = get_template("drug")
    keys_ = syllabus.keys()
    config = RunConfig(
        topic=TOPIC,
        template="drug",
        max_perspectives=max(1, min(12, turns // 10)),
        max_turns=min(10, max(1, turns // max(1, min(12, turns // 10)))),
    )
    evil = f" {HOSTILE}" if hostile else ""
    state = store.create_run(config, engine_label=OFFLINE_LABEL)
    rid = state.run_id
    store.set_status(rid, "planning")
    collector = store.collector(rid)
    collector.init(syllabus)
    store.put_doc(rid, "syllabus", syllabus)
    saved = []
    for i in range(1, sources + 1):
        f = _source_fields(i)
        f["title"] += evil
        f["key_excerpts"] += evil
        qs = [keys_[i % len(keys_)], keys_[(i * 7) % len(keys_)]]
        saved.append(collector.save_source(relevant_questions=sorted(set(qs)), **f)["source_id"])
    plan = Plan(
        plan_title="Examplimab scale plan",
        steps=[
            Step(step_id=i, title=f"Step {i}", description=f"Research aspect {i} of the topic")
            for i in range(1, 6)
        ],
    )
    store.put_doc(rid, "plan", plan)
    n_persp = max(1, turns // 10)
    persp = [
        Perspective(
            name=f"Expert {p + 1}",
            focus=f"Focus area {p + 1}: efficacy, safety and access",
            questions=[f"What is known about aspect {p + 1}?"],
        )
        for p in range(n_persp)
    ]
    store.put_doc(rid, "perspectives", persp)
    store.put_doc(
        rid,
        "survey",
        [
            TopicOutline(
                topic=f"Related topic {i}",
                sections=["History", "Mechanism", "Trials"],
                source=f"https://en.wikipedia.org/wiki/Related_{i}",
            )
            for i in range(8)
        ],
    )

    root = data_dir / "research_artifacts" / rid / "examplimab_scale_plan"
    root.mkdir(parents=True, exist_ok=True)
    store.set_status(rid, "conversations")
    files, records, payloads = [], [], []
    for a in range(1, artifacts + 1):
        name = f"examplimab_scale_plan__step{a % 5 + 1}_step_{a % 5 + 1}__search__{a}.json"
        files.append(f"examplimab_scale_plan/{name}")
        payload = [_source_fields((a * 3 + k) % sources + 1) for k in range(3)]
        (root / name).write_text(json.dumps(payload, indent=1), encoding="utf-8")
        rec = ArtifactRecord(
            artifact_file=files[-1],
            tool_name="search",
            step_id=a % 5 + 1,
            step_title=f"Step {a % 5 + 1}",
            perspective=persp[a % n_persp].name,
            tool_input=f"examplimab query {a}",
            raw_chars=1500,
            raw_tokens=380,
            card_tokens=60,
            card=SummaryCard(
                summary_title=f"Search {a}: examplimab results",
                summary=f"Three documents about examplimab outcomes (call {a}).{evil}",
                extraction=[f"Finding {a}.1", f"Finding {a}.2"],
                is_useful=a % 3 != 0,
            ),
        )
        records.append(rec)
        payloads.append(
            {"tool": "search", "step": a % 5 + 1, "file": files[-1], "is_useful": a % 3 != 0}
        )
    store.append_cards(rid, records, event="tool.called", events=payloads)
    for t in range(turns):
        srcs = [
            TurnSource(
                n=k + 1,
                source_id=saved[(t * 5 + k) % len(saved)],
                title=f"Source {(t * 5 + k) % sources + 1}",
                url=_source_fields((t * 5 + k) % sources + 1)["url"],
                source_type="pubmed",
                snippet="examplimab improved survival",
            )
            for k in range(5)
        ]
        store.append_turn(
            rid,
            DialogueTurn(
                perspective=persp[t % n_persp].name,
                turn_number=t // n_persp + 1,
                question=f"What does the evidence say about aspect {t}?",
                answer=f"Examplimab improved outcomes [1] with manageable infusion reactions [2]; see also [3].{evil}",
                search_queries=[f"examplimab aspect {t}"],
                sources=srcs,
                artifact_files=[files[t % len(files)]],
            ),
        )

    store.set_status(rid, "analyzing")
    n_refs = min(_MAX_REFS, sources)
    store.put_doc(
        rid,
        "analysis",
        Analysis(
            facts_total=sources * 2,
            single_source=sources,
            cross_validated=[
                Claim(
                    text=f"Claim {i} about examplimab efficacy",
                    source_ids=[saved[i], saved[i + 1]],
                )
                for i in range(min(40, len(saved) - 1))
            ],
            contradictions=[
                Contradiction(
                    subject=f"Infusion reaction rate {i}",
                    statement_a="3% of patients",
                    source_a=saved[i],
                    statement_b="7% of patients",
                    source_b=saved[-1 - i],
                    explanation="Different follow-up times",
                )
                for i in range(min(10, len(saved)))
            ],
        ),
    )
    store.set_status(rid, "synthesizing")
    outline = Outline(
        sections=[
            OutlineSection(heading=f"Section {s}", subsections=[f"Part {s}.{k}" for k in range(3)])
            for s in range(1, 9)
        ]
    )
    store.put_doc(rid, "outline", outline)
    refs = [
        Reference(
            number=i + 1,
            source_id=saved[i],
            title=_source_fields(i + 1)["title"] + evil,
            url=_source_fields(i + 1)["url"],
            source_type=_source_fields(i + 1)["source_type"],
            external_id=_source_fields(i + 1)["external_id"],
        )
        for i in range(n_refs)
    ]
    sections = []
    per = max(1, n_refs // 8)
    for s in range(8):
        cites = range(s * per + 1, min(n_refs, (s + 1) * per) + 1)
        text = (
            " ".join(
                f"Finding {c} on examplimab in biomarker-positive disease [{c}]." for c in cites
            )
            or "No findings."
        )
        sections.append(ReportSection(heading=f"Section {s + 1}{evil}", text=text))
    lead = f"Examplimab transformed the care of the disease [1].{evil}"
    md = "\n\n".join(
        [f"# {TOPIC}", lead]
        + [f"## {x.heading}\n\n{x.text}" for x in sections]
        + ["## References"]
        + [f"[{r.number}] {r.title}. {r.url}" for r in refs]
    )
    report = Report(
        title=TOPIC,
        lead=lead,
        sections=sections,
        references=refs,
        markdown=md,
        engine_label=OFFLINE_LABEL,
    )
    store.put_doc(rid, "report", report)
    path = data_dir / "reports" / rid / "report.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(md, encoding="utf-8")
    store.set_status(rid, "complete", report_path=str(path), wall_s=3600.0)
    store.set_fields(rid, created_at=time.time() - 3600)
    return rid
