"""Clean extractive writing rules on real sentences of the shared corpus:
whole sentences only, off-topic sources left out, no sentence twice, each sentence in the
section it fits best, headings that name a subject, and the insufficient-evidence sentence."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from research.engines.base import LeadQuestion
from research.engines.extractive.lead import _not_contained, question_lead
from research.engines.extractive.writing import names_subject
from research.models import (
    EvidencePassage,
    Outline,
    OutlineSection,
    Question,
    ReportSection,
    SourceRecord,
    Syllabus,
)
from research.pipeline import answers, material, sections, statements
from research.pipeline.dedupe import dedupe_report
from research.planning.kinds import COMPARISON_QUESTIONS, PRIMARY_OUTCOMES
from research.planning.syllabus import STORM_QUESTIONS
from research.search.local import _truncate
from research.text import ANAPHORA, is_whole, split_sentences
from research.text.findings import PLAIN, finding_weight
from research.text.frame import frame_question
from research.text.vectors import Vectors

TOPIC = "Trastuzumab in HER2-positive breast cancer"


@pytest.fixture(scope="module")
def docs(corpus_path) -> dict[str, dict]:
    wanted = {
        "pubmed:28355372",
        "pubmed:22987084",
        "pubmed:16236737",
        "pubmed:27348762",
        "pubmed:20113825",
        "pubmed:31171092",
        "pubmed:28577685",
    }
    out = {}
    with corpus_path.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if d["id"] in wanted:
                out[d["id"]] = d
    assert set(out) == wanted
    return out


@pytest.fixture(scope="module")
def vectors() -> Vectors:
    return Vectors()


def _source(n: int, doc: dict) -> SourceRecord:
    return SourceRecord(
        source_id=f"src_{n:03d}",
        citation_id=f"cit_{n}",
        source_type="pubmed",
        external_id=doc["id"].split(":")[1],
        url=doc["url"],
        title=doc["title"],
    )


def test_snippet_cuts_are_not_sentences_full_text_sentences_are(docs):
    doc = docs["pubmed:22987084"]  # NSABP B-31 cardiac follow-up
    snippet = _truncate(doc["text"], 180)  # what the local search shows an engine
    assert snippet.endswith("…")
    assert not any(is_whole(s) for s in split_sentences(snippet)[-1:])
    whole = material.clean_sentences(doc["text"], doc["title"])
    assert len(whole) >= 4
    assert all(is_whole(s) and "…" not in s for s in whole)
    assert all(s[0].isupper() or s[0].isdigit() for s in whole)
    # the title that opens a PubMed text is not a sentence of the report
    assert not any(s.rstrip(".") == doc["title"].rstrip(".") for s in whole)
    assert not is_whole(
        "To evaluate the efficacy and safety of trastuzumab."
    ) or material._PURPOSE.match("To evaluate the efficacy and safety of trastuzumab.")


def test_a_protocols_hypothesis_is_not_a_sentence_of_the_report(docs):
    doc = docs["pubmed:28577685"]  # Lisinopril or Coreg CR: a trial's rationale and design
    whole = material.clean_sentences(doc["text"], doc["title"])
    assert not any(s.startswith("We hypothesize") for s in whole)  # a hypothesis states no finding
    assert any("cardiotoxicity" in s for s in whole)  # the rest of the abstract stays usable
    assert not material.clean_sentences(
        "Patients will be randomized to lisinopril or carvedilol for one year."
    )


def test_off_topic_source_is_left_out(docs, vectors):
    blue, b31 = (
        docs["pubmed:28355372"],
        docs["pubmed:22987084"],
    )  # methylene blue SLN vs trastuzumab
    sources = [_source(1, blue), _source(2, b31)]
    texts = {"src_001": blue["text"], "src_002": b31["text"]}
    assert material.on_topic_sources(vectors, TOPIC, sources, texts) == {"src_002"}
    units = material.units_for(vectors, TOPIC, sources, texts)
    assert units and {u.source_id for u in units} == {"src_002"}
    assert not any("methylene" in u.text.lower() for u in units)


def test_no_sentence_twice_across_lead_and_sections(docs, vectors):
    sents = material.clean_sentences(
        docs["pubmed:16236737"]["text"], docs["pubmed:16236737"]["title"]
    )
    a, b, c = sents[:3]
    near = (
        a.replace("trastuzumab", "Trastuzumab", 1).rstrip(".") + " overall."
    )  # same sentence, slightly edited
    lone = material.clean_sentences(
        docs["pubmed:22987084"]["text"], docs["pubmed:22987084"]["title"]
    )[0]
    lead = f"{a}[@src_001] {lone}[@src_002]"
    secs = [
        ReportSection(heading="Efficacy", text=f"{a}[@src_001] {b}[@src_001]\n\n{near}[@src_003]"),
        ReportSection(heading="Design", text=f"{c}[@src_001] {a}[@src_004]"),
        ReportSection(heading="Cardiac Safety", text=f"{lone}[@src_002]"),
    ]
    new_lead, out = dedupe_report(vectors, lead, secs)
    body = [new_lead, *[s.text for s in out]]
    assert sum(t.count(a) for t in body) == 1 and a in new_lead
    assert all(near not in t for t in body)
    assert b in out[0].text and c in out[1].text
    # a lead sentence that is a section's only sentence leaves the lead, not the section
    assert lone not in new_lead and lone in out[2].text
    assert "[@src_002]" in out[2].text and out[0].text.count("\n\n") == 0


def test_each_sentence_goes_once_to_its_nearest_fitting_section(docs, vectors):
    ids = [
        "pubmed:22987084",
        "pubmed:27348762",
        "pubmed:31171092",
        "pubmed:16236737",
        "pubmed:20113825",
    ]
    sources = [_source(i + 1, docs[d]) for i, d in enumerate(ids)]
    texts = {s.source_id: docs[d]["text"] for s, d in zip(sources, ids, strict=True)}
    units = material.units_for(vectors, TOPIC, sources, texts)
    assert len(units) >= 15
    efficacy = Question(
        key="clinical.efficacy",
        label="Clinical Efficacy",
        description="Trial results, patient outcomes, response rates",
        min_sources=2,
    )
    outline = Outline(
        sections=[
            OutlineSection(heading="Cardiotoxicity Prevention"),
            OutlineSection(heading="Clinical Efficacy"),
        ]
    )
    finalized = {
        "questions": {
            "clinical.efficacy": {"sources": [{"source_id": "src_004"}, {"source_id": "src_005"}]}
        }
    }
    plans = sections.plan_sections(
        vectors, TOPIC, outline, Syllabus(name="t", questions=[efficacy]), finalized
    )
    assert [p.heading for p in plans] == ["Clinical Efficacy", "Cardiotoxicity Prevention"]
    sections.allocate(vectors, TOPIC, plans, units)
    eff, cardio = plans
    assert eff.status == "answered" and eff.units and cardio.units
    assert {u.source_id for u in eff.units} <= {"src_004", "src_005"}  # only the question's sources
    placed = [u for p in plans for u in p.units]
    assert len(placed) == len(set(placed))  # no sentence in two sections
    fit = vectors.sim([u.text for u in placed], [p.query(TOPIC) for p in plans]).argmax(axis=1)
    owner = [j for j, p in enumerate(plans) for _ in p.units]
    assert np.mean(fit == np.array(owner)) >= 0.85
    assert any("cardi" in u.text.lower() for u in cardio.units)
    vecs = vectors.encode([u.text for u in placed])
    sims = vecs @ vecs.T - np.eye(len(placed)) * 2
    assert float(sims.max()) < 0.92


def test_unanswered_question_gets_one_sentence_with_the_count():
    q = Question(
        key="market.status",
        label="Market Status",
        description="Development stage, approvals, commercialization",
        min_sources=3,
    )
    s = sections.insufficient_sentence(q, 1)
    assert s == (
        "Market Status: 1 of 3 sources needed; the evidence found does not establish market status "
        "(development stage, approvals, commercialization)."
    )
    assert "5 sources were assigned to this question (3 needed)" in sections.insufficient_sentence(
        q, 5
    )
    pointed = sections.insufficient_sentence(q, 5, ["Clinical Efficacy", "Adjuvant Chemotherapy"])
    assert "quoted under “Clinical Efficacy” and “Adjuvant Chemotherapy”" in pointed


def test_headings_name_a_subject(docs):
    sents = split_sentences(docs["pubmed:16236737"]["text"])
    with_cycles = [s for s in sents if "cycles" in s.lower()]
    assert with_cycles and not names_subject("Cycles", with_cycles)  # "four cycles of chemotherapy"
    assert names_subject("HER2", sents) and names_subject("Cardiac Safety", [])
    assert names_subject("Trastuzumab", ["Patients given Trastuzumab had fewer relapses."])
    assert not names_subject("Patients", sents)


def test_lead_prefers_a_finding_that_stands_alone(vectors):
    # The Safety Profile section of the drug run. Its "this regimen" sentence
    # is closest to the question, but the lead would never say which regimen: the lead takes the
    # T-DM1 finding, and the section keeps the other sentence next to the trial it belongs to.

    regimen = (
        "The risk versus benefit of trastuzumab as given in this regimen remains strongly in favor "
        "of trastuzumab.[12]"
    )
    tdm1 = (
        "In this randomized phase II study, first-line treatment with T-DM1 for patients with HER2-positive MBC "
        "provided a significant improvement in PFS, with a favorable safety profile, versus HT.[2]"
    )
    section = ReportSection(heading="Safety Profile", text=f"{regimen} {tdm1}")
    spec = STORM_QUESTIONS["clinical.safety"]
    q = LeadQuestion(
        key="clinical.safety",
        label=spec["label"],
        description=spec["description"],
        heading="Safety Profile",
        status="answered",
        sources_found=28,
        min_sources=3,
    )
    sims = vectors.sim([f"Trastuzumab: {q.label}. {q.description}"], [regimen[:-4], tdm1[:-3]])[0]
    assert sims[0] > sims[1]  # by similarity alone the dangling sentence would lead
    assert ANAPHORA.search(regimen) and not ANAPHORA.search(tdm1)
    assert question_lead(vectors, TOPIC, [section], [q]) == tdm1


def test_a_shared_passage_goes_to_the_question_with_nothing_else_to_quote(vectors):
    """Two answered questions, one passage answering both: the question whose only evidence it
    is quotes it; the other quotes its own, and neither section is left without text. When a
    question's every passage is quoted by another question, its section says where."""
    hf = Question(
        key="cardiac.hf", label="Heart failure", description="Symptomatic CHF", min_sources=1
    )
    rec = Question(
        key="cardiac.recovery", label="Recovery", description="Reversibility", min_sources=1
    )
    shared = "Heart failure resolved in most women after trastuzumab was stopped."
    own = "Symptomatic heart failure occurred in 4% of the women given trastuzumab."

    def ev(q: str, sid: str, text: str, score: float) -> EvidencePassage:
        return EvidencePassage(question=q, source_id=sid, passage=text, score=score, start=0, end=1)

    evidence = {
        "src_1": [
            ev("cardiac.hf", "src_1", shared, 0.9),
            ev("cardiac.recovery", "src_1", shared, 0.8),
        ],
        "src_2": [ev("cardiac.hf", "src_2", own, 0.7)],
    }
    plans = [
        sections.SectionPlan(heading="Heart failure", question=hf, sources=["src_1", "src_2"]),
        sections.SectionPlan(heading="Recovery", question=rec, sources=["src_1"]),
    ]
    answers.fill(vectors, plans, evidence, {"cardiac.hf": 2, "cardiac.recovery": 1}, "standard")
    assert [u.text for u in plans[1].units] == [shared]  # its only evidence
    assert [u.text for u in plans[0].units] == [own]
    assert all(p.status == "answered" for p in plans)

    # one question's only passage is also the other's: the later one says where it is quoted
    evidence = {"src_1": evidence["src_1"]}
    plans = [
        sections.SectionPlan(heading="Heart failure", question=hf, sources=["src_1"]),
        sections.SectionPlan(heading="Recovery", question=rec, sources=["src_1"]),
    ]
    answers.fill(vectors, plans, evidence, {"cardiac.hf": 1, "cardiac.recovery": 1}, "standard")
    empty = next(p for p in plans if not p.units)
    assert empty.status == "answered" and empty.elsewhere and empty.elsewhere_sources == ["src_1"]
    assert empty.question is not None
    text = statements.quoted_under(empty.question, empty.elsewhere, empty.elsewhere_sources)
    assert "is quoted under “" in text and text.endswith("[@src_1].")


