"""Corpus loading (JSONL, folders with txt/md/html/pdf) and hybrid local search with its cache."""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from research.errors import CorpusError, InputError
from research.search import (
    LocalSearch,
    Retriever,
    external_id_for,
    get_local_search,
    load_corpus,
    read_corpus,
    source_type_for,
)
from research.search.vector_cache import vector_key

HER2 = re.compile(r"trastuzumab|her2|herceptin|erbb2", re.I)


# ---------------------------------------------------------------- helpers
def write_jsonl(path: Path, rows: list) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(row if isinstance(row, str) else json.dumps(row))
            fh.write("\n")
    return path


def make_pdf(path: Path, title: str, lines: list[str]) -> Path:
    """Write a minimal, valid one-page PDF (Helvetica text + /Info title) by hand."""
    ops = ["BT", "/F1 12 Tf", "72 720 Td"]
    for i, line in enumerate(lines):
        safe = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops += ([] if i == 0 else ["0 -16 Td"]) + [f"({safe}) Tj"]
    stream = "\n".join(ops + ["ET"]).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R "
        b"/Resources << /Font << /F1 4 0 R >> >> >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Title (%s) >>" % title.encode("latin-1"),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return path


HTML = """<!doctype html><html><head><title>Monsoon Flooding Report</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a> | <a href="/login">Log in</a></nav>
<article><h1>Monsoon Flooding Report</h1>
<p>The monsoon season of 2022 brought record rainfall to the river delta, and the embankments
failed in three districts after four days of continuous rain.</p>
<p>Relief agencies evacuated more than twelve thousand residents to shelters on higher ground,
and the water authority opened the northern spillway to lower the reservoir level.</p>
<p>Engineers later recommended raising the embankments by two metres and adding pumping
stations along the eastern canal to protect farmland from future floods.</p>
</article><footer>Copyright 2024 Example News. All rights reserved.</footer></body></html>"""


@pytest.fixture()
def doc_folder(tmp_path):
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text(
        "Glacier retreat\nAlpine glaciers lost ten percent of their "
        "volume in two summers, says the survey.\n"
    )
    (root / "sub" / "guide.md").write_text(
        "Intro text before the heading.\n\n# Beekeeping Guide\n\n"
        "Honey bees need a water source near the hive. "
        "Inspect the brood frames every week in spring.\n"
    )
    (root / "flood.html").write_text(HTML)
    make_pdf(
        root / "paper.pdf",
        "Solar Panel Efficiency",
        [
            "Perovskite solar cells reached 26 percent efficiency.",
            "Tandem cells with silicon exceed 33 percent in the lab.",
        ],
    )
    (root / "empty.txt").write_text("   \n")
    (root / ".hidden.txt").write_text("secret scratch notes")
    (root / "image.png").write_bytes(b"\x89PNG\r\n")
    return root


# ---------------------------------------------------------------- corpus loading
def test_jsonl_skips_and_counts_bad_lines(tmp_path):
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {
                "id": "pubmed:1",
                "title": "T1",
                "url": "https://pubmed.ncbi.nlm.nih.gov/1/",
                "text": "Alpha text.",
                "source": "pubmed",
                "topic": "extra fields are ignored",
            },
            "{not json",
            "[1, 2, 3]",
            {"id": "x2", "title": "no text"},
            {"id": "pubmed:1", "text": "repeated id"},
            "",
            {"id": 7, "text": "Numeric id and no title. Second sentence."},
        ],
    )
    loaded = read_corpus(path)
    assert [d.id for d in loaded.documents] == ["pubmed:1", "7"]
    assert loaded.skipped == 4
    assert loaded.problems[0].startswith("line 2: invalid JSON")
    first, second = loaded.documents
    assert (first.title, first.source, first.url) == (
        "T1",
        "pubmed",
        "https://pubmed.ncbi.nlm.nih.gov/1/",
    )
    assert second.title == "Numeric id and no title. Second sentence." and second.source == "local"
    assert load_corpus(path) == loaded.documents


@pytest.mark.parametrize("rows", [[], ["", "  "], ["{bad", {"id": "a"}, "[]"]])
def test_empty_or_all_bad_jsonl_raises(tmp_path, rows):
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(CorpusError, match="no valid lines") as info:
        load_corpus(path)
    assert info.value.code == "corpus_error"


def test_missing_or_unsupported_path_says_what_to_fix(tmp_path):
    with pytest.raises(CorpusError, match="does not exist.*JSONL file.*folder"):
        load_corpus(tmp_path / "nope.jsonl")
    with pytest.raises(CorpusError, match="does not exist"):
        LocalSearch(tmp_path / "nope", tmp_path / "idx")
    with pytest.raises(CorpusError, match="no corpus path"):
        get_local_search("", tmp_path / "idx")
    (tmp_path / "data.csv").write_text("a,b\n")
    with pytest.raises(CorpusError, match="unsupported corpus file"):
        load_corpus(tmp_path / "data.csv")
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(CorpusError, match="no readable"):
        load_corpus(tmp_path / "empty_dir")


