"""The evidence judgement (research.evidence): one score decides whether a passage answers a
syllabus question; the topic's own words cannot carry a passage; passages are whole sentences
with offsets into the source text; the run store keeps the best passages per question."""

import pytest

from research.evidence import cues, judge, passage_split
from research.evidence.passages import (
    about_topic,
    another_year,
    compares,
    document_evidence,
    on_question_docs,
    published_protocol,
    result_evidence,
)
from research.models import EvidencePassage, Question, SearchResult
from research.planning.kinds import (
    COMPARISON_QUESTIONS,
    EVENT_QUESTIONS,
    INTERVENTION_QUESTIONS,
    fill,
)
from research.planning.syllabus import get_template
from research.store.passages import EvidenceStore, merge
from research.text.comparators import (
    added_treatment,
    another_comparison,
    studies_another,
    third_arm,
)
from research.text.findings import outcome_family
from research.text.frame import frame_question
from research.text.named_events import another_name
from research.text.vectors import Vectors

TOPIC = "Trastuzumab in HER2-positive breast cancer"
DRUG = {q.key: q for q in get_template("drug").questions}


@pytest.fixture(scope="module")
def vectors():
    return Vectors()


def score(key: str, passage: str, vectors) -> float:
    return judge.evidence_score(DRUG[key], passage, topic=TOPIC, vectors=vectors)


def test_a_finding_is_evidence_for_its_own_question_only(vectors):
    dfs = (
        "The addition of trastuzumab to adjuvant chemotherapy improved disease-free survival "
        "(hazard ratio 0.52; P<0.001)."
    )
    chf = "Symptomatic congestive heart failure occurred in 4.1% of patients given trastuzumab."
    assert score("clinical.efficacy", dfs, vectors) >= judge.EVIDENCE_MIN
    assert score("clinical.safety", dfs, vectors) < judge.EVIDENCE_MIN
    assert score("clinical.safety", chf, vectors) >= judge.EVIDENCE_MIN
    assert score("ip.patents", chf, vectors) < judge.EVIDENCE_MIN


def test_the_topics_words_alone_answer_nothing(vectors):
    only_topic = (
        "Trastuzumab in HER2-positive breast cancer is an important subject for patients and "
        "doctors."
    )
    scores = judge.score_passages(list(DRUG.values()), [only_topic], topic=TOPIC, vectors=vectors)[
        :, 0
    ]
    assert float(scores.max()) < judge.EVIDENCE_MIN, dict(zip(DRUG, scores, strict=True))


def test_scores_are_bounded_and_deterministic(vectors):
    passages = ["Trastuzumab binds the extracellular domain of the HER2 receptor.", "Short."]
    a = judge.score_passages(list(DRUG.values()), passages, topic=TOPIC, vectors=vectors)
    b = judge.score_passages(list(DRUG.values()), passages, topic=TOPIC, vectors=vectors)
    assert a.shape == (6, 2) and (a >= 0).all() and (a <= 1).all()
    assert (a == b).all()


def test_passages_are_whole_sentences_with_offsets():
    text = (
        "Background. Trastuzumab improved overall survival in the HERA trial of 5,102 women. "
        "Cardiac dysfunction (more common with trastuzumab than with observation alone. "
        "Patients received 1 year of treatment after chemotherapy was complete."
    )
    passages = passage_split.split_passages(text)
    assert [p.text for p in passages] == [
        "Trastuzumab improved overall survival in the HERA trial of 5,102 women.",
        "Patients received 1 year of treatment after chemotherapy was complete.",
    ]
    for p in passages:
        assert text[p.start : p.end] == p.text
    # a registration after the last sentence is no part of it, however the abstract spaces it
    tail = (
        "Further studies of the two approaches in larger groups of women are necessary. "
        "clinicaltrials. gov (NCT00711529)."
    )
    assert [p.text for p in passage_split.split_passages(tail)] == [
        "Further studies of the two approaches in larger groups of women are necessary."
    ]


