"""Report-quality metrics (research/devtools/report_quality.py) on real text: FreshWiki and STORM
articles from shared/data and abstracts from the shared corpus, with values a reader can check."""

from __future__ import annotations

import json

import pytest
from conftest import CORPUS, SHARED_DATA

from research.devtools import report_quality as rq
from research.models import Reference, Report, ReportSection
from research.search.embeddings import get_embedder

FRESHWIKI_HILARY = SHARED_DATA / "freshwiki" / "txt" / "Hurricane_Hilary.txt"
STORM_HILARY = (
    SHARED_DATA / "storm_examples" / "cognify_lm_compiler" / "results" / "Hurricane_Hilary"
)

pytestmark = pytest.mark.skipif(
    not FRESHWIKI_HILARY.is_file(), reason=f"shared data not found at {SHARED_DATA}"
)


@pytest.fixture(scope="module")
def encode():

    return get_embedder().encode


def _abstract(doc_id: str) -> str:
    with CORPUS.open(encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(f'{{"id": "{doc_id}"'):
                return json.loads(line)["text"]
    raise LookupError(doc_id)


# --- sentences ------------------------------------------------------------------------------
def test_split_keeps_decimals_p_values_and_abbreviations_inside_sentences():
    text = _abstract("pubmed:19917839")  # FNCLCC-PACS 04: "hazard ratio, 0.86; ... P = .41, ..."
    sents = rq.markdown_sentences(text)
    hr = next(s for s in sents if s.startswith("Random assignment to the trastuzumab arm"))
    assert hr.endswith(
        "(hazard ratio, 0.86; 95% CI, 0.61 to 1.22; P = .41, log-rank stratified on "
        "pathologic node involvement)."
    )
    assert (
        "Three-year DFS rates were 78% (95% CI, 72.3 to 82.5) and 81% (95% CI, 75.3 to 85.4) in the "
        "observation and trastuzumab arms, respectively." in sents
    )
    assert rq.markdown_sentences(
        "As in Smith et al. 2019 the doses differed, e.g. 6 mg/kg i.v. vs. 8 mg/kg. "
        "Dr. Jones agreed. discontinued treatment due to cardiac events"
    ) == [
        "As in Smith et al. 2019 the doses differed, e.g. 6 mg/kg i.v. vs. 8 mg/kg.",
        "Dr. Jones agreed.",
        "discontinued treatment due to cardiac events",
    ]


def test_split_strips_citations_and_skips_headings_quotes_and_tables():
    md = (
        "### Cardiac safety\n> Written in **offline extractive mode**.\n| a | b |\n"
        "- Brain natriuretic peptide was elevated in 40% of patients [3][4]. LVEF fell below 50% in 8% [@src_012]."
    )
    assert rq.markdown_sentences(md) == [
        "Brain natriuretic peptide was elevated in 40% of patients.",
        "LVEF fell below 50% in 8%.",
    ]


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        (
            "Three-year DFS rates were 78% (95% CI, 72.3 to 82.5) and 81% (95% CI, 75.3 to 85.4) in the observation "
            "and trastuzumab arms, respectively.",
            None,
        ),
        (
            "For the majority of CVD risk factors, similar proportions of patients and controls (35-60%) were "
            'classified as "undesirable."',
            None,
        ),
        ("pCR in the breast and axilla was seen in 30 % of patients in both arms.", None),
        ("… 41 (18%) discontinued treatment due to cardiac events (any grade).", "ellipsis"),
        (
            "Of the 234 patients (90%) who received at least one administration of trastuzumab, 196 (84%) received...",
            "ellipsis",
        ),
        ("Cardiorespiratory fitness and body mass index were correlated", "no end"),
        ("discontinued treatment due to cardiac events (any grade).", "lower-case start"),
        ("), 196 (84%) received at least 6 months of treatment.", "lower-case start"),
    ],
)
def test_truncation_reason_on_corpus_sentences(sentence, reason):
    assert rq.truncation_reason(sentence) == reason


