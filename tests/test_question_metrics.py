"""The question bench's figures can fail, and its labelled question sets are well formed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.question_metrics import (
    CitedSentence,
    CorpusIndex,
    normalize,
    parse_report,
    score_ranking,
    score_report,
)
from bench.question_search import snippets
from research.search.corpus import Document

DATA = Path(__file__).resolve().parents[1] / "bench" / "data"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus" / "docs.jsonl"
KINDS = {"comparison", "intervention", "drug", "device", "event", "person", "general"}

DOCS = [
    {"id": "pubmed:1", "url": "https://pubmed.ncbi.nlm.nih.gov/1/", "title": "Trial A vs B"},
    {"id": "pubmed:2", "url": "https://pubmed.ncbi.nlm.nih.gov/2/", "title": "Arm A alone"},
    {"id": "pubmed:3", "url": "https://pubmed.ncbi.nlm.nih.gov/3/", "title": "Tea company"},
    {"id": "wiki:x#1", "url": "https://en.wikipedia.org/wiki/X#S", "title": "X — One"},
    {"id": "wiki:x#2", "url": "https://en.wikipedia.org/wiki/X#S", "title": "X — Two"},
    {"id": "wiki:y#3", "url": "https://en.wikipedia.org/wiki/Y_(swimmer)#Honors", "title": "Y"},
]
QUESTION = {
    "qid": "t1",
    "question": "A versus B",
    "kind": "comparison",
    "labels": {"pubmed:1": 2, "pubmed:2": 1, "pubmed:3": 0},
    "findings": [
        {"id": "f1", "text": "A beat B", "terms": ["hazard ratio", "0.81"], "docs": ["pubmed:1"]},
        {"id": "f2", "text": "A harms", "terms": ["fractures"], "docs": ["pubmed:1", "pubmed:2"]},
    ],
}


def _report(body: str, refs: list[tuple[str, str]]) -> str:
    lines = [f"{n}. [{t}]({u}) (source: x)" for n, (t, u) in enumerate(refs, 1)]
    return "# Q\n\n> note\n\n" + body + "\n\n## References\n\n" + "\n".join(lines) + "\n"


@pytest.fixture
def index() -> CorpusIndex:
    return CorpusIndex.from_docs(DOCS)


def test_on_question_report_scores_full_marks(index: CorpusIndex) -> None:
    md = _report(
        "## Efficacy\n\nDFS improved, hazard ratio 0·81 vs. 0.92 for B.[1] Fractures rose.[1][2]",
        [("Trial A vs B", DOCS[0]["url"]), ("Arm A alone", DOCS[1]["url"])],
    )
    s = score_report(md, index, QUESTION)
    assert s["k"] == 2 and s["sentences"] == 2
    assert s["relevant"] == 1.0 and s["direct"] == 0.5 and s["direct_recall"] == 1.0
    assert s["findings"] == 1.0 and s["on_question"] == 1.0


def test_off_question_report_scores_zero(index: CorpusIndex) -> None:
    md = _report(
        "The hazard ratio was 0.81 and fractures were rare.[1]",
        [("Tea company", DOCS[2]["url"])],
    )
    s = score_report(md, index, QUESTION)
    assert s["relevant"] == 0.0 and s["direct"] == 0.0 and s["direct_recall"] == 0.0
    # the sentence holds the terms but cites no supporting document
    assert s["findings"] == 0.0 and s["on_question"] == 0.0


def test_unlabelled_and_unresolved_sources_count_off_question(index: CorpusIndex) -> None:
    md = _report(
        "One.[1] Two.[2]",
        [("Elsewhere", "https://example.org/a"), ("X — Two", DOCS[4]["url"])],
    )
    s = score_report(md, index, QUESTION)
    assert s["unresolved"] == 1 and s["unjudged"] == 1
    assert s["relevant"] == 0.0 and s["on_question"] == 0.0


def test_mixed_citation_makes_sentence_off_question(index: CorpusIndex) -> None:
    md = _report(
        "Fractures rose with A.[1, 2] Tea sales rose.[3]",
        [(d["title"], d["url"]) for d in DOCS[:3]],
    )
    s = score_report(md, index, QUESTION)
    assert s["on_question"] == 0.5 and s["findings"] == 0.5
    assert s["relevant"] == pytest.approx(2 / 3)


def test_shared_url_resolved_by_title(index: CorpusIndex) -> None:
    sentences, cited = parse_report(_report("Text.[1]", [("X — Two", DOCS[4]["url"])]), index)
    assert cited == ["wiki:x#2"] and sentences[0].docs == ["wiki:x#2"]


def test_url_with_parentheses_resolves(index: CorpusIndex) -> None:
    """A page named with a disambiguation in parentheses keeps them in its URL."""
    _, cited = parse_report(_report("Text.[1]", [("Y", DOCS[5]["url"])]), index)
    assert cited == ["wiki:y#3"]


def test_ranking_anchor_can_fail() -> None:
    bad = score_ranking(["pubmed:3"], QUESTION)
    good = score_ranking(["pubmed:1", "pubmed:2"], QUESTION)
    assert bad["relevant"] == 0.0 and bad["findings"] == 0.0 and bad["direct_recall"] == 0.0
    assert good["relevant"] == 1.0 and good["findings"] == 1.0 and good["direct"] == 0.5


def test_snippet_anchor_states_only_what_its_sentences_state() -> None:
    """An anchor whose documents hold a finding but whose result page does not state it gets
    the finding as held, not as stated; a page sentence that states it counts."""
    silent = [CitedSentence("Trial A vs B in adults.", ["pubmed:1"])]
    page = [CitedSentence("A beat B: hazard ratio 0.81, with fewer fractures.", ["pubmed:1"])]
    bad = score_ranking(["pubmed:1"], QUESTION, silent)
    good = score_ranking(["pubmed:1"], QUESTION, page)
    assert bad["findings"] == 0.0 and bad["findings_in_docs"] == 1.0
    assert good["findings"] == 1.0 and good["findings_in_docs"] == 1.0


def test_snippets_take_each_documents_best_sentence_in_rank_order() -> None:
    docs = {
        "a": Document("a", "Unrelated title", "u", "Weather was mild. Oranges beat apples here."),
        "b": Document("b", "Oranges versus apples", "u", "We compared them. Oranges won again."),
    }
    page = snippets(docs, "oranges versus apples", ["b", "a"], 3)
    assert [s.docs for s in page] == [["b"], ["a"], ["b"]]
    assert page[0].text.startswith("Oranges versus apples")
    assert page[1].text == "Oranges beat apples here."
    assert snippets(docs, "oranges", ["b", "missing"], 0) == []


def test_normalize_decimal_dot_and_dash() -> None:
    assert normalize("HR 0·81 – 5\u00a0years") == "hr 0.81 - 5 years"


def _rows(name: str) -> list[dict]:
    path = DATA / name
    if not path.is_file():
        pytest.skip(f"{name} not written yet")
    return [json.loads(x) for x in path.read_text(encoding="utf-8").split("\n") if x.strip()]


@pytest.mark.parametrize(
    ("name", "need_findings"),
    [
        ("questions_unseen.jsonl", True),
        ("questions_calibration.jsonl", False),
        ("questions_holdout.jsonl", True),
        ("questions_dev.jsonl", True),
    ],
)
def test_question_sets_are_well_formed(name: str, need_findings: bool) -> None:
    if not CORPUS.is_file():
        pytest.skip("shared corpus not present")
    ids = {json.loads(x)["id"] for x in CORPUS.read_text(encoding="utf-8").split("\n") if x.strip()}
    rows = _rows(name)
    assert len(rows) >= 12
    assert len({r["qid"] for r in rows}) == len(rows)
    kinds = [r["kind"] for r in rows]
    assert set(kinds) <= KINDS and len(set(kinds)) >= 3
    if need_findings:
        assert set(kinds) == KINDS and kinds.count("comparison") >= 3
        assert kinds.count("intervention") >= 3
    for r in rows:
        assert r["question"].strip() and r["labels"]
        assert set(r["labels"]) <= ids, r["qid"]
        assert set(r["labels"].values()) <= {0, 1, 2}
        assert any(g == 2 for g in r["labels"].values()), r["qid"]
        findings = r.get("findings", [])
        if need_findings:
            assert 4 <= len(findings) <= 8, r["qid"]
        for f in findings:
            assert 1 <= len(f["terms"]) <= 4 and all(t == t.lower() for t in f["terms"])
            assert f["docs"] and all(r["labels"].get(d, 0) >= 1 for d in f["docs"]), f


def test_sets_share_no_question() -> None:
    unseen = {normalize(r["question"]) for r in _rows("questions_unseen.jsonl")}
    calib = {normalize(r["question"]) for r in _rows("questions_calibration.jsonl")}
    holdout = {normalize(r["question"]) for r in _rows("questions_holdout.jsonl")}
    dev = {normalize(r["question"]) for r in _rows("questions_dev.jsonl")}
    assert not unseen & calib and not holdout & (unseen | calib)
    assert not dev & (unseen | calib | holdout)
    banned = ("trastuzumab", "cardiotox", "aromatase inhibitors versus tamoxifen")
    assert not any(b in q for q in unseen | calib | holdout | dev for b in banned)