def test_a_drug_topic_needs_the_drug_named():
    topic = "Trastuzumab cardiotoxicity in HER2-positive breast cancer"
    assert not about_topic("Capecitabine in HER2-positive breast cancer: cardiac events", topic)
    assert about_topic("Cardiac events with trastuzumab in HER2-positive breast cancer", topic)


def test_result_evidence_keeps_off_topic_results_out(vectors):
    on = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/1/",
        title="Trastuzumab after adjuvant chemotherapy in HER2-positive breast cancer",
        text="Trastuzumab after adjuvant chemotherapy significantly improved disease-free "
        "survival among women with HER2-positive breast cancer (hazard ratio 0.54).",
    )
    off = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/2/",
        title="Capecitabine maintenance in early breast cancer",
        text="Capecitabine maintenance significantly improved disease-free survival among women "
        "with early breast cancer (hazard ratio 0.64).",
    )
    ev = result_evidence(vectors, list(DRUG.values()), TOPIC, [on, off])
    assert "clinical.efficacy" in ev[0] and ev[1] == {}
    p = ev[0]["clinical.efficacy"][0]
    assert on.text[p.start : p.end] == p.passage and p.score >= judge.EVIDENCE_MIN


def test_a_title_close_to_the_arm_names_it_in_other_words(vectors):
    """A one-arm question's source may name its intervention in other words ("resistance
    training" for "exercise interventions") when its title is close to the arm; a survey of the
    condition, or another treatment of it, sharing every other word of the question, is not."""
    topic = "Exercise interventions for fatigue in adults with chronic kidney disease"
    qs = [
        Question(key=k, label=v["label"], description=v["description"], min_sources=1)
        for k, v in fill(INTERVENTION_QUESTIONS, frame_question(topic)).items()
    ]

    def result(n: int, title: str, finding: str) -> SearchResult:
        return SearchResult(
            url=f"https://pubmed.ncbi.nlm.nih.gov/{n}/",
            title=title,
            text=f"{finding} Fatigue scores fell in adults with chronic kidney disease.",
        )

    trained = result(
        5,
        "Resistance training reduces fatigue in adults with chronic kidney disease",
        "Twelve weeks of resistance training reduced fatigue compared with usual care (P = 0.01).",
    )
    surveyed = result(
        6,
        "Fatigue in adults with chronic kidney disease: a cross-sectional survey",
        "Fatigue was reported by 62% of adults with chronic kidney disease.",
    )
    iron = result(
        7,
        "Iron supplementation for fatigue in adults with chronic kidney disease",
        "Iron supplementation reduced fatigue compared with placebo (P = 0.02).",
    )
    ev = result_evidence(vectors, qs, topic, [trained, surveyed, iron])
    assert ev[0] and ev[1] == {} and ev[2] == {}


def test_a_drug_profile_leaves_out_sources_titled_for_the_opposite_setting(vectors):
    """A drug question on early disease is not answered by the same drug's trial titled for
    advanced disease, however much of the drug's vocabulary it shares."""
    topic = "Examplumab in early solid tumours"
    early = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/3/",
        title="Adjuvant examplumab in early solid tumours: a randomised trial",
        text="Adjuvant examplumab significantly improved disease-free survival among patients "
        "with early solid tumours (hazard ratio 0.71).",
    )
    advanced = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/4/",
        title="Examplumab for patients with advanced solid tumours: a randomised trial",
        text="Examplumab significantly improved progression-free survival among patients with "
        "solid tumours (hazard ratio 0.66).",
    )
    assert frame_question(topic).kind == "drug"
    ev = result_evidence(vectors, list(DRUG.values()), topic, [early, advanced])
    assert "clinical.efficacy" in ev[0] and ev[1] == {}