def test_a_primary_question_gets_the_larger_share_within_the_same_length():
    """Does it work is what a report on a treatment exists to answer: its section gets twice
    the sentences of the others and room for a source's second result; the report's total
    stays ``per_question × questions``; a scarce question's spare goes to the others."""
    assert answers.share_budget([20, 20, 20], 6) == [6, 6, 6]
    shares = answers.share_budget([40, 20, 20], 6, [2, 1, 1])
    assert shares[0] >= 2 * max(shares[1:]) and sum(shares) == 18
    # the primary question has 3 sources (6 passages with seconds): the rest goes elsewhere
    shares = answers.share_budget([6, 20, 20], 6, [2, 1, 1])
    assert shares[0] == 6 and sum(shares) == 18


def test_among_equal_results_the_one_on_the_questions_outcome_is_quoted_first(vectors):
    """Two results the judgement scores alike (its score saturates at 1): the one naming the
    question's own outcome is chosen before another end point of the same kind of trial."""
    frame = frame_question("Exercise interventions for cancer-related fatigue in women")
    off = "Exercise improved cardiorespiratory fitness compared with usual care (P < .001)."
    on = "Exercise reduced fatigue compared with usual care (P = .01)."

    def ev(sid: str, text: str) -> EvidencePassage:
        return EvidencePassage(
            question="efficacy.intervention", source_id=sid, passage=text, score=1.0, start=0, end=1
        )

    picked = answers.choose(vectors, [ev("src_1", off), ev("src_2", on)], 1, [], frame)
    assert [p.passage for p in picked] == [on]
    # without the question's frame the order is the judgement's alone (ties by source id)
    assert [
        p.passage for p in answers.choose(vectors, [ev("src_1", off), ev("src_2", on)], 1, [])
    ] == [off]


