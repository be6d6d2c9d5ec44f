"""Ingestion of generated PDF/DOCX/HTML/Markdown/text files into a named corpus
(file + page citations, incremental re-ingest, per-file errors) and scrape_url's SSRF guard."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest
from fpdf import FPDF
from streamlit.testing.v1 import AppTest

from research.ingest import corpus_retriever, ingest, list_corpora
from research.search.scrape import ScrapeError, scrape_url
from research.ui.corpora import corpus_rows, file_rows


def make_docs(folder, n_pdf=1):

    folder.mkdir(parents=True, exist_ok=True)
    for k in range(n_pdf):
        pdf = FPDF()
        for i in range(3):
            pdf.add_page()
            pdf.set_font("Helvetica", size=11)
            topic = "cardiotoxicity of trastuzumab" if i == 1 else f"general remarks {i}"
            pdf.multi_cell(0, 7, f"Report {k} page {i + 1} covers {topic}. " * 8)
        pdf.output(str(folder / f"report{k}.pdf"))
    d = docx.Document()
    d.add_heading("Pertuzumab memo", 0)
    d.add_paragraph("The memo reviews pertuzumab dosing schedules in metastatic disease.")
    t = d.add_table(rows=1, cols=2)
    t.rows[0].cells[0].text, t.rows[0].cells[1].text = "dose", "840 mg loading"
    d.save(str(folder / "memo.docx"))
    (folder / "page.html").write_text(
        "<html><head><title>Neratinib notes</title></head><body><article><h1>Neratinib</h1>"
        "<p>"
        + "Neratinib is an oral tyrosine kinase inhibitor used after trastuzumab. " * 6
        + "</p></article></body></html>"
    )
    (folder / "notes.md").write_text("# Lapatinib\n\nLapatinib notes about diarrhoea management.\n")
    (folder / "plain.txt").write_text("Tucatinib plain text notes on brain metastases.\n")


def test_ingest_cites_file_and_page_and_is_incremental(data_dir, tmp_path):
    folder = tmp_path / "docs"
    make_docs(folder)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    report = ingest("team-docs", [folder])
    assert len(report.added) == 5 and list(report.errors) == [
        str((folder / "broken.pdf").resolve())
    ]
    assert "broken.pdf: cannot read this PDF" in next(iter(report.errors.values()))
    hits = corpus_retriever("team-docs").search("trastuzumab cardiotoxicity", 3)
    assert hits[0].title.startswith("report0.pdf p. 2") and hits[0].url.endswith(
        "report0.pdf#page=2"
    )
    assert hits[0].backend == "corpus:team-docs" and hits[0].external_id == "report0.pdf#p2"
    assert any(
        "840 mg" in h.text for h in corpus_retriever("team-docs").search("pertuzumab dose", 3)
    )
    again = ingest("team-docs", [folder])
    assert len(again.unchanged) == 5 and not again.added
    (folder / "plain.txt").write_text("Tucatinib notes, revised.\n")
    third = ingest("team-docs", [folder])
    assert third.updated == [str((folder / "plain.txt").resolve())]
    row = list_corpora()[0]
    assert (
        row["name"] == "team-docs"
        and row["files"] == 5
        and row["chunks"] >= 7
        and "broken.pdf" in row["errors"]
    )
    # the Corpora page: a summary row per corpus and, per corpus, its files with pages and failures

    summary = corpus_rows([row])[0]
    assert (
        summary["types"] == "DOCX, HTML, MD, PDF, TXT"
        and summary["failed files"] == 1
        and summary["size"].endswith("B")
    )
    files = file_rows(row)
    assert files[0]["file"] == "broken.pdf" and files[0]["status"].startswith(
        "not indexed: cannot read this PDF"
    )
    assert {f["file"]: f["pages"] for f in files}["report0.pdf"] == 3
    at = AppTest.from_file(
        str(Path(__file__).resolve().parents[1] / "app_pages" / "corpora.py"), default_timeout=30
    )
    at.run()
    assert not at.exception, at.exception
    assert [e.label for e in at.expander] == [
        f"team-docs: 5 files, {row['chunks']:d} chunks, 1 could not be read"
    ]
    assert (
        list(at.dataframe[0].value["corpus"]) == ["team-docs"] and len(at.dataframe[1].value) == 6
    )


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "http://127.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost:8080/",
        "http://[::1]/",
        "http://10.0.0.5/",
        "ftp://example.com/x",
    ],
)
def test_scrape_refuses_internal_and_non_http(url, monkeypatch):
    monkeypatch.delenv("RESEARCH_SCRAPE_ALLOW_HOSTS", raising=False)
    with pytest.raises(ScrapeError) as exc:
        scrape_url(url)
    assert exc.value.reason in ("bad_scheme", "blocked_address")


def test_scrape_allow_listed_loopback_and_redirect_recheck(fixture_server, monkeypatch):
    html = (
        "<html><head><title>Trial news</title></head><body><nav>menu</nav><article><h1>Trial news</h1><p>"
        + "The phase 3 trial met its primary endpoint of progression-free survival. " * 8
        + "</p></article></body></html>"
    ).encode()
    fixture_server.pages["/news.html"] = (200, {"Content-Type": "text/html; charset=utf-8"}, html)
    fixture_server.pages["/hop"] = (302, {"Location": "http://169.254.169.254/latest/"}, b"")
    monkeypatch.setenv("RESEARCH_SCRAPE_ALLOW_HOSTS", "127.0.0.1")
    page = scrape_url(f"{fixture_server.base}/news.html")
    assert (
        page.title == "Trial news" and "primary endpoint" in page.text and "menu" not in page.text
    )
    assert page.html.startswith("<html>")
    with pytest.raises(ScrapeError) as exc:  # the redirect target is re-checked
        scrape_url(f"{fixture_server.base}/hop")
    assert exc.value.reason == "blocked_address"
    small = scrape_url(f"{fixture_server.base}/news.html", max_bytes=200)
    assert small.truncated and len(small.html) <= 200