def _p(q: str, text: str, score: float, start: int = 0) -> EvidencePassage:
    return EvidencePassage(question=q, source_id="src_001", passage=text, score=score, start=start)


def test_merge_keeps_the_best_per_question_whatever_the_order():
    a = [_p("q.a", "one", 0.6), _p("q.a", "two", 0.9, 10)]
    b = [_p("q.a", "three", 0.7, 20), _p("q.a", "four", 0.5, 30), _p("q.b", "five", 0.8)]
    assert merge(a, b) == merge(b, a) or {(p.question, p.passage) for p in merge(a, b)} == {
        (p.question, p.passage) for p in merge(b, a)
    }
    kept = [p.passage for p in merge(a, b) if p.question == "q.a"]
    assert kept == ["two", "three", "one"]


def test_evidence_store_round_trips_through_redis(r):
    store = EvidenceStore(r, "0123456789abcdef")
    store.add("src_002", [_p("clinical.efficacy", "A finding.", 0.7)])
    store.add("src_002", [_p("clinical.efficacy", "A better finding.", 0.9, 40)])
    store.add("src_001", [_p("clinical.safety", "A harm.", 0.6)])
    assert [p.passage for p in store.get("src_002")] == ["A better finding.", "A finding."]
    assert list(store.all()) == ["src_001", "src_002"]
    assert [p.passage for p in store.for_question("clinical.efficacy")] == [
        "A better finding.",
        "A finding.",
    ]


CARDIO = "Trastuzumab cardiotoxicity in HER2-positive breast cancer"
RISK = Question(
    key="risk.cardiotoxicity",
    label="Risk factors: cardiotoxicity",
    description="How often does cardiotoxicity occur with Trastuzumab, and which patients are at "
    "higher risk?",
    min_sources=3,
)


def test_a_focused_topic_counts_only_passages_that_name_its_focus(vectors):
    """Real sentences of the shared corpus that a cardiotoxicity report once quoted under its
    risk-factor question: a relapse hazard ratio and a DFS figure name no cardiac harm."""
    relapse = (
        "Random assignment to the trastuzumab arm was associated with a nonsignificant 14% "
        "reduction in the risk of relapse (hazard ratio, 0.86; 95% CI, 0.61 to 1.22; P =.41)."
    )
    dfs = "DFS was significantly increased with trastuzumab added sequentially to paclitaxel."
    risk_score = (
        "A Cardiac Risk Score, calculated using patient age and baseline left ventricular "
        "ejection fraction (LVEF) by multiple-gated acquisition scan, statistically correlates "
        "with the risk of a CE."
    )
    heart = "Symptomatic heart failure occurred in 4% of the women given trastuzumab."
    assert not cues.names_focus(relapse, CARDIO) and not cues.names_focus(dfs, CARDIO)
    assert cues.names_focus(risk_score, CARDIO) and cues.names_focus(heart, CARDIO)
    assert cues.names_focus(relapse, TOPIC)  # a topic without a focus asks nothing of it
    scores = judge.score_passages([RISK], [relapse, dfs, risk_score], topic=CARDIO, vectors=vectors)
    assert float(scores[0, 0]) < judge.EVIDENCE_MIN and float(scores[0, 1]) < judge.EVIDENCE_MIN
    assert float(scores[0, 2]) >= judge.EVIDENCE_MIN
    # the same relapse sentence on the unfocused topic keeps its score: the gate is the focus's
    unfocused = judge.score_passages([RISK], [relapse], topic=TOPIC, vectors=vectors)
    assert float(unfocused[0, 0]) > float(scores[0, 0])