def _efficacy_of_a_versus_b(sources_found: int, min_sources: int) -> LeadQuestion:
    """The answered efficacy question of "drug A versus drug B", as the lead sees it."""
    spec = COMPARISON_QUESTIONS["efficacy.comparison"]
    return LeadQuestion(
        key="efficacy.comparison",
        label="Efficacy: drug A vs drug B",
        description=spec["description"].format(
            a="drug A", b="drug B", in_s="", outcomes=PRIMARY_OUTCOMES
        ),
        heading="Efficacy",
        status="answered",
        sources_found=sources_found,
        min_sources=min_sources,
    )


def test_the_lead_answers_a_comparison_with_several_trials_results(vectors):
    """Does it work is answered by what the strongest trials found: the lead quotes up to three
    results of the primary question, each from a source no other lead sentence cites, and no
    sentence that states no result."""
    topic = "Drug A versus drug B as adjuvant therapy for early disease"
    texts = [
        "Disease-free survival was longer with drug A than with drug B (HR 0.82; P = 0.01).[1]",
        "Drug A reduced recurrence by 20% compared with drug B in the second trial.[2]",
        "In the first trial, drug A also lowered distant recurrence compared with drug B (HR 0.79).[1]",
        "Overall survival did not differ between drug A and drug B (P = 0.4).[3]",
        "Patients were randomly assigned to drug A or drug B.[4]",
    ]
    q = _efficacy_of_a_versus_b(sources_found=4, min_sources=3)
    lead = question_lead(
        vectors, topic, [ReportSection(heading="Efficacy", text=" ".join(texts))], [q]
    )
    chosen = [t for t in texts if t in lead]
    assert len(chosen) == 3
    cites = [c for t in chosen for c in re.findall(r"\[\d+\]", t)]
    assert len(cites) == len(set(cites))  # three sources, one sentence each
    assert texts[4] not in lead  # how a trial was run is no answer


def test_the_lead_gives_each_trials_first_result(vectors):
    """An abstract reports its primary end point first: of one trial's results, in the
    section's (the source's) order, the lead gives the first, not the one closest in words."""
    topic = "Drug A versus drug B as adjuvant therapy for early disease"
    dfs = (
        "The hazard ratio for disease-free survival with drug A as compared with drug B was 0.68 "
        "(95% CI, 0.56 to 0.82), a 32 percent reduction in risk.[1]"
    )
    os_ = "Survival, recurrence and response with drug A compared with drug B: 93 vs 106 deaths.[1]"
    q = _efficacy_of_a_versus_b(sources_found=1, min_sources=1)
    lead = question_lead(
        vectors, topic, [ReportSection(heading="Efficacy", text=f"{dfs} {os_}")], [q]
    )
    assert lead.startswith(dfs), lead