# --- near duplicates on a real article ---------------------------------------------------------
def test_freshwiki_hilary_repeated_subsections_are_found(encode):
    """FreshWiki's Hurricane_Hilary.txt prints the Impact subsections' text also under Preparations
    (lines 14/24 and 18/28 are identical): every sentence of Impact > Mexico and Impact > United States
    is an exact repeat; the lead's landfall sentence is paraphrased once in Meteorological history."""
    report = rq.report_from_markdown(
        FRESHWIKI_HILARY.read_text(encoding="utf-8"), "Hurricane Hilary"
    )
    assert [(s.heading, s.level) for s in report.sections] == [
        ("Meteorological history", 1),
        ("Preparations", 1),
        ("Mexico", 2),
        ("United States", 2),
        ("Impact", 1),
        ("Mexico", 2),
        ("United States", 2),
        ("In popular culture", 2),
    ]
    assert report.lead.startswith(
        "Hurricane Hilary was a large, potent Category 4 Pacific hurricane"
    )
    sents = rq.report_sentences(report)
    texts = [s.text for s in sents]
    dups = rq.near_duplicates(texts, encode(texts))
    exact = {i for i, _, c in dups if c == 1.0}
    repeated = {i for i, s in enumerate(sents) if s.section in (5, 6)}
    assert len(repeated) == 34 and exact == repeated
    paraphrase = [(i, j, c) for i, j, c in dups if c < 1.0]
    assert len(paraphrase) == 1
    i, j, c = paraphrase[0]
    assert (
        0.92 <= c < 0.95 and sents[i].heading == "Meteorological history" and sents[j].section == -1
    )
    assert "landfall" in texts[i] and "landfall" in texts[j]
    m = rq.measure(report, "Hurricane Hilary", encode)
    assert m["sentences"] == 106 and m["near_duplicate_rate"] == pytest.approx(35 / 106)
    assert m["truncated_fragment_rate"] == 0.0


def test_storm_article_reads_clean_and_lead_comes_from_summary(encode):
    """STORM's polished Hurricane Hilary article: ``# summary`` is the lead (4 paragraphs, 11
    sentences), 16 headings below it, no repeated sentence and no cut fragment."""
    text = (STORM_HILARY / "storm_polished_article.txt").read_text(encoding="utf-8")
    report = rq.report_from_markdown(text, "Hurricane Hilary")
    assert len(report.sections) == 16 and report.sections[0].heading == "Background"
    m = rq.measure(report, "Hurricane Hilary", encode)
    assert m["lead_sentences"] == 11
    assert m["near_duplicate_rate"] == 0.0 and m["truncated_fragment_rate"] == 0.0
    assert 0.0 < m["section_fit"] < 1.0
    assert len(m["misplaced"]) == round((1 - m["section_fit"]) * m["section_sentences"])


# --- section fit, questions and citations on a report built from corpus abstracts --------------
def _trastuzumab_report(swap: bool = False) -> Report:
    cardiac = (
        "Cardiac abnormalities were suggested by left ventricular ejection fraction (LVEF) <50% in 8% of "
        "patients, LVEF remained >10% below pretreatment values in 38%, whereas 50% presented with resting "
        "sinus tachycardia [2]. Brain natriuretic peptide was significantly elevated in 40% of patients and "
        "was correlated with LVEF (r = -0.72, P =or< 0.001) [2]."
    )
    efficacy = (
        "Random assignment to the trastuzumab arm was associated with a nonsignificant 14% reduction in the "
        "risk of relapse (hazard ratio, 0.86; 95% CI, 0.61 to 1.22; P = .41, log-rank stratified on "
        "pathologic node involvement) [1]. Three-year DFS rates were 78% (95% CI, 72.3 to 82.5) and 81% "
        "(95% CI, 75.3 to 85.4) in the observation and trastuzumab arms, respectively [1]."
    )
    cut = "… 41 (18%) discontinued treatment due to cardiac events (any grade) [1]."
    lead = (
        "Trastuzumab is a monoclonal antibody given to patients with HER2-positive breast cancer [1]. "
        "Three-year DFS rates were 78% (95% CI, 72.3 to 82.5) and 81% (95% CI, 75.3 to 85.4) in the "
        "observation and trastuzumab arms, respectively [1]."
    )
    sections = [
        ReportSection(heading="Cardiotoxicity", text=f"{efficacy if swap else cardiac} {cut}"),
        ReportSection(heading="Disease-free survival", text=cardiac if swap else efficacy),
    ]
    refs = [
        Reference(
            number=n,
            source_id=f"src_{n:03d}",
            title=t,
            url=f"https://pubmed.ncbi.nlm.nih.gov/{p}/",
            source_type="pubmed",
            external_id=p,
        )
        for n, t, p in (
            (1, "FNCLCC-PACS 04", "19917839"),
            (2, "Cardiovascular risk profile…", "17507633"),
        )
    ]
    body = "\n\n".join(["# Trastuzumab", lead, *[f"## {s.heading}\n\n{s.text}" for s in sections]])
    return Report(title="Trastuzumab", lead=lead, sections=sections, references=refs, markdown=body)


