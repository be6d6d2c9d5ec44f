"""Evidence passages of search results: which syllabus questions a retrieved document answers,
and with which of its sentences (docs/design.md § Terms: evidence).

A result can be evidence only when it is about the topic: its title and text name more than
half of the topic's content words (``research.text.mentions_topic``) and, for a drug topic,
the drug itself (another medicine's efficacy sentence is no evidence about the topic's), or
its title alone is close to the topic. For a framed question (a comparison, an intervention, a
device: ``research.text.frame``) it must name an arm and most of the setting whatever its title,
and for any question naming a treatment (a drug profile too) its title must not name the
opposite setting (``populations.contradicts_setting``),
and it answers the questions that compare the arms (``planning.question_roles.ON_BOTH_ARMS``) only when it
names both arms and ``COMPARES_SETTING`` of the setting, and then not with a sentence that sets
one arm against a third comparator (placebo, observation: ``third_arm``). A trial's registry
record with no results answers no question on what was found (``registration_only``), a trial's
published protocol none at all (``published_protocol``). Its full
text (the raw artifact's ``text``; the snippets when the backend gave no text) is split into
whole-sentence passages (``passage_split.split_passages``) and scored against every question
(``judge.score_passages``); each question gets the result's best ``kept_for(question)``
passages at or over ``judge.EVIDENCE_MIN`` (``PER_QUESTION``; twice that for a primary question,
``planning.question_roles.PRIMARY``, whose section quotes a trial's second result too), best by
``research.text.findings.quote_rank`` (a result before a sentence on the study's conduct).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict

import numpy as np

from research.evidence import judge, passage_split
from research.models import EvidencePassage, Question, SearchResult
from research.planning.question_roles import (
    DEFINED_BY,
    HARMS,
    ON_BOTH_ARMS,
    PRIMARY,
    PRIMARY_WEIGHT,
)
from research.text import mentions_topic, norm_key, subject_of, topic_words, word_key
from research.text.comparators import another_comparison, studies_another, third_arm
from research.text.definitions import LEAD_SENTENCES, titled_as_topic
from research.text.entities import abbreviations, drug_names, names_any
from research.text.findings import outcome_family, quote_rank
from research.text.frame import QuestionFrame, frame_question
from research.text.frame_match import about_question, arms_of, setting_share
from research.text.named_events import another_name
from research.text.populations import contradicts_setting
from research.text.short_forms import short_forms, spelled_out
from research.text.vectors import Vectors

TITLE_ON_TOPIC = 0.55  # cosine(title, topic) that makes a result on-topic by itself
# Share of a comparison's setting words (population, role) a source must name before it answers
# what compares the arms: two of three, three of four. A first-line metastatic trial of the same
# two drugs names the disease and the population but not "adjuvant" or "early" (3 of 5), and a
# title naming the opposite setting is out whatever its share (``populations.contradicts_setting``);
# a trial "in clinically node-negative" patients that never says "early" names 2 of 3.
COMPARES_SETTING = 0.65
# A one-arm question's source whose title is this close to the arm as typed (cosine, MiniLM)
# names its intervention without the arm's words; the target and setting are still required.
# On the calibration questions' labels it admits 7 directly relevant sources, 2 related and 1
# off the question; at 0.3, 9, 10 and 1 (docs/evidence.md).
TITLE_NAMES_ARM = 0.35
PER_QUESTION = 3
MEMO_SIZE = 4096  # documents whose scored passages a process keeps (a run meets ~100)

# The same document comes back in many searches of a run (and of runs on the same syllabus):
# its passages are embedded as one batch of their own, so their scores depend on the document
# alone and can be kept. key → (question key → passages), source ids left empty.
_MEMO: OrderedDict[tuple, dict[str, list[EvidencePassage]]] = OrderedDict()
_MEMO_LOCK = threading.Lock()


def kept_for(question_key: str) -> int:
    """Passages a source keeps for a question: ``PER_QUESTION``, ``PRIMARY_WEIGHT`` times that
    for a primary question (``planning.question_roles.PRIMARY``)."""
    return PER_QUESTION * (PRIMARY_WEIGHT if question_key in PRIMARY else 1)


def about_topic(text: str, topic: str) -> bool:
    """``text`` names more than half of the topic's content words (all of them for a one- or
    two-word topic) and every drug the topic names (``research.text.entities.drug_names``)."""
    frame = frame_question(topic)
    if frame.framed:  # the question's arms and setting, not any half of its words
        return about_question(text, frame)
    if not all(mentions_topic(text, [{word_key(d)}]) for d in drug_names(topic)):
        return False
    return mentions_topic(text, topic_words(topic))


def _arm_in_title(vectors: Vectors, frame: QuestionFrame, titles: np.ndarray) -> list[bool]:
    """Per title vector (rows of ``titles``, unit MiniLM vectors), True when it names a one-arm
    question's intervention in other words: cosine with the arm as typed ≥ ``TITLE_NAMES_ARM``
    ("resistance training lowered X" for "physical activity programmes"; a survey of the
    condition or another treatment of it is far from the arm). A comparison's arms are always
    named in words: which of the two a source is on decides what it answers."""
    if not frame.framed or len(frame.arms) != 1 or not len(titles):
        return [False] * len(titles)
    arm = judge.fixed_encode(vectors, [frame.arms[0]])[0]
    return [bool(x >= TITLE_NAMES_ARM) for x in np.round(titles @ arm, 4)]


def compares(text: str, frame: QuestionFrame) -> bool:
    """True when a source names every arm of a comparison (an arm of three words or more by any
    of them, as an abstract shortens it: ``frame_match.arms_of`` ``loose``) and
    ``COMPARES_SETTING`` of its setting: it can answer the questions only such a source answers
    (``question_roles.BOTH_ARMS``)."""
    return all(arms_of(text, frame, loose=True)) and setting_share(text, frame) >= COMPARES_SETTING


# Kinds of question about something that has a page of its own (an event, a person, a topic): a
# page named inside the question's longer wording is the page on it (``titled_as_topic`` loose)
NAMED_KINDS = frozenset({"event", "person", "general", "condition"})

# The questions only a study's results answer: whether it works and what harm it does.
FOUND = PRIMARY | HARMS
REGISTRY = "clinicaltrials.gov"  # the source type of a trial's registry record
# A journal's publication of a trial's protocol: "…: study protocol for a randomised controlled
# trial", "… trial protocol", "A protocol for a … trial", "…: design and rationale of a
# randomized trial", "Rationale and design of …" (not a treatment protocol's results: "…
# prevention protocol on quality of life", "the … protocol: a randomized trial").
PROTOCOL_TITLE = re.compile(
    r"\b(?:study|trial)\s+protocol\b|^\s*(?:a\s+)?protocol\s+(?:for|of)\s+(?:an?|the)\b|"
    r":\s*(?:a\s+)?protocol\s+(?:for|of)\b|"
    r"\b(?:design\s+and\s+(?:rationale|methods?)|rationale\s+and\s+design)\b",
    re.I,
)
_RESULTS_LINE = re.compile(r"^\s*Results?\s*:", re.M)


def registration_only(result: SearchResult) -> bool:
    """True for a trial registry record with no results in its text (ClinicalTrials.gov's
    protocol section, which is what the clinicaltrials backend and the shared corpus keep): its
    sentences say what a trial plans to measure and why, so they answer no question of ``FOUND``
    (a planned "serious adverse events will be recorded" is no harm found)."""
    return result.source_type == REGISTRY and not has_results(result.text)


def published_protocol(result: SearchResult) -> bool:
    """True for a journal's publication of a trial's protocol (titled so: ``PROTOCOL_TITLE``):
    its sentences are the trial's plans and the case for running it, which answer no question
    of the syllabus (the background of a hundred papers, and no finding)."""
    return bool(PROTOCOL_TITLE.search(result.title or ""))


def has_results(text: str) -> bool:
    """True when a registry record's ``text`` has a "Results:" line (its trial has reported)."""
    return bool(_RESULTS_LINE.search(text or ""))


