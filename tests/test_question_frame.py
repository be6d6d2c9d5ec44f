"""The question frame: the kind of question, its arms and setting, and queries that keep them."""

import json
import re
from pathlib import Path

import pytest

from research.followup.audit import on_question, summarize
from research.followup.corpus import EvidenceDoc
from research.models import SourceRecord
from research.planning.facets import FACETS
from research.planning.kinds import KIND_TEMPLATES
from research.planning.syllabus import base_template
from research.store.followup_models import CitationCheck
from research.text.entities import split_topic
from research.text.findings import CONDUCT, FURNITURE, PLAIN, contrasts, finding_weight, quote_rank
from research.text.frame import frame_question
from research.text.frame_match import (
    about_question,
    anchor_queries,
    arms_named,
    arms_of,
    occasion_head,
    term_share,
)
from research.text.populations import contradicts_setting

AI_TAM = "Aromatase inhibitors versus tamoxifen as adjuvant therapy for postmenopausal early breast cancer"


@pytest.mark.parametrize(
    ("question", "kind", "arms"),
    [
        (AI_TAM, "comparison", ("Aromatase inhibitors", "tamoxifen")),
        (
            "Docetaxel compared with paclitaxel in adjuvant breast cancer",
            "comparison",
            ("Docetaxel", "paclitaxel"),
        ),
        (
            "Zoledronic acid or denosumab for bone loss",
            "comparison",
            ("Zoledronic acid", "denosumab"),
        ),
        ("Exercise for cancer-related fatigue", "intervention", ("Exercise",)),
        (
            "Does acupuncture relieve hot flashes in breast cancer patients?",
            "intervention",
            ("acupuncture",),
        ),
        (
            "Trastuzumab cardiotoxicity in HER2-positive breast cancer",
            "drug",
            ("Trastuzumab cardiotoxicity",),
        ),
        (
            "Sentinel lymph node biopsy in early breast cancer",
            "device",
            ("Sentinel lymph node biopsy",),
        ),
        ("Hurricane Hilary", "event", ()),
        ("Taylor Hawkins", "person", ()),
        # what is done *to prevent* or *for* something, or given to people the question names
        ("Melatonin to prevent delirium in older inpatients", "intervention", ("Melatonin",)),
        ("Femoral nerve block for hip fracture surgery", "intervention", ("Femoral nerve block",)),
        ("Ivermectin for patients with malaria", "intervention", ("Ivermectin",)),
        ("Alendronic acid in postmenopausal osteoporosis", "drug", ("Alendronic acid",)),
        # a medicine given to the people the question names is an intervention (PICO)
        ("Examplumab for women with examplitis", "intervention", ("Examplumab",)),
        # an add-on compares the base treatment with and without the added one
        (
            "Ovarian function suppression added to tamoxifen for premenopausal breast cancer",
            "comparison",
            ("Ovarian function suppression plus tamoxifen", "tamoxifen alone"),
        ),
        (
            "Does adding radiotherapy to surgery improve survival in soft-tissue sarcoma?",
            "comparison",
            ("radiotherapy plus surgery", "surgery alone"),
        ),
        (
            "Letrozole with or without palbociclib in advanced breast cancer",
            "comparison",
            ("palbociclib plus letrozole", "letrozole alone"),
        ),
        (
            "Capecitabine combined with docetaxel for metastatic breast cancer",
            "drug",
            ("Capecitabine plus docetaxel",),
        ),
        # other ways analysts type the same kinds (``question_forms``)
        (
            "Does examplumab with arvotinib improve survival over standard chemotherapy in X?",
            "comparison",
            ("examplumab with arvotinib", "standard chemotherapy"),
        ),
        (
            "Can radiotherapy be omitted after surgery in older women?",
            "comparison",
            ("radiotherapy", "no radiotherapy"),
        ),
        ("Preventing nausea after surgery", "intervention", ("interventions",)),
        ("Interventions to improve sleep in cancer survivors", "intervention", ("Interventions",)),
        ("What happened during the first orbital flight test?", "event", ()),
        ("Ada Lovelace, English mathematician", "person", ()),
        ("How does a ranked-choice election work?", "general", ()),
    ],
)
def test_kinds_and_arms(question, kind, arms):
    frame = frame_question(question)
    assert (frame.kind, frame.arms) == (kind, arms)


