"""WikiWriter ↔ TopicExpert steps without a model (docs/design.md § Simulated conversations; STORM paper §3.2) and
the question assignment (docs/design.md § Source collector).

- ``ask``: AskQuestionWithPersona → template questions, steered by the collector's
  ``next_focus``; ``THANKS`` when the turn cap is reached or nothing new is left to ask.
- ``to_queries``: QuestionToQuery → 1–3 keyword queries.
- ``answer``: AnswerQuestion → the most relevant retrieved sentences, each cited ``[n]``.
- ``assign``: docs/design.md § Collector tools: ``save_source(relevant_questions=...)`` assignment
by embedding similarity.
"""

from __future__ import annotations

import numpy as np

from research.engines.base import THANKS, AnswerOutput, AskOutput, AssignOutput, QueryList
from research.errors import UnknownQuestionError
from research.models import DialogueTurn, Perspective, Question, SearchResult, Syllabus
from research.text import (
    aspect_of,
    clip,
    content_words,
    ensure_period,
    is_boilerplate,
    norm_key,
    ranked_phrases,
    sentences_of,
    strip_citations,
    subject_of,
    topic_keys,
)
from research.text.findings import finding_factor
from research.text.vectors import Vectors, pick_diverse, rank

ANSWER_MIN_SIM = 0.30  # cosine(sentence, question) for a sentence to count as relevant
ANSWER_MAX, ANSWER_MIN = 6, 3
TOPIC_MIN = 0.25  # cosine(sentence or its result's title, topic) for a sentence to be on topic
NEAR_BEST = 0.8  # beyond the first 3, a sentence must score ≥ 80 % of the best one
DUPLICATE_SIM = 0.9  # cosine at which two sentences say the same thing
ASSIGN_SIM = 0.30  # cosine(best sentence, label+description) to assign a syllabus key
FOCUS_KEY_SIM = 0.20  # lower bar for the turn's focus keys (still needs evidence of the key)
FOCUS_RELEVANCE = 0.30  # cosine(best sentence, question) for the turn's focus keys to apply
MAX_FOLLOW_UPS = 2  # follow-up questions per conversation once the persona's own run out
_FOLLOW_UP = "Can you tell me more about"
NO_ANSWER = "The retrieved sources do not contain information relevant to this question."


def _asked(history: list[DialogueTurn]) -> tuple[set[str], set[str]]:
    questions = {norm_key(t.question) for t in history}
    keys = {k for t in history for k in t.focus_questions}
    return questions, keys


def focus_question(q: Question, subject: str) -> str:
    """The question asked when steering to syllabus question ``q``."""
    desc = q.description.strip().rstrip(".?")
    return (
        f"For {subject}, what do sources report on {q.label.lower()}: {desc[:1].lower()}{desc[1:]}?"
    )


def _from_focus(focus: str, subject: str) -> list[str]:
    """Fallback questions from a persona's focus when it brought no questions of its own."""
    parts = [p.strip() for p in focus.replace(":", ",").split(",") if len(p.strip()) > 3]
    return [f"What do sources report about {p.lower()} for {subject}?" for p in parts[:4]]


def _follow_up(history: list[DialogueTurn], subject: str, asked: set[str]) -> str | None:
    """A follow-up on the last grounded answer's top key phrase that no question mentioned yet
    (None after ``MAX_FOLLOW_UPS`` follow-ups or when the last answer cited nothing)."""
    if not history or "[" not in history[-1].answer:
        return None
    if sum(t.question.startswith(_FOLLOW_UP) for t in history) >= MAX_FOLLOW_UPS:
        return None
    said = " ".join(t.question.lower() for t in history)
    exclude = topic_keys(subject)
    for phrase in ranked_phrases([strip_citations(history[-1].answer)], top=8, exclude=exclude)[0]:
        if phrase.lower() in said or len(phrase.split()) < 2:
            continue
        q = f"{_FOLLOW_UP} {phrase.lower()} in relation to {subject}?"
        if norm_key(q) not in asked:
            return q
    return None