def test_the_lead_quotes_the_trials_of_the_question_before_their_neighbours(vectors):
    """Two results read alike; the one whose source is titled like the question (relevance 1.0)
    leads, not the neighbouring study's (0.1), whichever names the arms more plainly."""
    topic = "Drug A versus drug B as adjuvant therapy for early disease"
    near = "Disease-free survival with drug A and drug B did not differ (P = 0.3).[2]"
    far = "Detection rates with drug A and drug B did not differ between the groups (P = 0.4).[1]"
    q = _efficacy_of_a_versus_b(sources_found=2, min_sources=1)
    section = [ReportSection(heading="Efficacy", text=f"{far} {near}")]
    without = question_lead(vectors, topic, section, [q])
    lead = question_lead(vectors, topic, section, [q], {1: 0.1, 2: 1.0})
    assert lead.startswith(near), (without, lead)
    assert question_lead(vectors, topic, section, [q], {1: 1.0, 2: 0.1}).startswith(far)


def test_a_harms_section_quotes_no_treatment_schedule(vectors):
    """How the arms were treated names no harm and states no finding: under harms it is no
    answer, where a harm's rate is."""
    schedule = (
        "Patients in the standard group received examplumab every three weeks for five courses."
    )
    harm = "Heart failure occurred in 4% of the women given examplumab."
    passages = [
        EvidencePassage(
            question="harms.comparison", source_id=f"src_{i}", passage=t, score=0.9, start=0, end=1
        )
        for i, t in enumerate([schedule, harm])
    ]
    assert [p.passage for p in answers.choose(vectors, passages, 4, [])] == [harm]


def test_the_pages_opening_is_quoted_under_what_happened(vectors):
    """The opening sentences of the page on the topic (scored ``DEFINITION_SCORE`` on the
    question of what happened) stay under it together, though another question scores them
    higher, and other sources still get a sentence each beside them."""
    what = Question(key="background.overview", label="What happened", description="", min_sources=1)
    other = Question(key="topic.militants", label="Militants", description="", min_sources=1)
    opening = [
        "On 3 May 2031 militants attacked a police patrol in Exampla.",
        "A police sergeant was killed and three attackers died.",
    ]
    later = "Officials later said the group had trained abroad."

    def ev(q: str, sid: str, text: str, score: float, start: int) -> EvidencePassage:
        return EvidencePassage(
            question=q, source_id=sid, passage=text, score=score, start=start, end=start + 1
        )

    evidence = {
        "src_1": [ev("background.overview", "src_1", t, 0.9, i) for i, t in enumerate(opening)]
        + [ev("topic.militants", "src_1", t, 1.0, i) for i, t in enumerate(opening)],
        "src_2": [ev("background.overview", "src_2", later, 0.5, 0)],
    }
    plans = [
        sections.SectionPlan(heading="What happened", question=what, sources=["src_1", "src_2"]),
        sections.SectionPlan(heading="Militants", question=other, sources=["src_1"]),
    ]
    answers.fill(
        vectors, plans, evidence, {"background.overview": 2, "topic.militants": 1}, "brief"
    )
    assert [u.text for u in plans[0].units] == [*opening, later]


def test_the_page_on_an_event_opens_the_lead_with_its_own_account(vectors):
    """ "What happened": the section opens with the opening sentences of the page titled as the
    question; the lead gives them all, not one sentence of it, whichever reads like a definition.
    A page titled far from the question (relevance 0.1) opens nothing."""
    topic = "Exampla launch failure in Examplia, May 2031"
    account = [
        "On 3 May 2031, the Exampla rocket lifted off from Examplia.[1]",
        "The vehicle was destroyed four minutes after lifting off.[1]",
        "Debris fell across 385 acres of the launch site.[1]",
    ]
    other = "Officials congratulated the team on the test.[2]"
    q = LeadQuestion(
        key="background.overview",
        label="What happened",
        heading="What happened",
        status="answered",
        sources_found=2,
    )
    section = [ReportSection(heading="What happened", text=" ".join([*account, other]))]
    lead = question_lead(vectors, topic, section, [q], {1: 1.0, 2: 0.5})
    assert lead.startswith(" ".join(account)), lead
    # ... and is the summary: another question's finding stays in its section
    reaction = LeadQuestion(
        key="key.actors", label="Response and reactions", heading="Response", status="answered"
    )
    said = "The agency grounded all flights for five months after the failure.[3]"
    both = [*section, ReportSection(heading="Response", text=said)]
    assert said not in question_lead(vectors, topic, both, [q, reaction], {1: 1.0, 3: 0.5})
    assert not question_lead(vectors, topic, section, [q], {1: 0.1, 2: 0.5}).startswith(
        " ".join(account[:2])
    )