def test_an_add_on_names_each_arm_by_its_own_treatment_and_needs_a_treatment():
    """ "X plus Y" is named by X's words (Y is both arms'), "Y alone" by Y's; "plus" and "alone"
    name nothing. A text that adds one thing to another without a treatment is no add-on."""
    frame = frame_question("Examplumab added to arvotinib for patients with examplitis")
    assert [[w.whole for w in arm] for arm in frame.arm_words()] == [["examplumab"], ["arvotinib"]]
    assert arms_of("Examplumab plus arvotinib versus arvotinib alone.", frame) == [True, True]
    assert frame_question("Names added to the national register in 2020").kind != "comparison"
    assert frame_question("Women with or without inherited mutations").kind != "comparison"


def test_a_medicines_salt_or_acid_is_part_of_its_name_not_a_focus():
    assert split_topic("Alendronic acid in postmenopausal osteoporosis")[1] == ""
    assert split_topic("Trastuzumab cardiotoxicity in HER2-positive breast cancer")[1] == (
        "cardiotoxicity"
    )


def test_events_and_people_get_their_own_questions_under_the_general_keys():
    event = base_template("auto", "2021 Suez Canal obstruction")
    person = base_template("auto", "Ada Lovelace")
    general = base_template("general", "x")
    assert event.name == "auto (event)" and person.name == "auto (person)"
    # the judgement's answer cues are keyed by the general questions: every one is kept
    assert set(event.keys()) == set(person.keys()) == set(general.keys())
    assert "Key Actors" not in [q.label for q in person.questions]
    assert "What happened" in [q.label for q in event.questions]


@pytest.mark.parametrize(
    ("sentence", "weight"),
    [
        ("Overall accuracy of the test was 93.0% against the reference standard.", 0.7),
        ("Survival did not differ between the two arms (95.6% vs 94.9%, P = 0.4).", 1.0),
        ("In group one, mean age of patients was 54.1 years.", CONDUCT),
        ("Four women with stage II examplitis ranged in age from 44-65 years.", CONDUCT),
        ("Oncologists provided consent to contact 82.6% of patients, 84.1% consenting.", CONDUCT),
        ("This randomized clinical trial included 100 women with stage I examplitis.", CONDUCT),
        (
            "During the study, 4/15 (26.7%) oncologists approached patients about study participation.",
            CONDUCT,
        ),
        ("The study was approved by the National Research Ethics Service.", CONDUCT),
        (
            "DFS and OS were analyzed in 92 and 88 patients over 5.15 and 5.38 y, respectively.",
            CONDUCT,
        ),
        ("Of 80 patients recruited, 64 were assessable for the efficacy analyses.", CONDUCT),
        ("Survival was estimated using Cox proportional hazards models.", CONDUCT),
        (
            "The Health Outcomes and Reduced Incidence Trial randomly assigned 7765 women to "
            "annual infusions or placebo.",
            CONDUCT,
        ),
        ("In the Improved Outcomes Trial, recurrence was reduced by 30% (HR 0.70).", 1.0),
        ("The primary analysis compared events in the two groups using a log-rank test.", CONDUCT),
        ("Relapse-free survival was longer with drug A by the log-rank test (HR 0.6).", 0.7),
        ("Archived from the original on 11 June 2023.", FURNITURE),
        ("Note: In all results below, the score of the finalist is given first.", FURNITURE),
        ("In the following table, finals until 1992 were in the old cup's era.", FURNITURE),
        ("Why was an attempt made to feed the conspiracy theory angle?", FURNITURE),
        ("The focus is presently on the rescue and relief operations.", PLAIN),
        ("At least 41 people died and 112 were injured.", 1.0),
        ("Baseline characteristics were similar in both treatment arms.", CONDUCT),
        ("Baseline demographic data were similar in the two cohorts.", CONDUCT),
        ("The two arms were well balanced according to the main prognostic factors.", CONDUCT),
        ("Fatigue changed from baseline data by 20% vs 5% (P = 0.01).", 1.0),
        ("Open-label trial conducted at 269 community sites in the United States.", CONDUCT),
        ("The control group received the educational strategy only.", CONDUCT),
        ("The intervention group received fewer transfusions than controls (12% vs 25%).", 1.0),
        ("40 patients were randomized with a mean age of 55 vs 57 years.", CONDUCT),
        ("Of 179 patients, 154 were available for long-term follow-up.", CONDUCT),
        ("Here, we show data from 125 patients (63 TE and 62 TEL patients).", CONDUCT),
        ("One hundred thirty-three patients were identified.", CONDUCT),
        ("Tumour blocks were available on 989 of 1234 patients enrolled in the trial.", CONDUCT),
        ("Mutations were identified in 12% of tumours versus 4% of controls.", 1.0),
        (
            "The Exampla Ablation or Suppression Trial randomly assigned women receiving prolonged "
            "(5 years) examplumab to ovarian suppression versus no suppression.",
            CONDUCT,
        ),
        ("We conducted a randomized trial of drug A versus placebo in 40 patients.", CONDUCT),
        ("The city hospital conducted a single centre randomized clinical study.", CONDUCT),
        ("The two techniques were compared in a randomized trial.", CONDUCT),
        ("Results of the XY-01 randomized trial.", CONDUCT),
        ("Results of the trial showed longer survival with drug A than B (HR 0.8).", 1.0),
        ("Pain after surgery is well known to be reduced by early mobilisation.", PLAIN),
        ("Several studies have shown that drug A lowers recurrence.", PLAIN),
        ("Our programme reduced pain after surgery in 40 patients.", 1.0),
        ("This study reports the efficacy of drug A in preventing bone loss.", CONDUCT),
        ("Toxicity analyses included only events that occurred after unblinding.", CONDUCT),
        ("Thirty-one of the 34 participants were followed-up to the 5-year visit.", CONDUCT),
        ("From 1998 to 1999, we randomly assigned 516 women either to A or to B.", CONDUCT),
        ("Of 2,000 patients, 566 were node-positive and treated per random assignment.", CONDUCT),
        ("A multicenter randomized placebo-controlled phase III trial.", CONDUCT),
        ("All clinicians were masked to treatment allocation; the statistician was not.", CONDUCT),
        (
            "Eligible patients were women taking an aromatase inhibitor with pain of 3 or more.",
            CONDUCT,
        ),
        ("Of 300 eligible patients, response was 40% vs 20% (p=0.01).", 1.0),
        ("Between 1999 and 2001, we accrued 136 survivors aged 35-52 years.", CONDUCT),
    ],
)
def test_finding_weight_puts_results_before_conduct_and_furniture(sentence, weight):
    assert finding_weight(sentence) == pytest.approx(weight)