def result_text(result: SearchResult) -> str:
    """The text whose passages count: the full document text, else its snippets."""
    return result.text if result.text.strip() else "\n".join(result.snippets)


def on_question(vectors: Vectors, topic: str, results: list[SearchResult]) -> list[bool]:
    """``on_question_docs`` of search results (title, else URL; ``result_text``)."""
    return on_question_docs(vectors, topic, [(r.title or r.url, result_text(r)) for r in results])


_YEAR = re.compile(r"\b(?:1[89]|20)\d{2}\b")


def another_year(title: str, topic: str) -> bool:
    """True when the topic names a year ("2031 Examplia floods") and ``title`` names only other
    years ("2032 Examplia floods"): another season's or another year's event, however many of
    its words it shares."""
    mine = set(_YEAR.findall(topic))
    theirs = set(_YEAR.findall(title))
    return bool(mine and theirs and not theirs & mine)


def on_question_docs(vectors: Vectors, topic: str, docs: list[tuple[str, str]]) -> list[bool]:
    """Per document ``(title, text)`` (in order), True when it may be evidence on the run's
    question ``topic`` (module doc): for a framed question it names an arm (in words, or for one
    arm by a title close to it: ``_arm_in_title``), what the intervention is for and the
    setting; for a drug profile it names the drug (a trial of another medicine in the same
    population is titled close to the topic); an event's title names no other year than the
    topic's (``another_year``) and gives the topic's event noun no other name
    (``text.named_events.another_name``: "Cyclone Examplo" for "Cyclone Exampla"); its title does
    not study another intervention with an arm as its background
    (``comparators.studies_another``); for any question naming a treatment its title does not
    name the opposite setting; and it is about the topic (``about_topic``) or titled close to
    it (cosine ≥ ``TITLE_ON_TOPIC``). The one gate of what a run may quote: a STORM turn's
    evidence, the results a Co-STORM expert speaks from, the sources of the report's other
    sections (``pipeline.material``)."""
    if not docs:
        return []
    # one batch for the titles, outside the cache: the counting decisions must not depend on
    # what else was embedded before
    head = judge.fixed_encode(vectors, [subject_of(topic), *[t for t, _ in docs]])
    titles = np.round(head[1:] @ head[0], 4)
    frame = frame_question(topic)
    drugs = [d.lower() for d in drug_names(topic)]
    named_by_title = _arm_in_title(vectors, frame, head[1:])
    out = []
    for (title, text), title_sim, named in zip(docs, titles, named_by_title, strict=True):
        whole = f"{title}\n{text}"
        out.append(
            not (frame.framed and not about_question(whole, frame, arms=not named))
            # a drug profile's source names the drug, however close its title's other words
            and not (frame.kind == "drug" and drugs and not any(d in whole.lower() for d in drugs))
            and not (frame.arms and contradicts_setting(title, frame))
            and not studies_another(title, frame)
            and not (
                not frame.framed and (another_year(title, topic) or another_name(title, topic))
            )
            and (float(title_sim) >= TITLE_ON_TOPIC or about_topic(whole, topic))
        )
    return out


