"""A whole run as one zip: every raw artifact and everything stored about the run.

Layout inside ``{topic}.zip``::

    README.txt            what each file is
    run.json              the run's state and config (model names only, never API keys)
    plan.json, syllabus.json, perspectives.json, survey.json, outline.json, analysis.json
    summary_cards.json    every tool call's ArtifactRecord (docs/design.md § Summary card: card + file name)
    transcripts.json      every dialogue turn; transcripts.md the same, readable
    sources.json          collector sources (docs/design.md § Source collector) by question;
    sources.csv one row per source events.jsonl          the run's event stream, one JSON object per line
    usage.json            LLM calls, tokens, USD
    followups.json        follow-up questions, answers, the references they added, their audit
    versions.json         every version of the report (1 = generated), author, time, sections
    comments.json         the analysts' comments (section, quote, author, time, status)
    report.md / report.html   the report's current (or chosen) version, follow-ups appendix
                          included; report.html also has the comments appendix
    artifacts/<file>      every raw tool output under {data_dir}/research_artifacts/{run_id}
"""

from __future__ import annotations

import csv
import io
import json
import zipfile

from research import models as m
from research.artifacts import artifacts_dir
from research.errors import InputError
from research.export.appendix import with_appendix
from research.export.bundle import load_bundle
from research.export.html import report_html
from research.store.runs import RunStore

_CSV_FIELDS = [
    "source_id",
    "citation_id",
    "source_type",
    "external_id",
    "url",
    "title",
    "relevant_questions",
    "key_excerpts",
]
README = __doc__.split("Layout inside", 1)[1]


def _dump(obj) -> str:
    if obj is None:
        return "null"
    if isinstance(obj, list):
        return json.dumps(
            [x.model_dump(mode="json") if hasattr(x, "model_dump") else x for x in obj],
            ensure_ascii=False,
            indent=2,
        )
    if hasattr(obj, "model_dump"):
        return obj.model_dump_json(indent=2)
    return json.dumps(obj, ensure_ascii=False, indent=2, default=str)


def _transcripts_md(turns: list[m.DialogueTurn]) -> str:
    lines = ["# Transcripts", ""]
    for t in turns:
        lines += [
            f"## {t.perspective} · turn {t.turn_number}",
            "",
            f"**WikiWriter:** {t.question}",
            "",
            f"**TopicExpert:** {t.answer}",
            "",
        ]
        lines += [
            f"- [{s.n}] {s.title} — {s.source_type} {s.external_id} {s.url}".rstrip()
            for s in t.sources
        ]
        lines.append("")
    return "\n".join(lines)


def _sources_csv(sources: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=_CSV_FIELDS, extrasaction="ignore")
    w.writeheader()
    for s in sources:
        w.writerow({**s, "relevant_questions": ";".join(s.get("relevant_questions", []))})
    return buf.getvalue()


def run_zip(store: RunStore, run_id: str, *, version: int | None = None) -> bytes:
    """The zip described in the module docstring, as bytes (deflate-compressed). The report
    files hold version ``version`` (None = the current one); ``versions.json`` has every version
    and ``comments.json`` every comment.

    Works for unfinished runs too (report files are then absent).

    Raises:
        RunNotFoundError: no such run. InputError: ill-formed run id; no such version.
    """
    from research.store.versions import VersionStore  # noqa: PLC0415 - keeps the import light

    bundle = load_bundle(store, run_id, version=version, comments=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("README.txt", "Research Desk run export" + README)
        z.writestr("run.json", bundle.state.model_dump_json(indent=2))
        for name, model in [
            ("plan", m.Plan),
            ("syllabus", m.Syllabus),
            ("outline", m.Outline),
            ("analysis", m.Analysis),
        ]:
            z.writestr(f"{name}.json", _dump(store.get_doc(run_id, name, model)))
        z.writestr(
            "perspectives.json", _dump(store.get_doc_list(run_id, "perspectives", m.Perspective))
        )
        z.writestr("survey.json", _dump(store.get_doc_list(run_id, "survey", m.TopicOutline)))
        z.writestr("summary_cards.json", _dump(store.get_cards(run_id)))
        turns = store.get_turns(run_id)
        z.writestr("transcripts.json", _dump(turns))
        z.writestr("transcripts.md", _transcripts_md(turns))
        try:
            finalized = store.collector(run_id).finalize_sources()
        except InputError:  # no syllabus yet
            finalized = {"questions": {}, "sources": [], "total": 0}
        z.writestr("sources.json", _dump(finalized))
        z.writestr("sources.csv", _sources_csv(finalized["sources"]))
        z.writestr(
            "events.jsonl", "".join(e.model_dump_json() + "\n" for e in store.events(run_id))
        )
        z.writestr("usage.json", _dump(store.get_usage(run_id)))
        z.writestr("followups.json", _dump(bundle.followups))  # the follow-ups appendix's data
        z.writestr("versions.json", _dump(VersionStore(store).list(run_id)))
        z.writestr("comments.json", _dump(bundle.comments))
        if bundle.report is not None:
            z.writestr("report.md", with_appendix(bundle.report.markdown, bundle.followups))
            z.writestr("report.html", report_html(bundle))
        root = artifacts_dir(run_id)
        if root.is_dir():
            for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
                z.write(path, "artifacts/" + path.relative_to(root).as_posix())
    return buf.getvalue()