def test_comparison_syllabus_is_named_in_the_questions_terms():
    syllabus = base_template("auto", AI_TAM)
    labels = [q.label for q in syllabus.questions]
    assert syllabus.name == "auto (comparison)"
    assert labels[0] == "Efficacy: aromatase inhibitors vs tamoxifen" or labels[0].lower() == (
        "efficacy: aromatase inhibitors vs tamoxifen"
    )
    assert not any(x in " ".join(labels) for x in ("Intellectual Property", "Market Status"))
    assert all("{" not in q.label + q.description for q in syllabus.questions)


def test_queries_keep_both_arms_and_the_population():
    out = anchor_queries(["Aromatase Safety Profile Adverse", "letrozole bone fractures"], AI_TAM)
    assert all("tamoxifen" in q.lower() and "aromatase" in q.lower() for q in out)
    assert all("postmenopausal" in q.lower() or "adjuvant" in q.lower() for q in out)
    # a question that is not framed keeps its queries as they are
    assert anchor_queries(["Trastuzumab safety"], "Trastuzumab in HER2-positive breast cancer") == [
        "Trastuzumab safety"
    ]


def test_a_source_is_about_the_question_only_with_an_arm_and_the_setting():
    frame = frame_question(AI_TAM)
    assert about_question(
        "Letrozole versus tamoxifen: adjuvant aromatase inhibitor therapy in postmenopausal "
        "women with early breast cancer",
        frame,
    )
    assert not about_question(
        "Duloxetine for arthralgia in postmenopausal women with early breast cancer", frame
    )
    assert arms_named("anastrozole (an aromatase inhibitor) or tamoxifen", frame) == 2


def test_a_result_on_the_questions_outcome_is_more_on_point_than_one_on_its_population():
    """Every sentence of a trial of the question is on its population; a result on what the
    intervention is for ("cognitive dysfunction") answers the question more closely than one on
    another outcome in the same people."""
    frame = frame_question("Interventions to improve cognitive function in examplia survivors")
    on_outcome = "The intervention led to less fatigue and cognitive dysfunction than the waitlist."
    on_people = "The intervention improved quality of life for examplia survivors versus waitlist."
    assert term_share(on_outcome, frame) > term_share(on_people, frame)