def test_measure_counts_duplicates_fragments_and_section_fit(encode):
    topic = "Trastuzumab in HER2-positive breast cancer"
    m = rq.measure(_trastuzumab_report(), topic, encode)
    # 2 lead + 3 in Cardiotoxicity + 2 in Disease-free survival; the DFS-rates sentence is printed twice
    assert (m["sentences"], m["lead_sentences"], m["section_sentences"]) == (7, 2, 5)
    assert m["near_duplicate_rate"] == pytest.approx(1 / 7)
    assert m["near_duplicates"][0]["sentence"].startswith("Three-year DFS rates")
    assert m["truncated_fragment_rate"] == pytest.approx(1 / 7)
    assert m["truncated_fragments"] == [
        {
            "sentence": "… 41 (18%) discontinued treatment due to cardiac events (any grade).",
            "reason": "ellipsis",
        }
    ]
    assert m["section_fit"] == 1.0 and m["misplaced"] == []
    assert m["citation_integrity"] is True and m["references"] == 2
    assert m["questions"] is None and m["questions_answered"] is None
    # efficacy sentences filed under Cardiotoxicity and the cardiac ones under DFS: all 4 misplaced
    swapped = rq.measure(_trastuzumab_report(swap=True), topic, encode)
    assert swapped["section_fit"] == pytest.approx(1 / 5)
    assert {d["nearest"] for d in swapped["misplaced"]} == {
        "Cardiotoxicity",
        "Disease-free survival",
    }


def test_citation_problems_are_reported():
    report = _trastuzumab_report()
    bad = report.model_copy(update={"references": report.references[:1]})
    assert rq.citation_problems(bad) == ["[2] is out of range 1..1"] * 2


def test_questions_answered_from_report_questions():
    class QuestionReport(Report):  # report.questions as plain dicts (the metric reads either shape)
        questions: list[dict]

    base = _trastuzumab_report()
    qs = [
        {
            "key": "safety.cardiac",
            "label": "Cardiac safety",
            "heading": "Cardiotoxicity",
            "status": "answered",
            "sources": [1],
        },
        {
            "key": "clinical.efficacy",
            "label": "Efficacy",
            "heading": "Disease-free survival",
            "status": "answered",
            "sources": [2],
        },
        {
            "key": "market.status",
            "label": "Market status",
            "heading": "",
            "status": "insufficient",
            "sources": [],
        },
    ]
    report = QuestionReport(**{**base.model_dump(), "questions": qs})
    q = rq.questions_answered(
        report, ["safety.cardiac", "clinical.efficacy", "market.status", "dosing.regimen"]
    )
    assert (
        q["total"] == 3
        and q["answered"] == 2
        and q["insufficient"] == 1
        and q["missing"] == ["dosing.regimen"]
    )
    assert q["stated_insufficient"] == 0 and q["answered_share"] == pytest.approx(2 / 4)
    stated = QuestionReport(
        **{
            **base.model_dump(),
            "questions": qs,
            "markdown": base.markdown + "\n\nMarket status: 0 of 2 sources needed; the "
            "evidence found does not establish approval status.\n",
        }
    )
    assert rq.questions_answered(stated)["stated_insufficient"] == 1
    assert rq.questions_answered(stated)["addressed_share"] == pytest.approx(1.0)
    assert rq.questions_answered(base) is None
