"""Each syllabus question's section, written from its evidence (docs/design.md § Terms: evidence).

One rule decides a question's status everywhere: it is **answered** exactly when it is *met* on
the coverage chart — at least ``min_sources`` saved sources with an evidence passage for it
(docs/design.md § Collector tools: ``get_progress``) — so the chart, ``Report.questions`` and the report text agree.

``fill``: an answered question's section gets its best evidence passages (``on_point_rank``: a
stated result first, then one naming the question's own terms, from a source titled like the
question; one passage per source before a second one of any source, near-duplicates dropped:
maximal marginal relevance with ``DUPLICATE_SIM``), as many as the run's depth allows
(``section_budget``, shared by ``share_budget``: a primary question, ``planning.question_roles.PRIMARY``,
weighs ``PRIMARY_WEIGHT``, and quotes at least ``PER_SOURCE_RESULTS`` results on its own outcomes
of every source that has them, up to ``RESULTS_GROWTH`` times its share: ``results_quota``). A
passage is quoted under the question it answers best once its score is weighed by how its outcome
fits the question (``_fit_score``: a harm under harms).
A sentence on a study's aim, design or conduct (who took part, how they were allocated:
``findings.CONDUCT``, ``cues.is_design``) counts for coverage but is never quoted; a question
with nothing else says so (``statements.conduct_statement``). An unmet question's section
opens with the statement of what was searched and found (``statements.unmet_statement``) and
then quotes what evidence there is. Outline sections that
are no syllabus question keep the sentences ``sections.allocate`` gave them from the
conversations' sources, minus any a question's section already quotes.

Depth (``RunConfig.depth``) sets the report's length: about ``DEPTH_WORDS`` words, ~70 % of them
for the questions' sections; scarce evidence makes a report shorter, never padded.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from research.evidence.cues import is_design, names_focus
from research.evidence.judge import DEFINITION_SCORE
from research.evidence.passages import FOUND, family_of, rank_for
from research.models import EvidencePassage, GapReport, QuestionStop
from research.pipeline.material import Unit
from research.pipeline.sections import DUPLICATE_SIM, SectionPlan
from research.planning.question_roles import (
    DEFINED_BY,
    FROM_MAIN,
    HARMS,
    MISFIT_FACTOR,
    PRIMARY,
    PRIMARY_WEIGHT,
    outcome_fit,
)
from research.text import norm_key
from research.text.findings import CONDUCT, finding_weight
from research.text.frame import QuestionFrame, frame_question
from research.text.frame_match import term_share
from research.text.vectors import Vectors

ON_POINT = 0.5  # how much naming every term of the question raises a passage's rank
DOC_WEIGHT = 1.0  # how much a source whose title is the question's raises its passages' rank
REL_FLOOR, REL_SPAN = 0.45, 0.4  # cosine(question, title) mapped to [0, 1] over [0.45, 0.85]
HOLD_MARGIN = 0.05  # a passage is quoted under a question scoring within this of its best
PER_SOURCE_RESULTS = 2  # results of each source a primary question's section quotes at least
RESULTS_GROWTH = {"brief": 1, "standard": 2, "deep": 2}  # ... up to this times its share

DEPTH_WORDS = {"brief": 300, "standard": 1000, "deep": 2500}
QUESTION_SHARE = 0.8
WORDS_PER_SENTENCE = 24  # words per evidence sentence the budget assumes (shared corpus: ~30)


def section_budget(depth: str, questions: int, others: int) -> tuple[int, int]:
    """``(sentences per question section, sentences per other section)`` for a report of
    ``depth`` with that many sections of each kind (at least 1 and 1)."""
    words = DEPTH_WORDS.get(depth, DEPTH_WORDS["standard"])
    per_q = QUESTION_SHARE * words / max(1, questions) / WORDS_PER_SENTENCE
    per_o = (1 - QUESTION_SHARE) * words / max(1, others) / WORDS_PER_SENTENCE
    return max(1, round(per_q)), max(1, round(per_o))


def share_budget(
    available: list[int], per_question: int, weights: list[int] | None = None
) -> list[int]:
    """Sentences per question section: the report's ``per_question × len(available)`` sentences
    shared in proportion to ``weights`` (all 1 when None), each capped at what its question has
    to quote (``available``); what a scarce question leaves goes, one at a time, to the
    questions with the most left (ties: syllabus order). The total never exceeds
    ``per_question × len(available)``."""
    weights = weights or [1] * len(available)
    total = per_question * len(available)
    whole = sum(weights) or 1
    shares = [
        min(a, max(1, round(total * w / whole))) for a, w in zip(available, weights, strict=True)
    ]
    while sum(shares) > total:  # rounding up several shares can overshoot by one or two
        i = max(range(len(shares)), key=lambda j: (shares[j] / weights[j], j))
        shares[i] -= 1
    spare = total - sum(shares)
    while spare > 0:
        room = [
            (a - s, -i) for i, (a, s) in enumerate(zip(available, shares, strict=True)) if a > s
        ]
        if not room:
            break
        _, neg_i = max(room)
        shares[-neg_i] += 1
        spare -= 1
    return shares


def choose(
    vectors: Vectors,
    passages: list[EvidencePassage],
    n: int,
    taken: list[str],
    frame: QuestionFrame | None = None,
    relevance: dict[str, float] | None = None,
) -> list[EvidencePassage]:
    """Up to ``n`` passages, best first (``quote_rank``: a stated result before a study's conduct;
    with the run's question ``frame``, raised by up to ``ON_POINT`` for naming the question's own
    terms, ``frame_match.term_share``, and for its source's ``relevance`` to the question:
    ``on_point_rank``), those reporting the question's own family of outcome before the others
    (``question_roles.outcome_fit``), one per source before any source's second (the opening sentences
    of the page on the topic excepted: ``page_lead``, quoted beside the ``n``), none
    a near-duplicate (same words, or cosine ≥ ``DUPLICATE_SIM``) of a chosen one or of ``taken``
    (texts already quoted elsewhere in the report); appends the chosen texts to ``taken``."""
    if relevance:  # a source titled far from the question is quoted only when no other is
        near = [p for p in passages if relevance.get(p.source_id, 0.0) > 0.0]
        passages = near or passages
    ranked = sorted(
        passages, key=lambda p: (-on_point_rank(p, frame, relevance), p.source_id, p.start)
    )
    if not ranked:
        return []
    vecs = vectors.encode([p.passage for p in ranked])
    kept_vecs = list(vectors.encode(taken)) if taken else []
    keys = {norm_key(t) for t in taken}
    out: list[EvidencePassage] = []
    # each source's best passage that is not already quoted comes before any source's second: a
    # source whose best sentence the lead took still gives the section its next one; and what
    # reports the question's own family of outcome comes before what does not (a harm under
    # "does it work": ``question_roles.outcome_fit``)
    fits = [outcome_fit(p.question, family_of(p)) >= 1.0 and _answers_harms(p) for p in ranked]
    quoted: set[str] = set()  # sources with a passage in ``out``
    rounds: tuple[tuple[bool, bool], ...] = (
        (True, True),
        (True, False),
        (False, True),
        (False, False),
    )
    # a benefit is no answer to what harm a treatment does: a harms section quotes none
    if ranked[0].question in HARMS:
        rounds = rounds[:2]
    extra = 0  # the page's own opening sentences after its first: quoted beside the n, not in it
    for fitting, firsts in rounds:
        for p, v, fit in zip(ranked, vecs, fits, strict=True):
            if len(out) >= n + extra:
                return out
            again = p.source_id in quoted
            if (fitting and not fit) or (firsts and again and not page_lead(p)):
                continue
            if norm_key(p.passage) in keys:
                continue
            if kept_vecs and float(np.max(np.asarray(kept_vecs) @ v)) >= DUPLICATE_SIM:
                continue
            out.append(p)
            extra += again and page_lead(p)
            quoted.add(p.source_id)
            keys.add(norm_key(p.passage))
            kept_vecs.append(v)
            taken.append(p.passage)
    return out


# what a passage under a question on harms states, at least, when it names no harm: a finding
# (``finding_weight``: "examplitis occurred in 4%"), not who received what or a prognosis
HARM_FINDING = 0.7


def _answers_harms(p: EvidencePassage) -> bool:
    """False for a passage under a question on harms (``question_roles.HARMS``) that names no harm and
    states no finding (``HARM_FINDING``): how the arms were treated is no harm found."""
    if p.question not in HARMS:
        return True
    family = family_of(p)
    return family in ("harm", "both") or finding_weight(p.passage) >= HARM_FINDING


def page_lead(p: EvidencePassage) -> bool:
    """True for an opening sentence of the page on the topic, on the question of what the topic
    is (``passages.document_evidence`` scores those ``judge.DEFINITION_SCORE``): the page's lead
    says what happened, where and when, one sentence after another, so its sentences are quoted
    together, not one per source as findings of separate studies are."""
    return p.question in DEFINED_BY and p.score >= DEFINITION_SCORE


def on_point_rank(
    p: EvidencePassage, frame: QuestionFrame | None, relevance: dict[str, float] | None = None
) -> float:
    """``quote_rank`` of a passage (its score alone on the question of what the topic is,
    ``question_roles.DEFINED_BY``) × (1 + ``ON_POINT`` × the share of the question's terms it
    names) × (1 + ``DOC_WEIGHT`` × its source's ``relevance`` to the question): among results
    the judgement scores alike (its score saturates at 1), the one on the question's own outcome
    and population, from a study of the question itself, first."""
    # what the topic is, or what happened, is no finding of a study: the judgement's score alone
    # orders the question that asks it (a definition before a figure from the same article)
    base = rank_for(p.question, p.score, p.passage)
    if frame is not None:
        base *= 1 + ON_POINT * term_share(p.passage, frame)
    if relevance:
        base *= 1 + DOC_WEIGHT * relevance.get(p.source_id, 0.0)
    return base


def relevance(vectors: Vectors, topic: str, titles: dict[str, str]) -> dict[str, float]:
    """``source id → [0, 1]``: how close a source's title is to the question as typed (MiniLM
    cosine mapped linearly over [``REL_FLOOR``, ``REL_FLOOR + REL_SPAN``], clipped): a trial of
    the two arms in the question's setting is titled like the question; a neighbouring study
    (another setting, one arm, a technique) less so."""
    ids = [sid for sid, t in titles.items() if t.strip()]
    if not topic.strip() or not ids:
        return {}
    sims = vectors.sim([topic], [titles[sid] for sid in ids])[0]
    return {
        sid: float(np.clip((s - REL_FLOOR) / REL_SPAN, 0.0, 1.0))
        for sid, s in zip(ids, sims, strict=True)
    }


def reading_order(chosen: list[EvidencePassage]) -> list[EvidencePassage]:
    """Sources in the order of their best chosen passage; a source's passages in text order."""
    first: dict[str, int] = {}
    for i, p in enumerate(chosen):
        first.setdefault(p.source_id, i)
    return sorted(chosen, key=lambda p: (first[p.source_id], p.start))