def test_newly_diagnosed_says_when_not_who():
    """A trial of imaging before the first operation for examplia rarely writes "newly
    diagnosed": the words are no part of the setting a source must name."""
    frame = frame_question(
        "Does preoperative MRI change surgical management of newly diagnosed examplia?"
    )
    assert frame.kind == "device"
    assert "newly" not in frame.key_terms and "diagnosed" not in frame.key_terms
    assert about_question(
        "Preoperative MRI for early-stage examplia: effect on surgical and long-term "
        "outcomes. Preoperative MRI changed the surgical plan in 18% of women with "
        "examplia.",
        frame,
    )


def test_a_source_that_names_only_the_comparator_is_off_a_comparison():
    """ "A versus B": B is the standard a hundred studies of other questions also name; a study
    of another drug "versus tamoxifen", or of tamoxifen alone, is not on the question. A study
    of A alone is (its harms, who benefits), and so is one of both."""
    frame = frame_question(AI_TAM)
    setting = " as adjuvant therapy in postmenopausal women with early breast cancer"
    assert not about_question("Tamoxifen for five or ten years" + setting, frame)
    assert not about_question("Toremifene versus tamoxifen" + setting, frame)
    assert about_question("Letrozole and bone loss" + setting, frame)
    assert about_question("Anastrozole versus tamoxifen" + setting, frame)


def test_an_open_arm_is_named_by_any_source_and_the_setting_decides():
    """ "Non-hormonal treatments", "Interventions": the question asks about whatever works, so a
    trial of one named treatment in the setting is on the question; one in another setting is
    not, and queries get no class word put in front of them."""
    for question in (
        "Non-hormonal treatments for night sweats in men after prostate surgery",
        "Interventions to prevent delirium after hip surgery in older adults",
    ):
        frame = frame_question(question)
        assert frame.kind == "intervention" and frame.arm_keys() == [set()]
        assert anchor_queries(["melatonin trial"], question)[0].startswith("melatonin trial")
    frame = frame_question("Interventions to prevent delirium after hip surgery in older adults")
    assert about_question(
        "Melatonin to prevent delirium after hip surgery in older adults\n"
        "Delirium occurred in 12% with melatonin and 20% with placebo.",
        frame,
    )
    assert not about_question("Melatonin for insomnia in shift workers", frame)
    # a named arm keeps its words, without the open ones: "exercise interventions" → exercise
    assert frame_question("Exercise interventions for fatigue in women").arm_keys() == [{"exercis"}]


def test_the_occasion_of_a_condition_tells_its_sources_apart():
    """Pain after an operation is not pain from a medicine or a metastasis: a source on the
    question names the occasion's head, an operation by any of its names."""
    frame = frame_question("Preventing chronic pain after examplitis surgery")
    assert occasion_head(frame) == "surgery"
    on = "Lidocaine for chronic pain after mastectomy for examplitis\nChronic pain: 20% vs 35%."
    off = "Duloxetine for chronic joint pain in examplitis\nChronic pain scores fell; pain eased."
    assert about_question(on, frame) and not about_question(off, frame)
    during = frame_question("Exercise to reduce fatigue during chemotherapy in adults with X")
    assert occasion_head(during) == "chemotherapy"


def test_an_arm_that_leaves_a_treatment_out_is_named_by_its_absence():
    """ "Radiotherapy versus no radiotherapy": every study of radiotherapy names "radiotherapy";
    only one that leaves it out names the second arm."""
    frame = frame_question("Can radiotherapy be omitted after surgery in older women?")
    assert arms_of("Lumpectomy with or without radiotherapy in older women", frame) == [True] * 2
    assert arms_of("Omission of postoperative radiotherapy raised recurrence", frame)[1]
    assert not arms_of("Partial-breast radiotherapy versus whole-breast radiotherapy", frame)[1]
    # radiotherapy is "irradiation" in as many abstracts
    assert arms_of("Lumpectomy plus tamoxifen with or without irradiation", frame) == [True] * 2
    # ... and a source on the question names it: a trial of two ways of giving radiotherapy
    # after surgery in older women is another question
    assert about_question(
        "Surgery with or without radiotherapy in older women: local recurrence after surgery "
        "alone was 4% in older women.",
        frame,
    )
    assert not about_question(
        "Partial versus whole-organ radiotherapy after surgery in older women: local recurrence "
        "was 4% in older women.",
        frame,
    )


