"""Ingested documents, "a run cites them by file and page": generated PDF/DOCX/HTML documents ingested into a
named corpus, an offline extractive run over that corpus only, and the report's references
pointing at the files (PDF with page) with snippets that really are on the cited page. Also
the "sources span multiple databases" criterion (docs/design.md § Completion) (``RunConfig.min_databases``)."""

from __future__ import annotations

import re
from pathlib import Path

import docx
import pytest
from fpdf import FPDF
from pypdf import PdfReader

from research import jobs
from research.errors import CorpusError, InputError
from research.ingest import ingest
from research.models import Report
from research.planning.syllabus import get_template
from research.store.collector import SourceCollector
from research.store.connection import get_redis
from research.store.runs import RunStore

TOPIC = "Zanubrutinib in mantle cell lymphoma"
PAGES = [
    "Zanubrutinib is a second-generation Bruton tyrosine kinase inhibitor designed for greater selectivity. ",
    "In relapsed mantle cell lymphoma, zanubrutinib produced an overall response rate of 84 percent. ",
    "Atrial fibrillation was less frequent with zanubrutinib than with ibrutinib in head-to-head trials. ",
    "Zanubrutinib is dosed at 160 mg twice daily or 320 mg once daily by mouth. ",
    "Mantle cell lymphoma patients on zanubrutinib reported neutropenia and upper respiratory infections. ",
]


def make_run_docs(folder: Path) -> None:
    """A 5-page PDF (one theme per page), a DOCX memo and an HTML page, all on TOPIC."""

    folder.mkdir(parents=True, exist_ok=True)
    pdf = FPDF()
    for text in PAGES:
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 7, text * 6)
    pdf.output(str(folder / "zanu-report.pdf"))
    d = docx.Document()
    d.add_heading("Zanubrutinib memo", 0)
    d.add_paragraph(
        "The memo summarises zanubrutinib efficacy in mantle cell lymphoma and its bleeding risk. "
        * 3
    )
    d.save(str(folder / "memo.docx"))
    (folder / "overview.html").write_text(
        "<html><head><title>Zanubrutinib overview</title></head><body><article><h1>Zanubrutinib</h1><p>"
        + "Zanubrutinib received accelerated approval for mantle cell lymphoma after at least one prior therapy. "
        * 5
        + "</p></article></body></html>"
    )


def _page_texts(pdf: Path) -> list[str]:

    return [" ".join((p.extract_text() or "").split()) for p in PdfReader(str(pdf)).pages]


@pytest.mark.slow
def test_run_over_ingested_corpus_cites_file_and_page(data_dir, tmp_path):
    folder = tmp_path / "docs"
    make_run_docs(folder)
    rep = ingest("lymphoma-docs", [folder])
    assert len(rep.added) == 3 and not rep.errors
    cfg = jobs.make_config(
        TOPIC,
        corpora="lymphoma-docs",
        template="drug",
        max_perspectives=2,
        max_turns=1,
        min_databases=2,
    )
    assert cfg.search == [] and cfg.corpora == ["lymphoma-docs"] and cfg.min_databases == 2
    state = jobs.run_foreground(cfg)
    assert state.status == "complete", state.error
    store = RunStore(get_redis())
    checked = [e.data for e in store.events(state.run_id) if e.type == "coverage.checked"]
    assert (
        checked and checked[-1]["databases"] == "1/2 databases (Local)" and not checked[-1]["ready"]
    )
    report = store.get_doc(state.run_id, "report", Report)
    refs = report.references
    sources = {s.source_id: s for s in SourceCollector(get_redis(), state.run_id).all_sources()}
    assert refs, "the report cites nothing"
    pdf = (folder / "zanu-report.pdf").resolve()
    texts = _page_texts(pdf)
    cited_pages = []
    for ref in refs:
        assert ref.url.startswith("file://"), ref.url
        assert any(
            name in ref.title for name in ("zanu-report.pdf", "memo.docx", "overview.html")
        ), ref.title
        m = re.match(r"zanu-report\.pdf p\. (\d+)", ref.title)
        if not m:
            continue
        page = int(m.group(1))
        assert ref.url == f"{pdf.as_uri()}#page={page}"
        cited_pages.append(page)
        excerpt = sources[ref.source_id].key_excerpts  # the saved passage is on that page
        assert excerpt, ref
        for piece in re.split(r"\s*(?:…|\.\.\.|\n)\s*", excerpt):
            words = " ".join(piece.split())[:80]
            if len(words) >= 20:
                assert words in texts[page - 1], (page, words)
    # the question-organised report quotes a sentence only in the section it fits
    # best, so this 3-document run cites fewer passages than before: one PDF page at least
    assert cited_pages, [r.title for r in refs]
    assert any(r.title.startswith(("memo.docx", "overview.html")) for r in refs), [
        r.title for r in refs
    ]
    assert f"[{pdf.name} p. " in report.markdown or f"{pdf.name} p. " in report.markdown


def test_corpora_only_run_needs_no_default_corpus(data_dir, tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    make_run_docs(folder)
    first = ingest("lymphoma-docs", [folder / "overview.html"])
    again = ingest(
        "lymphoma-docs", [folder / "overview.html"]
    )  # nothing changed: no re-index, no model load
    assert again.unchanged and again.chunks == first.chunks and again.seconds < 1.0
    monkeypatch.setenv("RESEARCH_CORPUS", str(tmp_path / "absent.jsonl"))
    cfg = jobs.make_config(TOPIC, corpora="lymphoma-docs")
    assert cfg.search == [] and cfg.corpus == ""
    with pytest.raises(CorpusError, match="absent.jsonl"):  # local still needs its corpus
        jobs.make_config(TOPIC, corpora="lymphoma-docs", search="local")


def test_min_databases_criterion(r, data_dir):

    col = SourceCollector(r, "00112233445566bb")
    col.init(get_template("drug"))
    q = get_template("drug").keys()[0]
    col.save_source("pubmed", "PMID:1", "https://pubmed.ncbi.nlm.nih.gov/1/", "Paper", [q])
    # default 1: no databases criterion (docs/design.md § Completion)
    assert "databases" not in col.check_completion()
    one = col.check_completion(min_databases=2)
    assert one["databases"] == "1/2 databases (PubMed)" and one["ready"] is False
    col.save_source(
        "clinicaltrials.gov",
        "NCT00000001",
        "https://clinicaltrials.gov/study/NCT00000001",
        "Trial",
        [q],
    )
    assert col.check_completion(min_databases=2)["databases"].startswith("2/2 databases")
    with pytest.raises(InputError, match="min databases must be a whole number from 1 to 8"):
        jobs.make_config(TOPIC, min_databases=0)