def test_a_question_answered_only_by_how_studies_were_run_says_so(vectors):
    """Randomisation and what the control group received count for coverage (the judgement
    scored them) but answer nothing: the section quotes none of them and says what the sources
    report instead; a question with a finding quotes the finding, not the conduct beside it."""
    sub = Question(
        key="subgroups.benefit", label="Who benefits", description="Subgroups", min_sources=1
    )
    eff = Question(
        key="efficacy.intervention", label="Efficacy", description="Results", min_sources=1
    )
    conduct = [
        "Randomisation of 160 participants allocated 79 to the intervention group and 81 to a control group.",
        "The control group received the educational strategy only.",
    ]
    result = "Walking reduced fatigue by 20% compared with usual care (P = 0.01)."

    def ev(q: str, sid: str, text: str) -> EvidencePassage:
        return EvidencePassage(question=q, source_id=sid, passage=text, score=0.6, start=0, end=1)

    evidence = {
        "src_1": [
            ev("subgroups.benefit", "src_1", conduct[0]),
            ev("efficacy.intervention", "src_1", result),
        ],
        "src_2": [
            ev("subgroups.benefit", "src_2", conduct[1]),
            ev("efficacy.intervention", "src_2", conduct[1]),
        ],
    }
    plans = [
        sections.SectionPlan(heading="Efficacy", question=eff, sources=["src_1", "src_2"]),
        sections.SectionPlan(heading="Who benefits", question=sub, sources=["src_1", "src_2"]),
    ]
    answers.fill(
        vectors, plans, evidence, {"subgroups.benefit": 2, "efficacy.intervention": 2}, "standard"
    )
    assert [u.text for u in plans[0].units] == [result] and not plans[0].conduct_only
    assert plans[1].units == [] and plans[1].conduct_only == ["src_1", "src_2"]
    text = statements.conduct_statement(sub, plans[1].conduct_only)
    assert text.endswith("[@src_1][@src_2].") and finding_weight(text) < PLAIN  # the lead skips it


def test_who_benefits_is_asked_of_the_trials_that_answer_the_question(vectors):
    """A subgroup result of a trial that answers whether the treatment works is quoted under who
    benefits; one of a study that answers neither efficacy nor harms is not, while the trial
    has one. With no such trial's subgroup, the other study's stands."""
    sub = Question(
        key="subgroups.benefit", label="Who benefits", description="Subgroups", min_sources=1
    )
    eff = Question(
        key="efficacy.intervention", label="Efficacy", description="Results", min_sources=1
    )
    result = "Walking reduced fatigue by 20% compared with usual care (P = 0.01)."
    trial_sub = "Women over 60 gained most from walking (fatigue 25% lower; P = 0.02)."
    other_sub = "Among smokers, a new dye found 12% more nodes than the old one (P = 0.03)."

    def ev(q: str, sid: str, text: str) -> EvidencePassage:
        return EvidencePassage(question=q, source_id=sid, passage=text, score=0.6, start=0, end=1)

    def plans_for(evidence):
        plans = [
            sections.SectionPlan(heading="Efficacy", question=eff, sources=list(evidence)),
            sections.SectionPlan(heading="Who benefits", question=sub, sources=list(evidence)),
        ]
        answers.fill(
            vectors,
            plans,
            evidence,
            {"subgroups.benefit": 2, "efficacy.intervention": 1},
            "standard",
            topic="Walking for fatigue in women with examplitis",
        )
        return plans

    trial = [
        ev("efficacy.intervention", "src_1", result),
        ev("subgroups.benefit", "src_1", trial_sub),
    ]
    other = [ev("subgroups.benefit", "src_2", other_sub)]
    plans = plans_for({"src_1": trial, "src_2": other})
    assert [u.text for u in plans[1].units] == [trial_sub]
    plans = plans_for({"src_1": trial[:1], "src_2": other})
    assert [u.text for u in plans[1].units] == [other_sub]


def test_an_unmet_statement_leaves_out_the_corpus_hint_of_the_plan():
    """The fitted syllabus shows the corpus's own words in plan review; the report's sentence on
    what was searched and found does not repeat that hint."""
    q = Question(
        key="efficacy.comparison",
        label="Efficacy: drug A vs drug B",
        description="Outcomes with drug A compared with drug B (corpus: Bone-Related Complications)",
        min_sources=5,
    )
    text = statements.unmet_statement(q, 4, None)
    assert "corpus:" not in text and text.endswith("drug B; what they report follows.")
    # with nothing quoted after it, the statement promises nothing
    assert statements.unmet_statement(q, 1, None, follows=False).endswith("with drug B.")


def test_a_source_whose_best_sentence_is_quoted_elsewhere_gives_its_next_one_first(vectors):
    """One passage per source before any source's second counts the sentences a section can
    still quote: a source whose best sentence the lead took gives its next result before another
    source's second."""
    a1 = "Drug A improved disease-free survival compared with drug B (HR 0.7; P = 0.01)."
    a2 = "Drug A lowered the risk of recurrence by 30% compared with drug B in the same trial."
    b1 = "Overall survival did not differ between drug A and drug B (P = 0.4)."
    b2 = "Distant recurrence was 5% with drug A and 7% with drug B (P = 0.2)."

    ev = _efficacy_passage
    passages = [
        ev("src_1", a1, 1.0),
        ev("src_1", a2, 0.9),
        ev("src_2", b1, 0.8),
        ev("src_2", b2, 0.7),
    ]
    picked = answers.choose(vectors, passages, 2, [a1])
    assert [p.passage for p in picked] == [a2, b1]