def test_the_standard_arm_is_named_by_its_other_names():
    frame = frame_question("High-dose examplumab versus standard-dose examplumab in examplitis")
    text = "65% with high-dose examplumab and 59% in the conventional-dose examplumab group"
    assert arms_of(text, frame) == [True, True]
    assert arms_of("high-dose examplumab or conventionally dosed examplumab", frame) == [True, True]
    # "dose" is both arms' part; "high-dose" still names the first
    hdc = frame_question(
        "High-dose chemotherapy with stem-cell support versus standard-dose chemotherapy in X"
    )
    text = "High-dose chemotherapy with stem cell transplantation was compared with observation"
    assert arms_of(text, hdc) == [True, False]
    # ... by "high-dose" or "high dose", not by "high" and "dose" apart
    assert arms_of("High dose chemotherapy and stem cell rescue", hdc)[0]
    assert not arms_of("High-risk women: dose-dense chemotherapy, G-CSF support", hdc)[0]
    care = frame_question("Exercise versus standard care for fatigue in examplitis")
    assert arms_of("Exercise or usual care: fatigue fell", care) == [True, True]


def test_a_class_named_in_a_compound_is_named_by_its_members():
    frame = frame_question("Platinum-based versus non-platinum chemotherapy in examplitis")
    assert arms_of("Carboplatin plus docetaxel versus epirubicin chemotherapy", frame) == [True] * 2
    assert arms_of("Adding carboplatin to paclitaxel", frame) == [True, False]


def test_a_source_on_the_population_that_never_names_the_condition_is_off_the_question():
    """ "X for night sweats in men after prostate surgery": a trial in the same men on another
    end point names the population but not the condition treated, so it is no source on the
    question; naming either word of the condition is enough, in either spelling."""
    frame = frame_question("Non-hormonal treatments for night sweats in men after prostate surgery")
    assert [w.whole for w in frame.target_words()] == ["night", "sweat"]
    on = "Gabapentin for sweats in men after prostate surgery\nNight sweats fell by half."
    assert about_question(on, frame)
    assert not about_question("Radiotherapy after prostate surgery in men: recurrence", frame)
    # named once, in passing (a side effect among others), is not what the document is about
    assert not about_question(
        "Radiotherapy after prostate surgery in men\nSide effects: sweats, nausea.", frame
    )
    oedema = frame_question("Compression sleeves to prevent arm oedema after axillary surgery")
    assert [w.whole for w in oedema.target_words()] == ["arm", "edema"]
    assert about_question(
        "Compression sleeves after axillary surgery\nArm edema in 5% vs 9%; edema resolved.", oedema
    )
    # what the condition comes from is not the condition: "treatment-related" is left out
    tired = frame_question("Yoga for treatment-related tiredness in adults with leukaemia")
    assert [w.whole for w in tired.target_words()] == ["tired"]
    assert not about_question(
        "Yoga after treatment-related bone loss in adults with leukemia", tired
    )
    # ... but a source on the question names it somewhere: tiredness after surgery is another
    # population than tiredness from treatment
    assert tired.cause_words() == ["treatment"]
    assert about_question(
        "Yoga for tiredness in adults with leukemia\nTiredness fell during treatment.", tired
    )
    assert not about_question(
        "Yoga for tiredness after surgery in adults with leukemia\nTiredness fell by half.", tired
    )
    # what is measured of a condition does not name it: "quality" of life is in every abstract
    sleep = frame_question("Yoga for sleep quality in adults with leukaemia")
    assert not about_question(
        "Yoga in adults with leukemia\nQuality of life improved; quality scores rose.", sleep
    )
    assert about_question("Yoga for sleep in adults with leukemia\nSleep improved.", sleep)
    # ... and a word that qualifies what is measured names the condition only outside the name
    # of a method: "cognitive-behavioral therapy" for anxiety is not about cognitive function
    mind = frame_question("Interventions to improve cognitive function in adults with leukaemia")
    assert not about_question(
        "Cognitive-behavioral stress management in adults with leukemia\nIn adults with "
        "leukemia, cognitive behavioral therapy and cognitive therapy reduced anxiety.",
        mind,
    )
    assert about_question(
        "Yoga for cognitive function in adults with leukemia\nIn adults with leukemia, "
        "cognitive complaints fell and cognitive scores rose.",
        mind,
    )
    # a setting that names only the people treated has no condition to name
    assert frame_question("Ivermectin for patients with malaria").target_words() == []
    assert frame_question(AI_TAM).target_words() == []