def fill(
    vectors: Vectors,
    plans: list[SectionPlan],
    evidence: dict[str, list[EvidencePassage]],
    counts: dict[str, int],
    depth: str,
    topic: str = "",
    titles: dict[str, str] | None = None,
) -> dict[str, list[EvidencePassage]]:
    """Give every question section its evidence and its status (module docstring), and drop
    from the other sections what a question section quotes, and, on a focused ``topic``, what
    never names its focus (``cues.names_focus``). ``titles`` (source id → title) rank a source's
    passages by how close its title is to the question (``relevance``). Returns ``question key → every
    passage that counts for it`` (for ``Report.questions``), best first."""
    questions = [p for p in plans if p.question is not None]
    others = [p for p in plans if p.question is None]
    per_q, per_o = section_budget(depth, len(questions), len(others))
    taken: list[str] = []
    counted: dict[str, list[EvidencePassage]] = {}
    for plan in questions:
        q = plan.question
        if q is None:  # pragma: no cover - questions holds question sections only
            continue
        allowed = set(plan.sources or [])
        mine = [p for sid in allowed for p in evidence.get(sid, []) if p.question == q.key]
        counted[q.key] = sorted(mine, key=lambda p: (-p.score, p.source_id, p.start))
        plan.status = "answered" if counts.get(q.key, 0) >= q.min_sources else "insufficient"
    keys = [p.question.key if p.question is not None else "" for p in questions]
    # a primary question (does it work) gets a larger share of the report; a question with few
    # sources can still quote a source's second and third result (``choose`` takes every
    # source's first before any second)
    weights = [PRIMARY_WEIGHT if k in PRIMARY else 1 for k in keys]
    shares = share_budget([len(counted[k]) for k in keys], per_q, weights)
    # ... and states each of its trials' results: the primary question quotes up to
    # ``PER_SOURCE_RESULTS`` results on its own outcomes of every source that has them (a harm
    # stays under harms), within ``RESULTS_GROWTH`` times its share
    for i, k in enumerate(keys):
        if k in PRIMARY:
            shares[i] = results_quota(results_of(counted[k], k), shares[i], depth)
    # the question with the fewest passages chooses first: a passage that answers two questions
    # goes to the one that has nothing else to quote
    scarce_first = sorted(range(len(questions)), key=lambda i: (len(counted[keys[i]]), i))
    best = _best_scores(evidence)
    # the outcome and population words of a question on a treatment; an event's or a person's
    # question words are its subject, which every passage of its sources is about
    frame = frame_question(topic) if topic else None
    frame = frame if frame is not None and frame.arms else None
    rel = relevance(vectors, topic, titles or {})
    # who benefits more is a subgroup of a trial of the question: it is asked of the sources that
    # answer whether it works or what harm it does, and of another only when none of them answers
    main = {e.source_id for k in keys if k in FOUND for e in counted[k]}
    # the opening sentences of the page on the topic say what it is or what happened: they are
    # quoted under that question, whichever other question scores them higher
    opening = {_pkey(e) for k in keys for e in counted[k] if page_lead(e)}
    for i in scarce_first:
        # a study's aim, design or conduct counts for coverage but is never quoted: with nothing
        # else, the section says the sources report how their studies were run
        found = [e for e in counted[keys[i]] if not _conduct(e.passage)]
        if counted[keys[i]] and not found:
            questions[i].conduct_only = list(dict.fromkeys(e.source_id for e in counted[keys[i]]))
        # a section quotes what answers its own question best: an incidence figure that answers
        # "risk" better than "monitoring" is quoted under risk
        found = [e for e in found if page_lead(e) or _pkey(e) not in opening]
        found = [
            e for e in found if page_lead(e) or _fit_score(e) >= best[_pkey(e)] - HOLD_MARGIN
        ] or found
        if keys[i] in FROM_MAIN:
            found = [e for e in found if e.source_id in main] or found
        chosen = reading_order(choose(vectors, found, shares[i], taken, frame, rel))
        questions[i].units = [Unit(p.passage, p.source_id) for p in chosen]
    for plan, key in zip(questions, keys, strict=True):
        own = {norm_key(e.passage) for e in counted[key]}
        shared = [
            (o.heading, u.source_id)
            for o in questions
            if o is not plan
            for u in o.units
            if norm_key(u.text) in own
        ]
        plan.elsewhere = list(dict.fromkeys(h for h, _ in shared))
        plan.elsewhere_sources = list(dict.fromkeys(sid for _, sid in shared))
    quoted = {norm_key(t) for t in taken}
    for plan in others:  # a study's design, aim or conduct is no finding in any section
        plan.units = [
            u
            for u in plan.units
            if norm_key(u.text) not in quoted
            and not _conduct(u.text)
            and names_focus(u.text, topic)  # a report on a focus quotes nothing off it
        ][:per_o]
    return counted