def ask(
    topic: str,
    perspective: Perspective,
    history: list[DialogueTurn],
    next_focus: list[Question],
    max_turns: int,
) -> AskOutput:
    """The WikiWriter's next question (deterministic).

    Order of preference: (1) a ``next_focus`` question whose key this conversation has not
    targeted yet: the persona's own syllabus question if it is a gap (a '<Label> Specialist'
    persona), else the first in ``next_focus`` order; ``focus_question`` is set to its key.
    On the first turn only the persona's own key steers: STORM's writer opens "based on your
    perspective" (docs/design.md § Simulated conversations), so each persona asks its own first
    question unless that is a gap. (2) the persona's next unasked template question (or questions
    built from its focus); (3) a follow-up on the last answer's top key phrase (at most ``MAX_FOLLOW_UPS`` per
    conversation). Never repeats a question of
    ``history``. Returns ``THANKS`` when ``len(history) >= max_turns`` or nothing new is left.
    """
    if len(history) >= max_turns:
        return AskOutput(question=THANKS)
    subject = subject_of(topic)
    asked, keys = _asked(history)
    gaps = [
        q
        for q in next_focus
        if q.key not in keys and norm_key(focus_question(q, subject)) not in asked
    ]
    own = [q for q in gaps if perspective.name.lower() == f"{q.label} specialist".lower()]
    if own or (gaps and history):
        q = (own or gaps)[0]
        return AskOutput(question=focus_question(q, subject), focus_question=q.key)
    for question in perspective.questions or _from_focus(perspective.focus, subject):
        if question.strip() and norm_key(question) not in asked:
            return AskOutput(question=question.strip())
    follow = _follow_up(history, subject, asked)
    return AskOutput(question=follow or THANKS)


def to_queries(topic: str, question: str, perspective: Perspective | None = None) -> QueryList:
    """QuestionToQuery: 1–3 keyword queries (stop words and generic question words removed).

    q1 = up to 4 topic keywords + up to 4 question keywords; q2 = the main topic keyword + the
    first 3 question keywords; q3 = the main topic keyword + up to 3 keywords of the persona's
    focus not in the question. Duplicates dropped; the topic alone when the question has no keywords.
    """
    topic_kw = content_words(subject_of(topic))
    low_topic = {w.lower() for w in topic_kw}
    q_kw = [w for w in content_words(strip_citations(question)) if w.lower() not in low_topic]
    main = topic_kw[:1]
    cands = [" ".join(topic_kw[:4] + q_kw[:4])]
    if len(q_kw) >= 2:
        cands.append(" ".join(main + q_kw[:3]))
    if perspective is not None:
        have = low_topic | {w.lower() for w in q_kw}
        extra = [w for w in content_words(perspective.focus) if w.lower() not in have][:3]
        if extra:
            cands.append(" ".join(main + extra))
    out: list[str] = []
    for c in cands:
        c = c.strip()
        if c and c.lower() not in (x.lower() for x in out):
            out.append(c)
    return QueryList(queries=out[:3] or [subject_of(topic) or question.strip()])


def _candidates(results: list[SearchResult]) -> tuple[list[str], list[int]]:
    sents: list[str] = []
    owner: list[int] = []
    for n, r in enumerate(results, start=1):
        for s in sentences_of(r):
            s = strip_citations(s)
            if len(s.split()) >= 5 and not is_boilerplate(s):
                sents.append(s)
                owner.append(n)
    return sents, owner