def test_no_topic_vocabulary_in_the_kinds_templates():
    """The kinds' templates, their facets and the question frame name no particular medicine,
    organ or event of the runs the team tuned on or of the bench's questions."""
    banned = re.compile(
        r"trastuzumab|lapatinib|pertuzumab|ejection fraction|lvef|her2|cardiotox|heart|"
        r"tamoxifen|aromatase|letrozole|anastrozole|exemestane",
        re.I,
    )
    texts = [
        f"{q['label']} {q['description']} {' '.join(FACETS.get(key, ()))}"
        for questions in KIND_TEMPLATES.values()
        for key, q in questions.items()
    ]
    texts += [" ".join(facets) for facets in FACETS.values()]
    root = Path(__file__).resolve().parents[1]
    for module in ("research/text/frame.py", "research/text/frame_match.py"):
        texts.append((root / module).read_text(encoding="utf-8"))
    assert not [t for t in texts if banned.search(t)]


# The medicines, organs and subjects of the runs the team tuned on and of the question bench
# (bench/data/questions_*.jsonl): none may appear anywhere in the product's code, prompts or
# docstrings, so that nothing the judgement or the writer does is fitted to them.
TUNED_VOCABULARY = re.compile(
    r"\b(?:trastuzumab|pertuzumab|lapatinib|capecitabine|her2|lvef|ejection\s+fraction|"
    r"cardiotox\w*|cardiac|cardio\w*|heart|breast|tamoxifen|aromatase|letrozole|anastrozole|"
    r"exemestane|zoledronic|palbociclib|fulvestrant|docetaxel|paclitaxel|venlafaxine|gabapentin|"
    r"sentinel|axillary|lymph\w*|scalp|alopecia|hot\s+flash\w*|convalescent|odisha|"
    r"antiemetic|paravertebral)\b",
    re.I,
)
# The tables that name organs and drug classes: language resources that map every organ
# system's combining form to its plain word, and every class of the WHO INN stem book to its
# members' stems, like a stemmer's rules, not a topic's vocabulary.
LANGUAGE_TABLES = {"research/text/roots.py", "research/text/drug_classes.py"}


def _product_lines():
    """(path, line number, line) of the product's code and of every page an analyst reads
    (their placeholders and examples), the language tables excepted."""
    root = Path(__file__).resolve().parents[1]
    files = [
        root / "streamlit_app.py",
        *(root / "research").rglob("*"),
        *(root / "app_pages").rglob("*"),
    ]
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        if path.suffix not in {".py", ".md", ".txt", ".json"} or rel in LANGUAGE_TABLES:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield rel, n, line


def test_no_tuned_vocabulary_anywhere_in_the_product():
    hits = [
        f"{rel}:{n}: {line.strip()[:90]}"
        for rel, n, line in _product_lines()
        if TUNED_VOCABULARY.search(line)
    ]
    assert not hits, "\n".join(hits)


def test_no_bench_question_is_named_in_the_product():
    """Every question of the four bench sets (unseen, calibration, hold-out, dev) is read from its
    file, never typed here: no arm of a framed question and no event's, person's or topic's name
    appears in the product, so no rule can have been written for one of them."""
    root = Path(__file__).resolve().parents[1]
    phrases = set()
    for name in ("unseen", "calibration", "holdout", "dev"):
        path = root / "bench" / "data" / f"questions_{name}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            frame = frame_question(json.loads(line)["question"])
            if frame.arms:
                keys = frame.arm_keys()
                phrases |= {a.lower() for a, k in zip(frame.arms, keys, strict=False) if k}
            else:
                phrases.add(frame.question.lower())
    # a one-word arm the frame reads as a kind of treatment ("radiotherapy" of "radiotherapy
    # versus no radiotherapy") is the product's generic vocabulary, not a question's topic
    phrases = {p for p in phrases if len(p.split()) > 1 or frame_question(p).kind != "intervention"}
    assert len(phrases) >= 20
    hits = [
        f"{rel}:{n}: “{p}”"
        for rel, n, line in _product_lines()
        for p in phrases
        if re.search(rf"\b{re.escape(p)}\b", line.lower())
    ]
    assert not hits, "\n".join(hits)


def _doc(title: str, text: str):
    src = SourceRecord(
        source_id="src_001",
        citation_id="c1",
        source_type="pubmed",
        external_id="1",
        url="https://example.org/1",
        title=title,
    )
    return EvidenceDoc(src, text, True)