def test_folder_of_txt_md_html_pdf(doc_folder):
    loaded = read_corpus(doc_folder)
    docs = {d.id: d for d in loaded.documents}
    assert sorted(docs) == ["flood.html", "notes.txt", "paper.pdf", "sub/guide.md"]
    assert loaded.skipped == 1 and "empty.txt" in loaded.problems[0]
    assert docs["notes.txt"].title == "Glacier retreat"
    assert docs["sub/guide.md"].title == "Beekeeping Guide"
    assert "brood frames" in docs["sub/guide.md"].text
    html = docs["flood.html"]
    assert html.title == "Monsoon Flooding Report"
    assert "twelve thousand residents" in html.text and "pumping" in html.text
    assert "Log in" not in html.text  # trafilatura dropped the navigation
    pdf = docs["paper.pdf"]
    assert pdf.title == "Solar Panel Efficiency"
    assert "Perovskite solar cells reached 26 percent" in pdf.text
    for d in docs.values():
        assert d.source == "local"
        assert d.url.startswith("file://") and d.url.endswith(d.id)
    assert Path(docs["paper.pdf"].url.removeprefix("file://")).is_file()


def test_source_type_and_external_id_mapping():
    assert source_type_for("pubmed") == "pubmed"
    assert source_type_for("clinicaltrials.gov") == "clinicaltrials.gov"
    assert source_type_for("ClinicalTrials") == "clinicaltrials.gov"
    assert source_type_for("wikipedia") == "wikipedia"
    assert source_type_for("web") == "web"
    assert source_type_for("local") == "local"
    assert source_type_for("arxiv", "https://arxiv.org/abs/1") == "web"
    assert source_type_for("", "file:///x.txt") == "local"
    assert external_id_for("pubmed:16236737") == "16236737"
    assert external_id_for("nct:NCT04973462") == "NCT04973462"
    assert external_id_for("freshwiki:Taylor_Hawkins#7") == "freshwiki:Taylor_Hawkins#7"


# ---------------------------------------------------------------- search on a small folder
def test_folder_search_end_to_end(doc_folder, tmp_path):
    search = LocalSearch(doc_folder, tmp_path / "idx")
    assert isinstance(search, Retriever) and search.name == "local"
    results = search.search("how efficient are perovskite solar cells", k=2)
    top = results[0]
    assert top.doc_id == "paper.pdf" and top.external_id == "paper.pdf"
    assert top.source_type == "local" and top.backend == "local"
    assert top.url.startswith("file://") and top.query == "how efficient are perovskite solar cells"
    assert "Perovskite" in top.snippets[0]
    assert len(results) == 2 and results[0].score >= results[1].score
    assert len(search.search("flood", k=50)) == 4  # k larger than the corpus
    with pytest.raises(InputError):
        search.search("   ", k=3)
    with pytest.raises(InputError):
        search.search("flood", k=0)


def test_changed_corpus_gets_a_new_index(tmp_path):
    path = write_jsonl(
        tmp_path / "c.jsonl", [{"id": "a", "title": "Apples", "text": "Apples are red."}]
    )
    first = LocalSearch(path, tmp_path / "idx")
    assert first.built
    assert not LocalSearch(path, tmp_path / "idx").built
    time.sleep(0.01)
    with path.open("a") as fh:
        fh.write(json.dumps({"id": "b", "title": "Bananas", "text": "Bananas are yellow."}) + "\n")
    other = write_jsonl(
        tmp_path / "other.jsonl", [{"id": "x", "title": "Cherries", "text": "Cherries are dark."}]
    )
    kept = LocalSearch(other, tmp_path / "idx").index_path  # another corpus in the same index dir
    old_version = tmp_path / "idx" / ("0" * 40)  # what an earlier INDEX_VERSION left behind
    old_version.mkdir()
    (old_version / "meta.json").write_text(
        json.dumps({"version": 1, "corpus": str(path.resolve())})
    )
    second = LocalSearch(path, tmp_path / "idx")
    assert second.built and second.index_path != first.index_path
    assert second.search("yellow fruit", k=1)[0].doc_id == "b"
    # the superseded indexes of this corpus are gone; the other corpus's index stays
    assert not first.index_path.exists() and not old_version.exists() and kept.is_dir()
    assert sorted(p.parent for p in (tmp_path / "idx").glob("*/meta.json")) == sorted(
        [second.index_path, kept]
    )


def test_broken_cache_is_rebuilt(tmp_path):
    path = write_jsonl(
        tmp_path / "c.jsonl", [{"id": "a", "title": "Apples", "text": "Apples are red."}]
    )
    first = LocalSearch(path, tmp_path / "idx")
    (first.index_path / "embeddings.npy").write_bytes(b"garbage")
    again = LocalSearch(path, tmp_path / "idx")
    assert again.built and again.search("red apples", k=1)[0].doc_id == "a"
    assert not LocalSearch(path, tmp_path / "idx").built  # the rebuilt cache is valid