def results_of(passages: list[EvidencePassage], key: str) -> list[EvidencePassage]:
    """The ``passages`` that state a result on question ``key``'s own outcomes: not a study's
    conduct or aim (``_conduct``), not only the other family of outcome (``question_roles.outcome_fit``:
    a harm under "does it work")."""
    return [
        e
        for e in passages
        if not _conduct(e.passage) and outcome_fit(key, family_of(e)) > MISFIT_FACTOR
    ]


def per_source_quota(results: list[EvidencePassage]) -> int:
    """Sentences that quote up to ``PER_SOURCE_RESULTS`` of each source's ``results``."""
    return sum(min(PER_SOURCE_RESULTS, c) for c in Counter(e.source_id for e in results).values())


def results_quota(results: list[EvidencePassage], share: int, depth: str) -> int:
    """A primary question's sentences: its ``share`` of the report, raised to quote
    ``per_source_quota`` of its ``results`` but to no more than ``RESULTS_GROWTH[depth]`` times
    the share (a brief report stays brief; a standard one on thirty trials does not double)."""
    cap = RESULTS_GROWTH.get(depth, RESULTS_GROWTH["standard"]) * share
    return max(share, min(per_source_quota(results), cap))


def _conduct(passage: str) -> bool:
    """True for a sentence on how a study was run or who took part (``findings.CONDUCT``) or on
    its design or aim (``cues.is_design``): no finding."""
    return finding_weight(passage) <= CONDUCT or is_design(passage)


def _pkey(e: EvidencePassage) -> tuple[str, str]:
    return e.source_id, norm_key(e.passage)


def _fit_score(e: EvidencePassage) -> float:
    """The evidence score × ``question_roles.outcome_fit`` of the passage's outcome family for its
    question: a harm scored high for "does it work" fits the question on harms better."""
    return e.score * outcome_fit(e.question, family_of(e))


def _best_scores(evidence: dict[str, list[EvidencePassage]]) -> dict[tuple[str, str], float]:
    """Per (source, passage): its best ``_fit_score`` over the syllabus questions."""
    best: dict[tuple[str, str], float] = {}
    for passages in evidence.values():
        for e in passages:
            best[_pkey(e)] = max(best.get(_pkey(e), 0.0), _fit_score(e))
    return best


def stops_by_key(gaps: GapReport | None) -> dict[str, QuestionStop]:
    """``question key → QuestionStop`` of the run's gap phase ({} before it ran)."""
    return {s.key: s for s in gaps.questions} if gaps else {}