def test_the_audit_fails_a_citation_of_a_source_off_the_question():
    on = _doc(
        "Letrozole versus tamoxifen as adjuvant therapy",
        "Postmenopausal women with early breast cancer received an aromatase inhibitor.",
    )
    off = _doc(
        "Duloxetine for arthralgia",
        "Rates of adverse events were higher with duloxetine in early breast cancer.",
    )
    assert on_question(on, AI_TAM) and not on_question(off, AI_TAM)
    check = CitationCheck(
        where="report",
        sentence="Rates of adverse events were higher with duloxetine.",
        number=1,
        source_id="src_001",
        score=0.9,
        cosine=0.9,
        overlap=0.9,
        verdict="supported",
        on_question=False,
    )
    summary = summarize([check])
    assert summary.off_question == 1 and "1 cite a source off the question" in summary.line()


def test_a_source_titled_for_the_opposite_setting_is_not_on_the_question():
    """A first-line trial in advanced disease shares both arms and most words with a question on
    adjuvant therapy of early disease, but studies another population."""
    frame = frame_question("Drug A versus drug B as adjuvant therapy for early disease")
    assert contradicts_setting(
        "Drug A versus drug B as first-line therapy in advanced disease", frame
    )
    assert contradicts_setting("Drug A in metastatic disease: early results", frame)
    assert contradicts_setting("Drug A for patients with bone metastases of the disease", frame)
    assert not contradicts_setting("Drug A versus drug B after surgery for early disease", frame)
    assert not contradicts_setting("Drug A or drug B: five-year results", frame)
    # preventing a disease in healthy people is not treating it after surgery
    assert contradicts_setting("Drug B for the prevention of the disease", frame)
    # a group's name is who ran the study, not its setting
    assert contradicts_setting(
        "Drug B for the prevention of the disease: report of the Northern Adjuvant Study Group",
        frame,
    )
    assert not contradicts_setting("Adjuvant drug B after prevention failed", frame)
    # ... and the other way: a question on metastases is not answered by trials in early or
    # nonmetastatic disease
    spread = frame_question("Drug A versus drug B for bone metastases of the disease")
    assert contradicts_setting("Drug A in patients with nonmetastatic disease", spread)
    assert contradicts_setting("Adjuvant drug A in the disease: a placebo-controlled trial", spread)
    assert not contradicts_setting("Drug A versus drug B in bone metastases", spread)


def test_a_source_on_people_without_the_condition_is_not_on_a_question_about_people_with_it():
    """ "X for low mood in women with examplitis": a trial in healthy women, or in women at risk
    of examplitis, or of preventing examplitis, studies people who do not have it; a title that
    also names people who have it stays on the question."""
    frame = frame_question("Talking therapy for low mood in women with examplitis")
    assert contradicts_setting("Talking therapy for healthy women at risk for examplitis", frame)
    assert contradicts_setting("Examplumab for the prevention of examplitis: mood effects", frame)
    assert not contradicts_setting("Talking therapy for low mood in examplitis survivors", frame)
    # ... or a study of the risk of getting it
    survivors = frame_question("Do weight-loss interventions work for obese examplitis survivors?")
    assert contradicts_setting("Overweight, obesity and invasive cancer risk", survivors)
    assert contradicts_setting("Weight and the risk of developing examplitis", survivors)
    assert not contradicts_setting(
        "Exercise and cardiovascular disease risk in women with examplitis", survivors
    )
    assert not contradicts_setting(
        "Preventing low mood in women with examplitis: a randomised trial", frame
    )
    assert not contradicts_setting(
        "Prevention of low mood in patients with examplitis: a randomised trial", frame
    )
    # a question on preventing something has no people who already have it
    prevent = frame_question("Compression sleeves to prevent arm swelling after examplitis surgery")
    assert not contradicts_setting("Compression for the prevention of arm swelling", prevent)


def test_a_question_on_preventing_a_disease_is_not_answered_by_treating_it():
    """ "A versus B for examplitis prevention": a trial in people who have the disease is
    another population, and a source that never speaks of preventing it is on treatment, though
    both name the disease; a trial in people at risk stays on the question."""
    frame = frame_question("Arvotinib versus belzumab for examplitis prevention in women")
    assert contradicts_setting("Arvotinib after surgery in women with invasive examplitis", frame)
    assert contradicts_setting("Belzumab for bone loss in examplitis patients", frame)
    assert not contradicts_setting("Arvotinib in women at increased risk of examplitis", frame)
    # "with" between the arms, and the people the question names, are no one who has it
    assert not contradicts_setting(
        "Comparison of arvotinib with belzumab in women at increased risk", frame
    )
    treated = "Arvotinib and belzumab in women\nArvotinib improved survival in examplitis."
    assert not about_question(treated, frame)
    assert about_question(treated + " It also prevents examplitis in healthy carriers.", frame)
    assert about_question(treated + " Examplitis risk reduction was 40%.", frame)
    # a question on adjuvant use is answered by a source that says so, in either word
    adjuvant = frame_question(
        "Arvotinib versus belzumab as adjuvant therapy for examplitis in women"
    )
    assert not about_question(treated, adjuvant)
    assert about_question(treated + " Postoperative arvotinib was given for 5 years.", adjuvant)
    # treatment before surgery is not adjuvant treatment, though the word holds it
    assert not about_question(treated + " Neoadjuvant arvotinib was given.", adjuvant)