def test_a_comparisons_efficacy_and_harms_keep_to_their_own_family_of_outcome(vectors):
    """Every reported result carries a result's cues, so the efficacy question would take any of
    them: a survival result ranks above a harm whose name is no outcome of benefit, and a
    sentence that reports only survival is no answer to what harm a treatment does."""
    topic = "Drug A versus drug B as adjuvant therapy for early disease"
    spec = fill(COMPARISON_QUESTIONS, frame_question(topic))
    qs = [
        Question(key=k, label=v["label"], description=v["description"], min_sources=1)
        for k, v in spec.items()
        if k in ("efficacy.comparison", "harms.comparison")
    ]
    survival = "Disease-free survival was longer with drug A than with drug B (HR 0.82; P = 0.01)."
    harm = "There were significantly more fractures (p=0.015) with drug A than with drug B."
    toxicity = "Grade 3 or 4 toxicity was more frequent with drug A than with drug B (12% vs 6%)."
    os_only = "Overall survival was not statistically different between the two arms."
    assert [outcome_family(t) for t in (survival, harm, toxicity, os_only)] == [
        "benefit",
        "",
        "harm",
        "benefit",
    ]
    # stopping an earlier treatment is no harm; stopping for one is
    late = "Drug A improved DFS even long after the discontinuation of prior adjuvant drug B."
    assert outcome_family(late) == "benefit"
    assert outcome_family("Discontinuation due to adverse events was 5%.") == "harm"
    eff, harms = judge.score_passages(
        qs, [survival, harm, toxicity, os_only], topic=topic, vectors=vectors
    )
    assert eff[0] > eff[1] > eff[2]  # survival, then an unnamed outcome, then a named harm
    assert harms[2] >= judge.EVIDENCE_MIN > harms[3]


def test_a_result_against_placebo_answers_no_question_on_the_two_arms(vectors):
    """A trial report that names both arms compares them; its sentence on one arm against
    placebo answers another question, so the comparison's efficacy keeps only the sentence on
    the two arms (a question on an arm against placebo keeps placebo as an arm)."""
    topic = "Arvotinib versus belzumab as adjuvant therapy for early disease"
    spec = fill(COMPARISON_QUESTIONS, frame_question(topic))
    qs = [
        Question(key=k, label=v["label"], description=v["description"], min_sources=1)
        for k, v in spec.items()
        if k == "efficacy.comparison"
    ]
    both = "Disease-free survival was longer with arvotinib than with belzumab (HR 0.82; P = 0.01)."
    placebo = (
        "Arvotinib, compared with placebo, improved disease-free survival (HR 0.55; P < 0.001)."
    )
    trial = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/3/",
        title="Arvotinib versus belzumab as adjuvant therapy for early disease",
        text=f"{both} {placebo}",
    )
    ev = result_evidence(vectors, qs, topic, [trial])
    assert [p.passage for p in ev[0]["efficacy.comparison"]] == [both]
    assert third_arm(placebo, frame_question(topic))
    assert not third_arm(placebo, frame_question("Arvotinib versus placebo for early disease"))


def test_a_trial_titled_for_another_comparison_answers_no_question_on_the_two_arms(vectors):
    """On "arvotinib versus belzumab dual-beam infusion", a trial titled as comparing two ways of
    giving arvotinib names belzumab in its abstract, yet compares something else: it answers no
    question on the two arms. A title that names the comparator in part (a long arm shortened)
    still compares the two."""
    topic = "Arvotinib versus belzumab dual-beam infusion as adjuvant therapy for early disease"
    frame = frame_question(topic)
    spec = fill(COMPARISON_QUESTIONS, frame)
    qs = [
        Question(key=k, label=v["label"], description=v["description"], min_sources=1)
        for k, v in spec.items()
        if k == "efficacy.comparison"
    ]
    text = (
        "Disease-free survival was longer with arvotinib than with belzumab dual-beam infusion "
        "(HR 0.82; P = 0.01)."
    )
    other = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/4/",
        title="Weekly versus three-weekly arvotinib as adjuvant therapy for early disease",
        text=text,
    )
    shortened = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/5/",
        title="Arvotinib versus belzumab infusion as adjuvant therapy for early disease",
        text=text,
    )
    ev = result_evidence(vectors, qs, topic, [other, shortened])
    assert "efficacy.comparison" not in ev[0]
    assert [p.passage for p in ev[1]["efficacy.comparison"]] == [text]
    assert another_comparison(other.title, frame)
    assert not another_comparison(shortened.title, frame)
    assert not another_comparison("Adjuvant arvotinib in early disease", frame)  # no comparison
    # an abstract that shortens the long arm still names it
    assert compares("Arvotinib or belzumab: adjuvant therapy for early disease", frame)
    assert not compares("Arvotinib as adjuvant therapy for early disease", frame)