def test_an_open_primary_question_still_states_its_results_in_the_lead(vectors):
    """A primary question short of its bar is open, but the results of the sources it has are
    still the answer asked for: the lead states them, even a single trial's, and says how many
    sources of how many needed it rests on."""
    texts = [
        "Disease-free survival was longer with drug A than with drug B (HR 0.82; P = 0.01).[1]",
        "Drug A reduced recurrence by 20% compared with drug B in the second trial.[2]",
    ]
    q = LeadQuestion(
        key="efficacy.comparison",
        label="Efficacy: drug A vs drug B",
        description="Survival and recurrence with drug A compared with drug B",
        heading="Efficacy",
        status="unmet",
        sources_found=2,
        min_sources=5,
    )
    lead = question_lead(
        vectors,
        "Drug A versus drug B as adjuvant therapy for early disease",
        [ReportSection(heading="Efficacy", text=" ".join(texts))],
        [q],
    )
    assert all(t in lead for t in texts) and "(2 of 5 sources)" in lead
    alone = q.model_copy(update={"sources_found": 1})
    lead = question_lead(
        vectors,
        "Drug A versus drug B as adjuvant therapy for early disease",
        [ReportSection(heading="Efficacy", text=texts[0])],
        [alone],
    )
    # a single trial is what the analyst has: its result leads, with the count beside it
    assert texts[0] in lead and "(1 of 5 sources)" in lead
    # no source compares the two: the lead says so first, then what is open
    none = q.model_copy(update={"sources_found": 0})
    lead = question_lead(
        vectors,
        "Drug A versus drug B as adjuvant therapy for early disease",
        [ReportSection(heading="Efficacy", text="")],
        [none],
    )
    assert lead.startswith("No source found compares drug A with drug B directly.")
    assert "(0 of 5 sources)" in lead
    # ... and when its section quotes what each arm did in trials of its own, the lead gives
    # one result per arm after saying so (an indirect comparison: the question stays open)
    own = [
        "Drug A reduced recurrence by 30% compared with placebo in early disease.[1]",
        "Drug B reduced recurrence by 20% compared with observation in early disease.[2]",
    ]
    lead = question_lead(
        vectors,
        "Drug A versus drug B as adjuvant therapy for early disease",
        [ReportSection(heading="Efficacy", text=" ".join(own))],
        [none],
    )
    assert lead.startswith(
        "No source found compares drug A with drug B directly; trials of each against another "
        f"comparator report the following. {own[0]} {own[1]}"
    )
    assert "(0 of 5 sources)" in lead
    aims = [
        "This inclusion will concern all patients given drug A or drug B.[1]",
        "Drug B has been used for many years.[2]",
    ]
    lead = question_lead(
        vectors,
        "Drug A versus drug B as adjuvant therapy for early disease",
        [ReportSection(heading="Efficacy", text=" ".join(aims))],
        [q],
    )
    assert not any(t in lead for t in aims)  # an open question leads only with a result


def test_an_efficacy_section_quotes_outcomes_of_benefit_before_a_harm_from_another_source(vectors):
    """Each source's best sentence comes before any source's second, except that a sentence of
    the other family of outcome waits: under "does it work" a second survival result is quoted
    before another source's fracture rate, however high the judgement scored it."""
    dfs = "Disease-free survival was longer with drug A than with drug B (HR 0.82; P = 0.01)."
    os_ = "Overall survival did not differ between drug A and drug B (P = 0.4)."
    harm = "Grade 3 or 4 toxicity was more frequent with drug A than with drug B (12% vs 6%)."
    ev = _efficacy_passage
    picked = answers.choose(
        vectors, [ev("src_1", dfs, 0.9), ev("src_1", os_, 0.8), ev("src_2", harm, 1.0)], 2, []
    )
    assert [p.passage for p in picked] == [dfs, os_]


def _efficacy_passage(sid: str, text: str, score: float) -> EvidencePassage:
    """An evidence passage of ``sid`` for a comparison's efficacy question."""
    return EvidencePassage(
        question="efficacy.comparison", source_id=sid, passage=text, score=score, start=0, end=1
    )


def test_an_unmet_results_question_names_the_trial_registrations_found():
    """Registrations hold no results: the unmet statement says how many were found and names
    them, so the analyst can follow the trials; none found, nothing said."""
    assert statements.registrations_note([]) == ""
    one = statements.registrations_note(["NCT00000001"])
    assert one == (
        "The sources found include 1 trial registration (NCT00000001), which states what its "
        "trial will measure, not results."
    )
    many = statements.registrations_note([f"NCT0000000{i}" for i in range(6)] + ["NCT00000001"])
    assert (
        "6 trial registrations (NCT00000000, NCT00000001, NCT00000002, NCT00000003 and 2 more)"
        in many
    )


def test_a_primary_questions_share_grows_to_two_results_a_trial_within_its_depth():
    """Each trial's headline results are what an analyst reads "does it work" for: its share
    grows to two results of each source, to twice the share at most; a brief report stays
    brief."""

    def ev(sid: str) -> EvidencePassage:
        return EvidencePassage(
            question="efficacy.intervention", source_id=sid, passage="x", score=0.9, start=0, end=1
        )

    results = [ev(f"src_{i}") for i in range(5) for _ in range(3)]  # five trials, three each
    assert answers.per_source_quota(results) == 10
    assert answers.results_quota(results, 6, "standard") == 10
    assert answers.results_quota(results, 4, "standard") == 8  # twice the share at most
    assert answers.results_quota(results, 4, "brief") == 4
    assert answers.results_quota(results, 12, "deep") == 12  # never below the share