def test_an_arm_that_names_a_drug_class_is_named_by_a_member_of_it():
    """A comparison of a class ("statins versus placebo") is answered by trials that name a
    member ("atorvastatin"), by the WHO INN stem of the class."""
    frame = frame_question("Statins versus placebo for primary prevention in older adults")
    assert arms_named("Atorvastatin compared with placebo in adults over 70", frame) == 2
    assert arms_named("Aspirin compared with placebo in adults over 70", frame) == 1


def test_an_arm_is_named_by_the_words_that_tell_it_from_the_other():
    """Words both arms share name neither against the other: a sentence on "mesh repair" alone
    names no arm of "laparoscopic mesh repair versus open mesh repair"; a hyphenated word counts
    once, and is named by its whole or by all of its parts."""
    frame = frame_question("Laparoscopic mesh repair versus open mesh repair for inguinal hernia")
    assert frame.arm_keys() == [{"laparoscop"}, {"open"}]
    assert arms_named("Mesh repair of the hernia reduced recurrence.", frame) == 0
    assert arms_named("Laparoscopic repair hurt less than open surgery.", frame) == 2
    one = frame_question("H1N1-vaccine in pregnant women")
    assert arms_named("H1N1 infection in pregnant women", one) == 0  # one word of two
    assert arms_named("The H1N1 vaccine was given to pregnant women", one) == 1
    assert arms_named("An H1N1-vaccine trial", one) == 1
    thick = frame_question("Full-thickness skin grafts versus split grafts for burns")
    assert arms_named("a full skin graft", thick) == 0
    assert arms_named("full thickness skin", thick) == 1


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Headache occurred in 7% of the early group and 25% of the controls.", True),
        ("Relapse was 12% vs 30% at two years.", True),
        ("Pain fell by 2.1 points with the drug, whereas placebo gave 0.4 (P = .03).", True),
        ("Event-free survival was longer (HR 0.81; 95% CI 0.70-0.94).", True),
        ("The intervention significantly reduced symptoms.", False),
        ("Fifteen women aged 40 to 65 took part.", False),
        ("Between 1998 and 2005, the trial was open.", False),
    ],
)
def test_a_result_that_sets_the_groups_figures_against_each_other_contrasts(sentence, expected):
    """CONSORT item 17a: each group's result and the effect estimate, what a trial leads with."""
    assert contrasts(sentence) is expected


def test_a_contrast_is_quoted_before_a_result_of_the_same_score_and_an_allocation_is_conduct():
    """Of two results of a trial scored alike, the one with each group's figure comes first; a
    dose and a duration set against placebo is how participants were allocated, not a finding."""
    contrast = "Nausea was reported by 10% with the drug vs 31% with placebo."
    plain = "The drug significantly reduced nausea."
    assert quote_rank(0.9, contrast) > quote_rank(0.9, plain)
    allocation = "Women were randomly assigned to 400 mg of drug Q for 6 weeks versus placebo."
    assert finding_weight(allocation) == CONDUCT
    measured = "Patients were randomised; relapse was 12% vs 25% (P = 0.01)."
    assert finding_weight(measured) > CONDUCT


def test_a_name_made_of_a_word_and_a_letter_is_named_by_its_letter():
    """ "vitamin D" is not "vitamin E": the letter is the name, so a trial of vitamin E with
    another drug is no source on vitamin D, while "vitamin D3" and "Vitamin-D" name it."""
    frame = frame_question("Should adults with examplitis take vitamin D?")
    assert [[w.whole for w in arm] for arm in frame.arm_words()] == [["vitamind"]]
    assert not any(arms_of("Adults took examplumab and vitamin E daily.", frame))
    assert all(arms_of("Vitamin D3 supplementation in adults", frame))
    assert all(arms_of("Vitamin-D levels rose", frame))