def test_a_trial_of_another_treatment_given_with_an_arm_is_not_on_the_question(vectors):
    """On "early versus delayed examplotherapy", a trial that adds another medicine to one arm,
    or gives it to people who receive an arm, studies that medicine: the gate leaves it out,
    however often its abstract names the arms. A trial of the arms themselves stays, and so
    does an addition that is an arm."""
    topic = "Early versus delayed examplotherapy for operable examplitis"
    frame = frame_question(topic)
    text = (
        "Patients with operable examplitis received early or delayed examplotherapy. "
        "Survival was longer in the examplitis patients given arvotinib (HR 0.7)."
    )
    titles = {
        "Adding arvotinib to early examplotherapy in operable examplitis": False,
        "Early examplotherapy with or without arvotinib for operable examplitis": False,
        "Arvotinib plus early examplotherapy versus early examplotherapy alone": False,
        "Arvotinib after delayed examplotherapy in operable examplitis": False,
        "Early versus delayed examplotherapy for operable examplitis: a randomised trial": True,
        "Delayed examplotherapy with or without early examplotherapy in examplitis": True,
    }
    gate = on_question_docs(vectors, topic, [(t, text) for t in titles])
    assert gate == list(titles.values())
    assert added_treatment("Early examplotherapy with or without arvotinib as adjuvant") == (
        "arvotinib"
    )
    assert added_treatment("Arvotinib plus examplotherapy versus examplotherapy alone") == (
        "Arvotinib"
    )
    assert added_treatment("Early versus delayed examplotherapy") == ""
    assert added_treatment(
        "Augmentation of examplotherapy with arvotinib improves sleep in examplitis"
    ) == ("arvotinib improves sleep")
    # an outcome measured after an arm is no other treatment: only a medicine's name is
    assert not studies_another("Quality of life after early examplotherapy", frame)
    # an open arm is named by every text: nothing is background to it
    assert not studies_another(
        "Adding arvotinib to usual care", frame_question("Interventions for examplitis")
    )


def test_a_drug_profiles_source_names_the_drug(vectors):
    """On "Examplumab in postmenopausal women with examplitis", a trial of another medicine in
    the same women is titled close to the topic, yet it says nothing of examplumab: it is no
    source on the profile. One that names examplumab in its abstract is."""
    topic = "Examplumab in postmenopausal women with examplitis"
    title = "Arvotinib in postmenopausal women with examplitis: a randomised trial"
    other = "Arvotinib improved survival in postmenopausal women with examplitis (HR 0.8)."
    named = other + " Examplumab was allowed after progression."
    assert on_question_docs(vectors, topic, [(title, other), (title, named)]) == [False, True]
    # on a focused profile the drug is the medicine's name, not the focus beside it
    focused = "Examplumab cardiotoxicity in postmenopausal women with examplitis"
    cardiac = (
        "Examplumab and cardiac dysfunction in postmenopausal women with examplitis",
        "Cardiac dysfunction occurred in 3% of postmenopausal women given examplumab.",
    )
    assert on_question_docs(vectors, focused, [cardiac]) == [True]