def test_a_primary_question_quotes_two_results_of_each_trial(vectors):
    """With five trials of two results each, every trial's two results are quoted, and a harm
    reported by one of them stays under the question on harms."""
    eff = Question(key="efficacy.intervention", label="Efficacy", description="", min_sources=1)
    harm = Question(key="harms.intervention", label="Harms", description="", min_sources=1)

    def ev(q: str, sid: str, text: str, score: float = 0.9) -> EvidencePassage:
        return EvidencePassage(question=q, source_id=sid, passage=text, score=score, start=0, end=1)

    results = {
        "src_1": [
            "Remission was 41% with drug Q vs 22% with placebo.",
            "Relapse within a year fell by a third among those on drug Q.",
        ],
        "src_2": [
            "Survival was longer with device R than with usual care (HR 0.7).",
            "Mortality at one year was 9% vs 14%.",
        ],
        "src_3": [
            "Symptom control improved in 60% vs 35% of the women.",
            "Recurrence was lower with the programme (P = 0.02).",
        ],
        "src_4": [
            "Complete response was seen in 18 of 40 children given the vaccine.",
            "Seroconversion reached 95% against 61% in the unvaccinated arm.",
        ],
        "src_5": [
            "Wound healing by day 30 improved with the dressing (P < 0.001).",
            "Infection-free healing was 88% versus 70% with gauze.",
        ],
    }
    side = "Grade 3 toxicity occurred in 12% vs 4% of the patients."
    evidence = {
        sid: [ev("efficacy.intervention", sid, t) for t in texts] for sid, texts in results.items()
    }
    evidence["src_1"] += [
        ev("efficacy.intervention", "src_1", side, 0.95),
        ev("harms.intervention", "src_1", side, 0.9),
    ]
    plans = [
        sections.SectionPlan(heading="Efficacy", question=eff, sources=list(results)),
        sections.SectionPlan(heading="Harms", question=harm, sources=["src_1"]),
    ]
    counts = {"efficacy.intervention": 5, "harms.intervention": 1}
    answers.fill(vectors, plans, evidence, counts, "standard")
    quoted = {u.text for u in plans[0].units}
    assert quoted == {t for texts in results.values() for t in texts}
    assert [u.text for u in plans[1].units] == [side]


def test_a_source_titled_for_the_opposite_setting_gives_no_section_a_sentence(vectors):
    """The report's other sections quote only sources the evidence gate keeps: a drug profile on
    early disease leaves out the same drug's trial titled for bone metastases."""
    topic = "Examplumab in early solid tumours"
    early = {
        "id": "pubmed:1",
        "url": "https://pubmed.ncbi.nlm.nih.gov/1/",
        "title": "Adjuvant examplumab in early solid tumours: a randomised trial",
    }
    spread = {
        "id": "pubmed:2",
        "url": "https://pubmed.ncbi.nlm.nih.gov/2/",
        "title": "Examplumab for patients with bone metastases from solid tumours",
    }
    texts = {
        "src_001": "Examplumab improved disease-free survival in early solid tumours (HR 0.71).",
        "src_002": "Examplumab reduced skeletal events in solid tumours (HR 0.64).",
    }
    sources = [_source(1, early), _source(2, spread)]
    assert material.on_topic_sources(vectors, topic, sources, texts) == {"src_001"}


def test_a_comparisons_lead_takes_no_one_arm_trial_and_no_third_comparator(vectors):
    """On "arvotinib versus belzumab", the lead sentence of a question that one-arm sources answer
    (who benefits) names both arms; a result of one arm against control leads no question."""
    topic = "Arvotinib versus belzumab as adjuvant therapy for early disease"
    spec = COMPARISON_QUESTIONS["subgroups.benefit"]
    q = LeadQuestion(
        key="subgroups.benefit",
        label="Who benefits: subgroups",
        description=spec["description"].format(
            a="arvotinib", b="belzumab", in_s="", outcomes=PRIMARY_OUTCOMES
        ),
        heading="Who benefits",
        status="answered",
        sources_found=3,
        min_sources=2,
    )
    one_arm = "In women over 70, belzumab reduced recurrence by 30% (HR 0.70; P = 0.02).[1]"
    control = (
        "In women over 70, arvotinib versus control gave a hazard ratio of 0.75 (P = 0.03).[2]"
    )
    both = "Women over 70 gained more from arvotinib than from belzumab (HR 0.71 vs 0.90; P = 0.04).[3]"
    section = ReportSection(heading="Who benefits", text=f"{one_arm} {control} {both}")
    assert question_lead(vectors, topic, [section], [q]) == both
    assert (
        question_lead(
            vectors,
            topic,
            [ReportSection(heading="Who benefits", text=f"{one_arm} {control}")],
            [q],
        )
        == ""
    )


def test_a_harms_section_quotes_no_result_that_reports_only_a_benefit(vectors):
    """A benefit is no answer to what harm a treatment does: under harms a survival result is
    never quoted, even with room left, while an efficacy section still quotes a harm last."""
    dfs = "Disease-free survival was longer with drug A than with drug B (HR 0.82; P = 0.01)."
    harm = "Grade 3 or 4 toxicity was more frequent with drug A than with drug B (12% vs 6%)."

    def ev(key: str, sid: str, text: str) -> EvidencePassage:
        return EvidencePassage(question=key, source_id=sid, passage=text, score=1.0, start=0, end=1)

    harms = answers.choose(
        vectors,
        [ev("harms.comparison", "src_1", dfs), ev("harms.comparison", "src_2", harm)],
        3,
        [],
    )
    assert [p.passage for p in harms] == [harm]
    efficacy = answers.choose(
        vectors,
        [ev("efficacy.comparison", "src_1", dfs), ev("efficacy.comparison", "src_2", harm)],
        3,
        [],
    )
    assert [p.passage for p in efficacy] == [dfs, harm]


def test_an_open_questions_section_says_when_the_lead_quotes_its_only_sentence(vectors):
    """The question the analyst asked leads the report with what its one source says; its
    section, left with its statement alone, says the summary quotes it (no sentence twice, no
    "what it reports follows" with nothing after it)."""
    q = Question(key="asked.question", label="What caused it?", description="x", min_sources=4)
    statement = statements.unmet_statement(q, 1, None)
    assert statement.endswith("; what it reports follows.")
    cause = "Heavier than usual monsoon rains followed a severe heat wave."
    secs = [ReportSection(heading=q.label, text=f"{statement}\n\n{cause}[@src_001]")]
    lead, out = dedupe_report(vectors, f"{cause}[@src_001]", secs)
    assert cause in lead and cause not in out[0].text
    assert out[0].text.endswith("; the summary above quotes what it reports.")
    assert statements.quoted_in_lead("Timeline is answered.") == "Timeline is answered."