# ---------------------------------------------------------------- the shared corpus
@pytest.fixture(scope="session")
def shared_search(corpus_path, shared_index_dir):
    """The shared 2,972-doc corpus, indexed once per session (about 50 s on 2 cores) in
    conftest's session-wide ``shared_index_dir``, so the pipeline tests reuse this index."""
    t0 = time.monotonic()
    search = get_local_search(corpus_path, shared_index_dir)
    print(
        f"\nshared corpus index: {len(search.docs)} docs, built={search.built} "
        f"in {time.monotonic() - t0:.1f} s"
    )
    return search


def test_hybrid_search_finds_trastuzumab_her2_docs(shared_search):
    assert len(shared_search.docs) == 2972 and shared_search.skipped == 0
    results = shared_search.search("trastuzumab HER2 breast cancer", k=5)
    assert len(results) == 5
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    for r in results:
        assert HER2.search(r.title + " " + r.text), r.title
        assert r.source_type == "pubmed" and r.doc_id == f"pubmed:{r.external_id}"
        assert (
            r.external_id.isdigit() and r.url == f"https://pubmed.ncbi.nlm.nih.gov/{r.external_id}/"
        )
        assert 1 <= len(r.snippets) <= 3 and sum(map(len, r.snippets)) <= 600
        assert HER2.search(r.snippets[0]), r.snippets
        assert r.backend == "local" and r.query == "trastuzumab HER2 breast cancer"
        assert r.text and len(r.text) > sum(map(len, r.snippets)) / 2


def test_search_maps_trials_and_wikipedia(shared_search):
    trial = shared_search.search("remdesivir hydroxychloroquine COVID-19 egyptian patients", k=3)
    ct = [r for r in trial if r.source_type == "clinicaltrials.gov"]
    assert ct and ct[0].external_id.startswith("NCT")
    assert ct[0].url == f"https://clinicaltrials.gov/study/{ct[0].external_id}"
    wiki = shared_search.search("Taylor Hawkins death toxicology", k=3)
    assert any(
        r.source_type == "wikipedia" and r.doc_id.startswith("freshwiki:Taylor_Hawkins")
        for r in wiki
    )


def test_dense_half_finds_docs_without_shared_words(shared_search):
    # "heart attack" never needs to appear: the embedding side matches myocardial infarction
    results = shared_search.search("heart attack", k=5)
    assert any(
        re.search(r"myocardial|cardiac|cardiovascular|heart", r.title + r.text, re.I)
        for r in results
    )


def test_second_construction_reuses_the_cache(shared_search, corpus_path, shared_index_dir):
    files = {p: p.stat().st_mtime_ns for p in shared_search.index_path.rglob("*") if p.is_file()}
    assert {p.name for p in files} >= {"meta.json", "embeddings.npy", "docs.jsonl"}
    t0 = time.monotonic()
    again = LocalSearch(corpus_path, shared_index_dir)
    elapsed = time.monotonic() - t0
    assert not again.built and elapsed < 15, elapsed  # a rebuild takes ~50 s
    assert again.index_path == shared_search.index_path
    assert {p: p.stat().st_mtime_ns for p in files} == files  # nothing rewritten
    same_corpus = [
        m
        for m in shared_index_dir.glob("*/meta.json")
        if json.loads(m.read_text())["corpus"] == str(corpus_path.resolve())
    ]
    assert len(same_corpus) == 1  # no second index of the same corpus
    q = "trastuzumab HER2 breast cancer"
    assert [r.doc_id for r in again.search(q, 5)] == [r.doc_id for r in shared_search.search(q, 5)]


def test_get_local_search_is_one_instance_per_process(shared_search, corpus_path, shared_index_dir):
    with ThreadPoolExecutor(4) as pool:
        got = list(
            pool.map(lambda _: get_local_search(str(corpus_path), shared_index_dir), range(4))
        )
    assert all(s is shared_search for s in got)


def test_concurrent_searches_match_sequential(shared_search):
    queries = [
        "trastuzumab HER2 breast cancer",
        "COVID-19 vaccine trial",
        "Hurricane Hilary rainfall",
        "tamoxifen endometrial polyps",
        "Odisha train collision cause",
    ] * 2
    expected = [[r.doc_id for r in shared_search.search(q, 4)] for q in queries]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda q: [r.doc_id for r in shared_search.search(q, 4)], queries))
    assert got == expected


def test_primed_queries_are_embedded_together_and_search_alike(shared_search, monkeypatch):
    """``prime`` embeds a turn's queries in one batch before their searches: every query's
    vector is then held, and each search returns what it returns unprimed."""
    monkeypatch.setenv("RESEARCH_VECTOR_CACHE", "1")
    queries = [
        "trastuzumab  cardiac   monitoring schedule",
        "pertuzumab added to trastuzumab in early breast cancer",
    ]
    emb = shared_search.embedder
    emb._memo.clear()
    before = [[r.url for r in shared_search.search(q, 5)] for q in queries]
    emb._memo.clear()
    shared_search.prime(queries)
    held = [  # the keys a search looks up: whitespace normalised, the full window
        vector_key(f"{emb.name}:{emb.precision}", emb.max_seq_length, " ".join(q.split()))
        for q in queries
    ]
    assert all(k in emb._memo for k in held)
    after = [[r.url for r in shared_search.search(q, 5)] for q in queries]
    assert after == before and all(before)