def test_a_products_market_and_patents_are_answered_only_by_what_names_them(vectors):
    """A trial's dosing sits close to "approved for this indication" in meaning, yet says
    nothing of the market; a sentence on an approval or a patent answers those questions."""
    qs = [DRUG["market.status"], DRUG["ip.patents"]]
    passages = [
        "Trastuzumab was given subcutaneously every 3 weeks for one year.",
        "Trastuzumab was approved by the FDA in 1998 for HER2-positive metastatic breast cancer.",
        "Trastuzumab patents expired in Europe in 2014, opening the market to biosimilars.",
    ]
    scores = judge.score_passages(qs, passages, topic=TOPIC, vectors=vectors)
    assert scores[0, 0] == 0 and scores[1, 0] == 0
    assert scores[0, 1] >= judge.EVIDENCE_MIN
    assert scores[1, 2] >= judge.EVIDENCE_MIN


def test_a_published_protocol_answers_no_question(vectors):
    """A journal's publication of a trial's protocol gives the trial's plans and its case for
    running it: no question counts it. A treatment protocol's results are evidence."""
    text = (
        "Trastuzumab improved disease-free survival in HER2-positive breast cancer (HR 0.71; "
        "P = 0.01). Adverse events were mild."
    )
    protocol = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/6/",
        title="Adjuvant trastuzumab in HER2-positive breast cancer: study protocol for a trial",
        text=text,
    )
    treatment = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/7/",
        title="A trastuzumab dosing protocol in HER2-positive breast cancer: a randomised trial",
        text=text,
    )
    ev = result_evidence(vectors, list(DRUG.values()), TOPIC, [protocol, treatment])
    assert ev[0] == {}
    assert ev[1]
    # the other standard title of a protocol paper
    assert published_protocol(
        protocol.model_copy(update={"title": "Trastuzumab dosing: design and rationale of a RCT"})
    )
    assert published_protocol(
        protocol.model_copy(update={"title": "Rationale and design of the EXAMPLE trial"})
    )


def test_a_registry_record_answers_no_question_on_what_was_found(vectors):
    """A trial's registration says what it plans to measure: its sentences answer neither
    whether the treatment works nor what harm it does; the same text with results posted does."""
    text = (
        "Status: Recruiting\nSummary: Trastuzumab improved disease-free survival in earlier "
        "HER2-positive breast cancer trials (hazard ratio 0.54). Serious adverse events will be "
        "recorded in HER2-positive breast cancer patients receiving trastuzumab."
    )
    record = SearchResult(
        url="https://clinicaltrials.gov/study/NCT00000001",
        title="Trastuzumab in HER2-positive breast cancer",
        text=text,
        source_type="clinicaltrials.gov",
    )
    posted = record.model_copy(update={"text": f"{text}\nResults: posted.", "url": "https://x/2"})
    paper = record.model_copy(update={"source_type": "pubmed", "url": "https://x/3"})
    ev = result_evidence(vectors, list(DRUG.values()), TOPIC, [record, posted, paper])
    found = {"clinical.efficacy", "clinical.safety"}
    assert not found & set(ev[0])
    assert "clinical.efficacy" in ev[1] and "clinical.efficacy" in ev[2]


def test_an_event_of_another_year_is_another_event():
    """A topic that names its year ("2031 Examplia floods") is not answered by a source titled
    with only another year, however many words the two share; a title with no year, or with the
    topic's, may be."""
    topic = "What caused the 2031 Examplia floods?"
    assert another_year("2032 Examplia floods — Effects", topic)
    assert not another_year("2031 Examplia floods — Background", topic)
    assert not another_year("Floods in Examplia: a 2032 review of 2031", topic)
    assert not another_year("Examplia floods", topic)
    assert not another_year("2032 Examplia floods", "Examplia floods")


