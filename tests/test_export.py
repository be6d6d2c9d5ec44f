"""research.export: every format of a finished run, and ``research export``."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from docx import Document
from pypdf import PdfReader

from research.cli import main
from research.devtools.scale_run import HOSTILE, build_scale_run
from research.errors import InputError
from research.export import EXTENSIONS, FORMATS, export_run, render_export, safe_filename
from research.models import RunConfig
from research.store.runs import RunStore


@pytest.fixture()
def small_run(data_dir, r):
    store = RunStore(r)
    return store, build_scale_run(store, data_dir, sources=12, turns=4, artifacts=5, hostile=True)


def test_html_is_self_contained_with_linked_citations(small_run):
    store, rid = small_run
    html = render_export(store, rid, "html").decode()
    assert (
        html.startswith("<!DOCTYPE html>")
        and "<script" not in html
        and "onerror=" not in html.replace("onerror=&quot;", "")
    )
    assert re.search(r'<a href="#ref-1" title="\[1\] Examplimab study 1[^"]*“In cohort 1', html)
    assert '<li id="ref-1" value="1"><a href="https://' in html
    assert "&lt;script&gt;" in html  # the payload is shown as text
    assert "http://" not in html.split("<body>")[0] and "<link" not in html  # no external assets


def test_pdf_docx_and_zip(small_run):
    store, rid = small_run

    pdf = PdfReader(io.BytesIO(render_export(store, rid, "pdf")))
    text = " ".join(p.extract_text() for p in pdf.pages)
    assert "References" in text and "Examplimab study 1" in text
    doc = Document(io.BytesIO(render_export(store, rid, "docx")))
    paras = [p.text for p in doc.paragraphs]
    assert any(t.startswith("[1] Examplimab study 1") for t in paras)
    xml = doc.element.xml
    assert 'w:anchor="ref_1"' in xml and 'w:name="ref_1"' in xml  # citation → bookmark
    z = zipfile.ZipFile(io.BytesIO(render_export(store, rid, "zip")))
    names = set(z.namelist())
    assert {
        "run.json",
        "plan.json",
        "summary_cards.json",
        "transcripts.json",
        "sources.csv",
        "sources.json",
        "events.jsonl",
        "report.md",
        "report.html",
        "usage.json",
    } <= names
    assert sum(n.startswith("artifacts/") for n in names) == 5
    assert z.read("sources.csv").decode().count("\n") == 13  # header + 12 sources


def test_report_formats_need_a_report(r, data_dir):

    store = RunStore(r)
    rid = store.create_run(RunConfig(topic="t")).run_id
    with pytest.raises(InputError) as exc:
        render_export(store, rid, "pdf")
    assert exc.value.code == "report_not_ready"
    assert zipfile.ZipFile(io.BytesIO(render_export(store, rid, "zip"))).namelist()
    with pytest.raises(InputError):
        render_export(store, rid, "exe")


def test_cli_export_every_format(small_run, tmp_path, monkeypatch, capsys):

    store, rid = small_run
    monkeypatch.chdir(tmp_path)
    for fmt in FORMATS:
        assert main(["export", rid, "--format", fmt]) == 0
        path = capsys.readouterr().out.strip()
        assert (
            path.endswith(safe_filename(store.get_run(rid).topic, EXTENSIONS.get(fmt, fmt)))
            and (tmp_path / path).stat().st_size > 0
        )
    assert (
        export_run(rid, "html", tmp_path / "x" / "r.html", store=store).read_text().count("ref-1")
        >= 2
    )
    assert HOSTILE not in (tmp_path / "x" / "r.html").read_text()