def result_evidence(
    vectors: Vectors, questions: list[Question], topic: str, results: list[SearchResult]
) -> list[dict[str, list[EvidencePassage]]]:
    """Per result (in order), ``question key → its best passages`` over the bar (``source_id``
    left empty: the collector numbers the source when the turn is committed). Results that are
    not about the topic get ``{}``. Each document's passages are scored as one batch of their own."""
    out: list[dict[str, list[EvidencePassage]]] = [{} for _ in results]
    if not results or not questions:
        return out
    drugs = [d.lower() for d in drug_names(topic)]
    frame = frame_question(topic)
    model = str(getattr(vectors.embedder, "path", ""))
    qsig = tuple((q.key, q.label, q.description, tuple(judge.facets(q))) for q in questions)
    for i, (r, on) in enumerate(zip(results, on_question(vectors, topic, results), strict=True)):
        if not on or published_protocol(r):  # a trial's plans and its case: no answer
            continue
        text = result_text(r)
        whole = f"{r.title}\n{text}"
        key = (model, topic, qsig, r.title, text)
        with _MEMO_LOCK:
            hit = _MEMO.get(key)
            if hit is not None:
                _MEMO.move_to_end(key)
        if hit is None:
            hit = document_evidence(vectors, questions, topic, r.title, text, drugs)
            if frame.framed and len(frame.arms) > 1:
                # one arm only, or another setting: no answer to what compares the two here;
                # nor, in a source that compares them, a result of one arm against placebo
                both = compares(whole, frame) and not another_comparison(r.title, frame)
                hit = {
                    k: [
                        p
                        for p in ps
                        if k not in ON_BOTH_ARMS or (both and not third_arm(p.passage, frame))
                    ]
                    for k, ps in hit.items()
                }
                hit = {k: ps for k, ps in hit.items() if ps}
            with _MEMO_LOCK:
                _MEMO[key] = hit
                while len(_MEMO) > MEMO_SIZE:
                    _MEMO.popitem(last=False)
        # a protocol says what a trial plans, not what it found (decided outside the memo: the
        # same text under another source type is a report of the trial)
        planned = registration_only(r)
        out[i] = {
            k: [p.model_copy() for p in ps] for k, ps in hit.items() if not (planned and k in FOUND)
        }
    return out