def test_an_event_of_the_same_kind_with_another_name_is_another_event():
    assert another_name("Cyclone Examplo", "Cyclone Mocha")
    assert another_name("Effects of Cyclone Examplo in Examplia", "Cyclone Mocha")
    assert not another_name("Cyclone Mocha — Impact > Examplia", "Cyclone Mocha")
    assert not another_name("Tropical cyclones in 2031", "Cyclone Mocha")
    # a question names the event wherever it puts it; a topic naming no event has no other
    assert another_name("Storm Examplo", "How did Storm Eunice affect Examplia?")
    assert not another_name("Storm Examplo", "Examplumab in adults with examplitis")


def test_a_finding_about_another_medicine_alone_is_no_evidence_on_the_drug(vectors):
    """On a drug's profile, a result that names only another medicine (the partner of a
    combination, a comparator) is that medicine's: it answers none of the drug's questions but
    the one about its competitors. A sentence naming the drug, alone or beside the other, does."""
    topic = "Examplumab in advanced examplitis"
    other = "Grade 3 or 4 adverse events, mainly neutropenia, occurred in 72% given arvotinib."
    own = "Grade 3 or 4 adverse events, mainly neutropenia, occurred in 12% given examplumab."
    both = "Arvotinib plus examplumab was well tolerated: grade 3 or 4 adverse events in 12%."
    qs = [DRUG["clinical.safety"], DRUG["competitive.landscape"]]
    safety, rivals = judge.score_passages(qs, [other, own, both], topic=topic, vectors=vectors)
    assert safety[0] == 0.0
    assert safety[1] >= judge.EVIDENCE_MIN and safety[2] >= judge.EVIDENCE_MIN
    assert rivals[0] > 0.0


def test_who_took_part_and_how_outcomes_were_recorded_is_no_finding():
    """A sentence on the participants entered or the assessments and diaries they completed says
    how a study was run; one that reports a difference between those who completed something is
    a finding."""
    assert cues.is_design(
        "Two hundred and thirty women with examplitis (age, 31 to 84 years) were entered into the "
        "study."
    )
    assert cues.is_design(
        "Patients completed a cosmetic assessment before radiotherapy and annually thereafter."
    )
    assert cues.is_design(
        "Each patient kept a 1-week, self-report diary on the frequency of flushes."
    )
    assert not cues.is_design(
        "Patients who completed the questionnaire had better scores than controls (P = 0.01)."
    )
    # what a study compared, or in which studies an outcome was measured, is its design ...
    assert cues.is_design(
        "This randomized study compared arvotinib with belzumab in delaying or preventing "
        "fractures in patients with examplitis."
    )
    assert cues.is_design(
        "Pain was assessed in a randomized, double-blind phase 3 study comparing arvotinib with "
        "belzumab in 2046 patients."
    )
    # ... unless it gives what was found
    assert not cues.is_design(
        "This trial compared arvotinib with belzumab: fractures fell from 12% to 7% (P = 0.01)."
    )


def test_a_medicine_that_inhibits_an_enzyme_has_a_mechanism_too(vectors):
    """The mechanism question is not only an antibody's: a small molecule that inhibits an
    enzyme and its pathway answers it, a dose or a result does not."""
    topic = "Exampronate in early examplitis"
    question = DRUG["mechanism.moa"]
    said = (
        "Exampronate is a nitrogen-containing bisphosphonate that induces osteoclast apoptosis "
        "and inhibits bone resorption by inhibiting the mevalonate pathway."
    )
    dose = "Patients received exampronate 4 mg every 6 months for three years."
    assert judge.evidence_score(question, said, topic=topic, vectors=vectors) >= judge.EVIDENCE_MIN
    assert judge.evidence_score(question, dose, topic=topic, vectors=vectors) < judge.EVIDENCE_MIN


