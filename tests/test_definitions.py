"""The sentence that says what the topic is, and a page's furniture, in the evidence judgement."""

from __future__ import annotations

import pytest

from research.evidence import judge, passage_split
from research.planning.syllabus import base_template
from research.text.definitions import defines, titled_as_topic
from research.text.findings import FURNITURE, finding_weight, quote_rank


@pytest.mark.parametrize(
    ("sentence", "topic", "expected"),
    [
        (
            "Oliver Jane Doe (1950 – 2020) was an American drummer, best known for Band X.",
            "Jane Doe",
            True,
        ),
        (
            "A fever fit, also known as a febrile turn, is a seizure with a high temperature.",
            "Fever fit",
            True,
        ),
        ("Jane Doe refers to a drummer of the band Band X.", "Jane Doe", True),
        # the copula's subject is someone else, or a clause on the way
        ("The band's drummer, Jane Doe, said that it was a hard year.", "Jane Doe", False),
        ("Her brother was an engineer in Leeds.", "Jane Doe", False),
        # the topic named only after the copula: about something else
        ("The tour was a success for Jane Doe and the band.", "Jane Doe", False),
        ("Jane Doe played drums on every album of the band.", "Jane Doe", False),
    ],
)
def test_a_definitional_sentence_names_the_topic_as_its_subject(sentence, topic, expected):
    assert defines(sentence, topic) is expected


def test_who_they_are_is_answered_by_the_sentence_that_says_it():
    """MiniLM puts "was an American drummer …" far from "role, field, origin" (≈ 0.05 before):
    the form decides, and only for the question that asks what the topic is."""
    topic = "Jane Doe"
    questions = base_template("auto", topic).questions
    keys = [q.key for q in questions]
    assert "background.overview" in keys  # a person's syllabus
    said = "Oliver Jane Doe (1950 – 2020) was an American drummer, best known for Band X."
    other = "Jane Doe played drums on every album of the band until 2019."
    scores = judge.score_passages(questions, [said, other], topic=topic, fixed=True)
    row = keys.index("background.overview")
    assert scores[row, 0] >= judge.DEFINITION_SCORE > scores[row, 1]
    assert max(scores[i, 0] for i in range(len(keys)) if i != row) < judge.DEFINITION_SCORE


def test_a_pages_furniture_is_no_passage():
    text = (
        "Discover the real story, facts, and details of Jane Doe. "
        "Update your browser to view this website correctly. "
        "Jane Doe recorded eight studio albums with Band X between 1999 and 2021."
    )
    assert [p.text for p in passage_split.split_passages(text)] == [
        "Jane Doe recorded eight studio albums with Band X between 1999 and 2021."
    ]


def test_the_article_on_the_topic_opens_with_its_lead():
    assert titled_as_topic("2031 Example flood", "2031 Example flood")
    assert titled_as_topic("2031 Example flood - Wikipedia", "2031 Example flood")
    # a section of the article, or another page about it, is not its opening
    assert not titled_as_topic("2031 Example flood — Aftermath", "2031 Example flood")
    assert not titled_as_topic("Jane Doe – Age, Bio, Family - CelebSite", "Jane Doe")


def test_a_page_named_inside_a_longer_question_is_the_page_on_it():
    """``loose``: the page "Exampla attack" for "Exampla attack in Examplia, May 2031", "Jane
    Doe (swimmer)" for "Jane Doe, Canadian swimmer"; not a section, nor a one-word place."""
    question = "Exampla attack in northern Examplia, May 2031"
    assert titled_as_topic("Exampla attack", question, loose=True)
    assert not titled_as_topic("Exampla attack", question)
    assert titled_as_topic("Jane Doe (swimmer)", "Jane Doe, Canadian swimmer", loose=True)
    assert not titled_as_topic("Exampla attack — Attack", question, loose=True)
    assert not titled_as_topic("Examplia", question, loose=True)


def test_a_sentence_that_points_back_ranks_after_one_that_stands_alone():
    alone = "The railway board charged three officials with negligence."
    back = "They were charged with negligence by the railway board."
    assert quote_rank(0.8, back) < quote_rank(0.8, alone)
    contrast = "In contrast, the railway board charged no officials with negligence."
    assert quote_rank(0.8, contrast) < quote_rank(0.8, alone)
    rest = "No other officials were charged with negligence by the railway board."
    assert quote_rank(0.8, rest) < quote_rank(0.8, alone)
    # "This study" names what it points at; a person's "He" is the topic
    assert quote_rank(0.8, "This study showed fewer fits.") == quote_rank(
        0.8, "The study showed fewer fits."
    )
    # a reference list's entry is a page's furniture
    assert finding_weight("Doe, J.; Roe, Richard; Poe, Ann (10 June 2031).") == FURNITURE


def test_a_procedures_complications_answer_the_question_on_harms():
    """Pain, swelling or numbness after a procedure is its harm, in the words surgical trials
    use; MiniLM alone put such a sentence far under the bar of "adverse events, toxicity"."""
    topic = "Minor examplectomy versus radical examplectomy in early fever fits"
    questions = base_template("auto", topic).questions
    keys = [q.key for q in questions]
    said = (
        "There was less pain, less swelling and less numbness after minor examplectomy than "
        "after radical examplectomy (P < 0.01)."
    )
    scores = judge.score_passages(questions, [said], topic=topic, fixed=True)
    assert scores[keys.index("harms.comparison"), 0] >= judge.EVIDENCE_MIN