def document_evidence(
    vectors: Vectors,
    questions: list[Question],
    topic: str,
    title_text: str,
    text: str,
    drugs: list[str],
) -> dict[str, list[EvidencePassage]]:
    """``question key → the document's best passages`` over the bar, ``PER_QUESTION`` each,
    best first (source ids empty); {} when no passage qualifies."""
    title = norm_key(title_text)
    # a document whose title does not name the topic's drug counts only where the passage
    # itself names it (an approval note on another drug is no evidence on this one), or the
    # short form the document gives it ("examplumab (EXB)")
    named = not drugs or any(d in title_text.lower() for d in drugs)
    short = tuple(abbreviations(f"{title_text}\n{text}", drugs))
    spans = [
        p
        for p in passage_split.split_passages(text)
        # the title again, whole or after a label ("ACRONYM: A randomized trial of …"): no finding
        if not (title and (norm_key(p.text).startswith(title) or norm_key(p.text) in title))
        and (named or any(d in p.text.lower() for d in drugs) or names_any(p.text, short))
    ]
    if not spans:
        return {}
    forms = short_forms(text)
    scores = judge.score_passages(
        questions,
        [p.text for p in spans],
        topic=topic,
        vectors=vectors,
        fixed=True,
        short_forms=short,
        outcome_forms=forms,
    )
    outcomes = [_outcome(p.text, forms) for p in spans]
    # the article on the topic: its lead says what it is (a page named inside a longer question
    # about something that happened or someone, not about a treatment)
    loose = frame_question(topic).kind in NAMED_KINDS
    if titled_as_topic(title_text, topic, loose=loose):
        for qi, q in enumerate(questions):
            if q.key in DEFINED_BY:
                lead = scores[qi, :LEAD_SENTENCES]
                scores[qi, :LEAD_SENTENCES] = np.maximum(lead, judge.DEFINITION_SCORE)
    found: dict[str, list[EvidencePassage]] = {}
    for qi, q in enumerate(questions):
        for col, p in enumerate(spans):
            s = float(scores[qi, col])
            if s >= judge.EVIDENCE_MIN:
                found.setdefault(q.key, []).append(
                    EvidencePassage(
                        question=q.key,
                        source_id="",
                        passage=p.text,
                        score=round(s, 4),
                        start=p.start,
                        end=p.end,
                        outcome=outcomes[col],
                    )
                )
    return {
        k: sorted(ps, key=lambda p: (-rank_for(k, p.score, p.passage), p.start))[: kept_for(k)]
        for k, ps in found.items()
    }


def _outcome(passage: str, forms: dict[str, str]) -> str | None:
    """The family of outcome ``passage`` reports read with its document's short ``forms``, when
    that differs from the passage read alone (else None: ``family_of`` reads the passage)."""
    if not forms:
        return None
    spelled = outcome_family(spelled_out(passage, forms))
    return spelled if spelled != outcome_family(passage) else None


def family_of(p: EvidencePassage) -> str:
    """The family of outcome an evidence passage reports (``findings.outcome_family``), read with
    its document's short forms when they tell more (``EvidencePassage.outcome``)."""
    return p.outcome if p.outcome is not None else outcome_family(p.passage)


def rank_for(question_key: str, score: float, passage: str) -> float:
    """The order in which a question's passages are kept and quoted: ``findings.quote_rank``
    (a stated result before a study's conduct), or the judgement's ``score`` alone on the
    question of what the topic is (``question_roles.DEFINED_BY``): a definition is no finding, and comes
    before a figure from the same article."""
    return score if question_key in DEFINED_BY else quote_rank(score, passage)