def test_a_fitted_questions_description_reads_as_a_clause():
    """A question the fitted syllabus adds ("What do sources report about X for Y?") is named
    in a sentence as what sources report, not as a question inside a sentence."""
    q = Question(
        key="topic.flood_victims",
        label="Flood Victims",
        description="What do sources report about flood victims for 2031 Examplia floods?",
        min_sources=3,
    )
    assert (
        statements.what_it_asks(q)
        == "what sources report about flood victims for 2031 Examplia floods"
    )


def test_the_lead_answers_the_question_the_analyst_asked_even_while_it_is_open(vectors):
    """ "What caused the floods?" with one source of the four it needs: the lead still states
    what that source says of the cause, read without the words of the subject that every
    sentence of its source shares (so the death toll that names the floods and says "caused"
    does not lead), and says the question is open."""
    topic = "What caused the 2031 Examplia floods?"
    toll = (
        "From June to October 2031, floods in Examplia killed 1,739 people and caused "
        "$14.9 billion of damage.[1]"
    )
    cause = (
        "The immediate causes of the floods were heavier than usual monsoon rains and melting "
        "glaciers that followed a severe heat wave.[1]"
    )
    q = LeadQuestion(
        key="asked.question",
        label=topic,
        description=f"{topic} What caused or shaped it",
        heading=topic,
        status="insufficient",
        sources_found=1,
        min_sources=4,
    )
    lead = question_lead(
        vectors, topic, [ReportSection(heading=topic, text=f"{toll} {cause}")], [q]
    )
    assert lead.startswith(cause), lead
    assert toll not in lead and "leaves open “What caused the 2031 Examplia floods?”" in lead


def test_a_lead_that_is_one_sections_only_sentence_keeps_it(vectors):
    """When the lead is nothing but the one sentence of a section (the answer to the question
    asked, from one source), the answer stays on top and the section says where it is: no
    empty lead, and no sentence twice."""
    cause = "Heavier than usual monsoon rains followed a severe heat wave.[@src_001]"
    other = "Floods in the south killed 799 people and injured 8,422.[@src_002]"
    secs = [
        ReportSection(heading="What caused it?", text=cause),
        ReportSection(heading="Impact", text=other),
    ]
    lead, out = dedupe_report(vectors, cause, secs)
    assert lead == cause
    assert out[0].text == statements.QUOTED_ABOVE and out[1].text == other
    # beside another lead sentence, a section's only sentence stays in the section
    lead, out = dedupe_report(vectors, f"{cause} {other}", secs[:1])
    assert lead == other and out[0].text == cause


def test_the_lead_of_a_question_typed_as_a_question_is_its_answer(vectors):
    """A question "What were the consequences of X?" is answered in the lead by the consequences; the
    timeline's finding stays in its own section."""
    asked = LeadQuestion(
        key="impact.effects",
        label="What were the consequences of Cyclone Examplo?",
        description="Deaths, injuries, damage and people affected",
        heading="What were the consequences of Cyclone Examplo?",
        status="answered",
        sources_found=4,
        min_sources=4,
    )
    timeline = LeadQuestion(
        key="history.timeline",
        label="Timeline",
        description="Key dates and the order of events",
        heading="Timeline",
        status="answered",
        sources_found=3,
        min_sources=3,
    )
    effects = [
        "Cyclone Examplo killed at least 145 people in Examplia.[1]",
        "More than 5,700 people in 50 villages were affected by the cyclone.[2]",
    ]
    dates = "On 12 May the storm became a very severe cyclonic storm over the bay.[3]"
    sections = [
        ReportSection(heading=asked.heading, text=" ".join(effects)),
        ReportSection(heading="Timeline", text=dates),
    ]
    lead = question_lead(
        vectors, "What were the consequences of Cyclone Examplo?", sections, [asked, timeline]
    )
    assert all(e in lead for e in effects) and dates not in lead
    # with one sentence of an answer, the other questions' findings stay in the lead
    sections[0] = ReportSection(heading=asked.heading, text=effects[0])
    lead = question_lead(
        vectors, "What were the consequences of Cyclone Examplo?", sections, [asked, timeline]
    )
    assert effects[0] in lead and dates in lead


def test_the_lead_says_a_thing_once():
    """A lead sentence whose words and figures another, longer lead sentence holds is dropped;
    two trials' results with their own figures both stay."""
    short = "On 2 June 2031, three trains collided in Examplo district of Examplia.[1]"
    long = (
        "On 2 June 2031, three trains collided in Examplo district of Examplia, killing at least "
        "288 people and injuring over 1,100.[2]"
    )
    first = "Disease-free survival was longer with drug A than with drug B (HR 0.82).[3]"
    second = "Disease-free survival was longer with drug A than with drug B (HR 0.90).[4]"
    assert _not_contained([short, long, first, second]) == [long, first, second]


def test_an_outline_section_quotes_no_study_conduct(vectors):
    """A section of the outline that answers no syllabus question ("Poor Prognosis") keeps its
    findings, not who was eligible or how a study was run."""
    eligible = "Eligible patients had examplitis and had received no prior chemotherapy for it."
    finding = "A high baseline marker level was associated with shorter disease-free survival."
    plan = sections.SectionPlan(heading="Poor Prognosis")
    plan.units = [material.Unit(eligible, "src_1"), material.Unit(finding, "src_2")]
    answers.fill(vectors, [plan], {}, {}, "standard")
    assert [u.text for u in plan.units] == [finding]
