"""The report's section on registered trials without results: what each allocates and measures."""

from __future__ import annotations

from research.pipeline import registrations

RECORD = "\n".join(
    [
        "Official title: A Randomized, Double-Blind Study of Examplumab in Adults With Fever Fits",
        "Status: Recruiting",
        "Study type: Interventional; phase: Phase 2",
        "Interventions: Examplumab; Placebo",
        "Summary: This study investigates examplumab for adults with fever fits. Patients will be "
        "randomized into two groups: examplumab or placebo. Primary outcomes of the study will "
        "cover fit recurrence at 12 months and serious adverse events.",
        "Description: Fever fits are common. The investigators hope to lower recurrence.",
    ]
)

FIELD_ONLY = """Official title: Examplumab for Fever Fits: A Pilot Study
Status: Completed
Summary: The process is based on obtaining examplumab from a national supplier.
Primary outcomes: Change in fit frequency; Change in temperature"""


def test_a_record_gives_its_allocation_and_its_primary_outcome():
    assert registrations.trial_sentences(RECORD) == [
        "Patients will be randomized into two groups: examplumab or placebo.",
        "Primary outcomes of the study will cover fit recurrence at 12 months and serious "
        "adverse events.",
    ]
    # the official title ("A Randomized …") is a field, not a sentence of the record
    assert not any("Double-Blind" in s for s in registrations.trial_sentences(RECORD))


def test_the_registry_field_stands_in_when_no_sentence_names_the_outcome():
    assert registrations.trial_sentences(FIELD_ONLY) == [
        "Primary outcomes: Change in fit frequency; Change in temperature."
    ]


def test_a_record_with_results_is_evidence_not_a_plan():
    assert registrations.trial_sentences(RECORD + "\nResults: Fits recurred in 10% vs 20%.") == []


def test_the_section_names_each_trial_once_with_its_citation():
    text = registrations.section_text(
        [
            ("src_1", "NCT00000001", RECORD),
            ("src_2", "NCT00000002", FIELD_ONLY),
            ("src_3", "NCT00000003", FIELD_ONLY),  # a second record of the same trial
            ("src_4", "NCT00000004", "Summary: Nothing is planned here."),
        ]
    )
    paras = text.split("\n\n")
    assert paras[0].startswith("The sources include 2 registered trials")
    assert paras[1].startswith("NCT00000001: Patients will be randomized")
    assert paras[1].count("[@src_1]") == 2
    assert paras[2] == (
        "NCT00000002: Primary outcomes: Change in fit frequency; Change in temperature.[@src_2]"
    )
    assert len(paras) == 3
    assert registrations.section_text([("src_4", "NCT4", "Summary: Nothing planned.")]) == ""


def test_a_near_repeat_of_another_record_leaves_the_count_true():
    """The report drops a sentence that nearly repeats an earlier one; the section drops it
    first, so the number it opens with is the paragraphs an analyst sees."""
    from research.text.vectors import Vectors  # noqa: PLC0415 - MiniLM only for this test

    other = FIELD_ONLY.replace("Change in temperature", "Change in body temperature")
    text = registrations.section_text(
        [("src_2", "NCT00000002", FIELD_ONLY), ("src_3", "NCT00000003", other)], Vectors()
    )
    assert text.split("\n\n")[0].startswith("The sources include 1 registered trial ")
    assert "NCT00000003" not in text


ON_TOPIC = """Official title: Talking Therapy for Anxiety in Adults With Examplitis
Conditions: Examplitis; Anxiety
Summary: Adults with examplitis and anxiety will be randomized to talking therapy or usual care.
Primary outcomes: Anxiety score at 12 weeks"""

# a long description that names the question's population, outcome and therapy in passing
IN_PASSING = """Official title: A Brief Online Programme to Reduce Pandemic Stress Among Office Workers
Conditions: Stress
Summary: Office workers will be randomized to an online programme or a waitlist.
Description: The programme adapts talking therapy, which lowered anxiety in adults with
examplitis. Talking therapy for anxiety in adults with examplitis is well studied; this trial
applies talking therapy to pandemic stress, anxiety and low mood at work, not to examplitis.
Primary outcomes: Stress score at 8 weeks"""


def test_a_record_naming_the_question_only_in_its_description_is_not_listed():
    """What a registration studies is in its titles and conditions: a record whose description
    names the question's therapy, outcome and population in passing passes the run's gate on
    its whole text but is not listed as a trial on the question."""
    from research.evidence.passages import on_question_docs  # noqa: PLC0415 - loads MiniLM
    from research.models import SourceRecord  # noqa: PLC0415
    from research.text.vectors import Vectors  # noqa: PLC0415

    topic = "Talking therapy for anxiety in adults with Examplitis"
    vectors = Vectors()
    texts = {"src_1": ON_TOPIC, "src_2": IN_PASSING}
    titles = {"src_1": "Talking therapy in examplitis", "src_2": "Online pandemic stress programme"}
    records = [
        SourceRecord(
            source_id=sid,
            citation_id=sid[-1],
            source_type="clinicaltrials.gov",
            external_id=f"NCT0000000{sid[-1]}",
            url=f"https://clinicaltrials.gov/study/NCT0000000{sid[-1]}",
            title=titles[sid],
        )
        for sid in texts
    ]
    gate = on_question_docs(vectors, topic, [(titles[s], texts[s]) for s in texts])
    assert gate == [True, True]  # the whole text of each names the question
    kept = registrations.on_question(vectors, topic, records, texts)
    assert [sid for sid, _, _ in kept] == ["src_1"]