def relevance(
    vectors: Vectors, text: str, topic: str, sents: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """``(relevance, cos_to_text)`` of each sentence to a question/step ``text`` on ``topic``.

    ``cos_to_text`` is the plain cosine; ``relevance`` averages it with the cosine to the text's
    aspect (its words minus the topic's, ``text.aspect_of``), so that sentences about the asked
    aspect beat sentences that only match the topic. Both rounded to 4 decimals.
    """
    direct = vectors.sim([text], sents)[0]
    aspect = aspect_of(text, topic)
    if aspect == text:
        return direct, direct
    return np.round(0.5 * direct + 0.5 * vectors.sim([aspect], sents)[0], 4), direct


def _on_topic(
    vectors: Vectors, topic: str, results: list[SearchResult], sents: list[str], owner: list[int]
) -> np.ndarray:
    """Per sentence: it, or the title of the result it comes from, has cosine ≥ ``TOPIC_MIN``
    to the topic (keeps a '...debate...' sentence of an election page out of a hurricane's
    'controversies' answer). All True when the topic is empty."""
    if not topic.strip():
        return np.ones(len(sents), dtype=bool)
    titles = [r.title or r.url for r in results]
    t_sim = vectors.sim([topic], titles)[0]
    s_sim = vectors.sim([topic], sents)[0]
    return np.array(
        [max(float(s_sim[i]), float(t_sim[owner[i] - 1])) >= TOPIC_MIN for i in range(len(sents))]
    )


def answer(
    vectors: Vectors, topic: str, question: str, results: list[SearchResult]
) -> AnswerOutput:
    """AnswerQuestion: 3–6 retrieved sentences most relevant to the question (``relevance``),
    each followed by ``[n]`` (n = 1-based index of its result); near-duplicates (cosine ≥ 0.9)
    dropped.

    A sentence qualifies at plain cosine ≥ ``ANSWER_MIN_SIM`` when it is on the topic
    (``_on_topic``); near-duplicates by wording (content-word overlap ≥ 0.7) go too; sentences cut short (``…``) rank
    10 % lower, and every score is multiplied by ``findings.finding_factor`` (a stated result
    before a study's conduct or aim); sentences 4–6 must also reach ``NEAR_BEST`` of the best score (so topic-only
    matches do not pad the answer). With no qualifying sentence the answer says so and cites
    nothing.
    """
    sents, owner = _candidates(results)
    if not sents:
        return AnswerOutput(answer=NO_ANSWER, cited=[])
    score, direct = relevance(vectors, question, topic, sents)
    sims = np.where([s.endswith("…") for s in sents], score * 0.9, score)
    # what a source found before how its study was run (``findings.finding_factor``)
    sims = sims * np.array([finding_factor(s) for s in sents])
    on_topic = _on_topic(vectors, topic, results, sents, owner)
    order = [i for i in rank(sims) if direct[i] >= ANSWER_MIN_SIM and on_topic[i]]
    if not order:
        return AnswerOutput(answer=NO_ANSWER, cited=[])
    vecs = vectors.encode(sents)
    close = [i for i in order if sims[i] >= NEAR_BEST * sims[order[0]]]
    chosen = pick_diverse(close, vecs, ANSWER_MAX, DUPLICATE_SIM, texts=sents)
    if len(chosen) < ANSWER_MIN:  # fill up with the next relevant sentences
        chosen = pick_diverse(
            chosen + [i for i in order if i not in chosen],
            vecs,
            ANSWER_MIN,
            DUPLICATE_SIM,
            texts=sents,
        )
    parts = [f"{ensure_period(sents[i])}[{owner[i]}]" for i in chosen]
    return AnswerOutput(answer=" ".join(parts), cited=sorted({owner[i] for i in chosen}))


def assign(
    vectors: Vectors,
    syllabus: Syllabus,
    question: str,
    focus: list[str],
    results: list[SearchResult],
) -> AssignOutput:
    """Seed 000 question assignment for each result.

    Per result, with its sentences S (title + full text, as the agent (docs/design.md § Source
    collector) reads the page): nothing is assigned unless max cos(S, question) ≥
    ``FOCUS_RELEVANCE`` (the result bears on the turn's question, which names the topic). Then key k is assigned when
    max cos(S, label_k + description_k) ≥ ``ASSIGN_SIM`` and k is among the result's 2 best keys;
    the turn's ``focus`` keys are added when max cos(S, label_k + description_k) ≥
    ``FOCUS_KEY_SIM``.
    ``key_excerpts`` = the 1–2 sentences most similar to the question, ≤ 300 characters.

    Raises:
        UnknownQuestionError: a ``focus`` key that is not in the syllabus.
    """
    bad = [k for k in focus if syllabus.get(k) is None]
    if bad:
        raise UnknownQuestionError(
            f"focus keys {bad} are not in syllabus '{syllabus.name}'; use one of {syllabus.keys()}."
        )
    qtexts = [f"{q.label}: {q.description}" for q in syllabus.questions]
    rel: list[list[str]] = []
    excerpts: list[str] = []
    for r in results:
        sents = [
            strip_citations(s) for s in [r.title, *sentences_of(r, use_text=True)] if s.strip()
        ]
        if not sents:
            rel.append([])
            excerpts.append("")
            continue
        keys: list[str] = []
        to_q = vectors.sim([question], sents)[0]
        if qtexts and float(to_q.max()) >= FOCUS_RELEVANCE:
            best = vectors.sim(sents, qtexts).max(axis=0)
            keys = [syllabus.questions[j].key for j in rank(best)[:2] if best[j] >= ASSIGN_SIM]
            # a focus key also needs some evidence of its own: the dialogue question names the
            # topic, so topical results would otherwise fill any gap (e.g. patents) untruthfully
            idx = {q.key: j for j, q in enumerate(syllabus.questions)}
            keys += [k for k in focus if k not in keys and best[idx[k]] >= FOCUS_KEY_SIM]
        rel.append(keys)
        body = [i for i in rank(to_q) if i > 0 or len(sents) == 1]  # prefer text over the title
        top = [sents[i] for i in body[:2]]
        excerpt = " ".join(top)
        excerpts.append(clip(excerpt if len(excerpt) <= 300 else top[0], 300))
    return AssignOutput(relevant_questions=rel, key_excerpts=excerpts)