def test_the_title_after_its_acronym_is_no_passage(vectors):
    """An abstract that opens with its title behind the trial's acronym ("EXAMPLE: A randomized
    trial of …") gives that title as a sentence of its own: it is no finding, and no question's
    evidence."""
    title = (
        "EXAMPLE: A randomized trial of trastuzumab with chemotherapy versus chemotherapy alone "
        "in HER2-positive breast cancer."
    )
    text = (
        f"{title} The addition of trastuzumab to chemotherapy improved disease-free survival "
        "(hazard ratio 0.52; P<0.001)."
    )
    found = document_evidence(vectors, list(DRUG.values()), TOPIC, title, text, ["trastuzumab"])
    passages = {p.passage for ps in found.values() for p in ps}
    assert passages and not any("randomized trial of" in p for p in passages)


def test_guidance_on_a_comparison_comes_from_a_source_on_both_arms_and_says_what_is_open(vectors):
    """What guidelines recommend on A versus B, and what remains uncertain: a source on one arm
    only (another trial of arvotinib) answers it no more than it answers which arm did better;
    and a trial's enrolment, another trial's result or a registration number is no guidance,
    however close its words come to "further trials" in meaning."""
    topic = "Arvotinib versus belzumab as adjuvant therapy for early disease"
    spec = fill(COMPARISON_QUESTIONS, frame_question(topic))
    guidance = Question(
        key="guidance.open",
        label=spec["guidance.open"]["label"],
        description=spec["guidance.open"]["description"],
        min_sources=1,
    )
    open_question = (
        "Whether arvotinib should replace belzumab remains uncertain; further trials are needed."
    )
    both = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/6/",
        title="Arvotinib versus belzumab as adjuvant therapy for early disease",
        text=open_question,
    )
    one_arm = SearchResult(
        url="https://pubmed.ncbi.nlm.nih.gov/7/",
        title="Arvotinib as adjuvant therapy for early disease: a phase II trial",
        text=open_question.replace(" should replace belzumab", " should be given"),
    )
    ev = result_evidence(vectors, [guidance], topic, [both, one_arm])
    assert [p.passage for p in ev[0]["guidance.open"]] == [open_question]
    assert "guidance.open" not in ev[1]
    not_guidance = [
        "The trial included 960 women with early disease treated with arvotinib or belzumab.",
        "Trials comparing arvotinib with belzumab were considered eligible for this review.",
        "Five-year disease-free survival was 96.0% in both arms.",
    ]
    scores = judge.score_passages([guidance], not_guidance, topic=topic, vectors=vectors)
    assert (scores == 0).all()
    # a trial's conclusion for practice is guidance, in the words abstracts close with
    conclusions = [
        "Arvotinib should not be used routinely in place of belzumab for early disease.",
        "Belzumab can be safely omitted in selected patients with early disease.",
    ]
    scores = judge.score_passages([guidance], conclusions, topic=topic, vectors=vectors)
    assert (scores >= judge.EVIDENCE_MIN).all(), scores
    assert cues.is_design(
        "Australian Clinical Trials Registry registration number ACTRN12605000478617."
    )


def test_an_account_of_an_event_with_its_clock_time_says_what_happened(vectors):
    """An event's page tells what happened with the clock time it was done ("At around 2:30 three
    units arrived"): that sentence answers "What happened", though it names none of the
    question's words; a decimal ("P = 0.04", "HR 0.68") or a ratio ("1:1") is no clock time."""
    spec = EVENT_QUESTIONS["background.overview"]
    q = Question(
        key="background.overview",
        label=spec["label"],
        description=spec["description"],
        min_sources=1,
    )
    topic = "Examplia bridge attack, March 2031"
    account = (
        "At around 2:30 three police units arrived at the scene, whereupon they were attacked "
        "from different directions by an armed group of about 30 men."
    )
    untimed = account.replace("At around 2:30 three", "Three")
    scores = judge.score_passages([q], [account, untimed], topic=topic, vectors=vectors)
    assert scores[0, 0] >= judge.EVIDENCE_MIN > scores[0, 1]
    overview = cues.CUES["background.overview"]
    assert not overview.search("Recurrence fell (P = 0.04; HR 0.68), randomised 1:1.")
