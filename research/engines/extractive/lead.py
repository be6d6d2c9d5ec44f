"""The report's lead without a model (docs/design.md § Article writing; STORM paper §3.4).

``write_lead`` states the key finding per syllabus question (``question_lead``): the sentence of
each answered question's section that answers it best, up to ``LEAD_RESULTS`` trials' results for
a primary question, what each arm did on its own when no source compares them, and the questions
the evidence leaves open. Without a syllabus, the 2–4 cited sentences closest to the topic.
Citations are kept verbatim; the reporter removes the chosen sentences from their sections.
"""

from __future__ import annotations

import numpy as np

from research.citations import LOCAL_RE
from research.engines.extractive.writing import NEAR_DUPLICATE, cited_units
from research.models import ReportSection
from research.planning.question_roles import BOTH_ARMS, DEFINED_BY, PRIMARY, outcome_fit
from research.text import (
    ANAPHORA,
    CITE,
    STUDY_DESIGN,
    norm_key,
    numbers,
    strip_citations,
    subject_of,
    topic_keys,
)
from research.text.asking import asked_label, in_sentence, label_in_sentence
from research.text.comparators import third_arm
from research.text.definitions import defines
from research.text.findings import (
    PLAIN,
    POINTS_BACK,
    finding_weight,
    outcome_family,
    result_factor,
    states_result,
)
from research.text.frame import frame_question
from research.text.frame_match import arms_named, arms_of
from research.text.stems import stems
from research.text.vectors import Vectors, pick_diverse, rank

LEAD_MAX_SENTENCES, LEAD_MIN_SENTENCES = 4, 2  # the lead summarises, it does not retell


def write_lead(
    vectors: Vectors,
    topic: str,
    sections: list[ReportSection],
    questions: list | None = None,
    relevance: dict[int, float] | None = None,
) -> str:
    """The lead. With syllabus ``questions`` (``base.LeadQuestion``): ``question_lead`` (with the
    sources' ``relevance`` by citation number).
    Without: 2–4 sentences, the 2 cited units (sentences with their ``[n]``) of each section
    closest to the topic; the best 4 distinct ones (cosine < 0.9 to each other, same words only
    once), in section order, citations verbatim."""
    if questions:
        return question_lead(vectors, topic, sections, questions, relevance)
    subject = subject_of(topic)
    pool: list[tuple[int, int, str]] = []
    for si, sec in enumerate(sections):
        units = cited_units(sec.text)
        cited = [u for u in units if CITE.search(u)] or units
        if not cited:
            continue
        sims = vectors.sim([subject], [strip_citations(u) for u in cited])[0]
        pool += [(si, ui, cited[ui]) for ui in rank(sims)[:2]]
    seen: set[str] = set()
    pool = [p for p in pool if _first_time(norm_key(p[2]), seen)]
    if not pool:
        return ""
    plain = [strip_citations(u) for _, _, u in pool]
    sims = vectors.sim([subject], plain)[0]
    chosen = pick_diverse(rank(sims), vectors.encode(plain), LEAD_MAX_SENTENCES, NEAR_DUPLICATE)
    if len(chosen) < LEAD_MIN_SENTENCES:
        chosen = list(range(min(LEAD_MIN_SENTENCES, len(pool))))
    return " ".join(pool[i][2] for i in sorted(chosen, key=lambda i: pool[i][:2]))


DESIGN_PENALTY = 0.15  # a key finding states a result, not how a study was set up
# A framed question's lead prefers the sentence that names its arms (share of arms named) and
# states a figure: that is the sentence that answers "which did better, by how much".
ARMS_BONUS, FIGURE_BONUS = 0.15, 0.10
LEAD_RESULTS = 3  # sentences, from as many sources, that answer a primary question in the lead
ASKED_LEAD_MIN = 2  # sentences answering the analyst's own question for it to be the whole lead
LEAD_OPEN_MIN = 1  # sources with evidence at which an open primary question's results lead
RESULT_WEIGHT = 0.7  # finding_weight of a sentence that states a result (one signal or more)
ANAPHORA_PENALTY = (
    0.10  # ... and stands alone: no "this regimen" whose regimen the lead never names
)
# ... and comes from a study of the question itself: a sentence's score rises by up to this share
# with its source's relevance (title close to the question), as a section's quotes do
# (``pipeline.answers.on_point_rank``): a trial of the two arms leads before a study of a technique
LEAD_DOC_WEIGHT = 1.0
# The page on the topic opens the lead with its opening sentences (two at least) when its title
# is this close to the question (``answers.relevance``: 1.0 is a title that is the question)
PAGE_OPENING_MIN, PAGE_RELEVANCE = 2, 0.5


def question_lead(
    vectors: Vectors,
    topic: str,
    sections: list[ReportSection],
    questions: list,
    relevance: dict[int, float] | None = None,
) -> str:
    """Key finding per question: for the question of what the topic is (``question_roles.DEFINED_BY``,
    answered or not) the opening sentences of the page on the topic when its section opens with
    two or more of them (``_page_opening``: the summary, after which only the questions the report
    exists to answer, ``_answers``, add theirs), else a cited sentence that defines it
    (``text.definitions.defines``) when its section has one; for each answered question (and an
    open primary question with evidence from ``LEAD_OPEN_MIN`` sources, ``_states_anyway``), in
    syllabus order, the
    cited sentence of its section closest to ``"topic: label. description"`` (a sentence that
    describes study design rather than a result, ``text.STUDY_DESIGN``, scores ``DESIGN_PENALTY`` less, one that
    points back at what it does not name, ``text.ANAPHORA``, ``ANAPHORA_PENALTY`` less; the
    closeness is weighted by how much the sentence states a finding
    (``research.text.findings.finding_weight``) and by ``findings.result_factor`` (the groups'
    figures set against each other first), and a question whose every sentence is about a
    study's conduct or a page's furniture puts none in the lead; on a framed question (a
    treatment) the sentence gives a figure, a comparison or a result (``RESULT_WEIGHT``) and on a
    comparison it names an arm (``frame_match.arms_named``; both, for a question one-arm sources
    answer, outside ``question_roles.BOTH_ARMS``) and no third comparator (``comparators.third_arm``:
    placebo, "versus control"); citations
    verbatim; a sentence already taken is not repeated; a positive score rises by up to
    ``LEAD_DOC_WEIGHT`` with ``relevance`` (citation number → [0, 1], its best cited source's);
    a primary question, ``planning.question_roles.PRIMARY``,
    gets up to ``LEAD_RESULTS`` results from as many sources: which trials found what); on a
    comparison whose primary question no source answers, first a sentence that says no source
    compares the arms directly; then one sentence naming the questions
    the evidence leaves open, with their source counts. When the analyst typed a question that
    asks more than the template does (its label is the question, ``text.asking.asked_label``)
    and ``ASKED_LEAD_MIN`` sentences or more of its section answer it, the lead is that answer
    alone, before the open questions. The reporter removes the chosen sentences from their
    sections (no sentence twice in a report)."""
    subject = subject_of(topic)
    frame = frame_question(topic)
    by_heading = {s.heading: s for s in sections}
    parts: list[str] = []
    answer: list[str] = []  # the sentences that answer the question as the analyst asked it
    account = False  # the lead opened with the page's own account of the topic
    for q in questions:
        sec = by_heading.get(q.heading)
        if account and not _answers(q):
            continue  # the page's account is the summary: the other questions keep their findings
        unstated = q.status != "answered" and not _states_anyway(q)
        if sec is None or (unstated and q.key not in DEFINED_BY):
            continue
        cited = [
            u
            for u in cited_units(sec.text)
            if CITE.search(u) and norm_key(u) not in map(norm_key, parts)
        ]
        opening = _page_opening(cited, relevance) if q.key in DEFINED_BY else []
        if len(opening) >= PAGE_OPENING_MIN:  # the page on the topic says what happened first
            parts += opening
            account = True
            continue
        said = [u for u in cited if q.key in DEFINED_BY and defines(strip_citations(u), topic)]
        if said:  # what the topic is, as a source says it, opens a report on a person or event
            parts.append(said[0])
            continue
        if not cited or unstated:
            continue
        if _answers(q) and q.key not in PRIMARY:
            # the question as asked, read as the evidence judgement reads it: without its
            # subject's words, which every sentence of its sources shares ("What caused the
            # floods?" is closer to the monsoon than to the death toll that names the floods)
            own = stems(subject.split())
            sims = vectors.sim(
                [_without(f"{q.label} {q.description}", own)],
                [_without(strip_citations(u), own) for u in cited],
            )[0]
        else:
            sims = vectors.sim(
                [f"{subject}: {q.label}. {q.description}"], [strip_citations(u) for u in cited]
            )[0]
        sims = sims - np.array(
            [
                DESIGN_PENALTY * bool(STUDY_DESIGN.search(u))
                + ANAPHORA_PENALTY
                * bool(ANAPHORA.search(u) or POINTS_BACK.match(strip_citations(u).strip()))
                for u in cited
            ]
        )
        # the lead states findings: a sentence on who took part or how a study was run is no answer
        weights = np.array([finding_weight(strip_citations(u)) for u in cited])
        # ... and the outcome its question asks about: a harm does not lead for "does it work"
        fits = [outcome_fit(q.key, outcome_family(strip_citations(u))) for u in cited]
        # ... and the result a trial leads with: the groups' figures set against each other
        contrast = np.array([result_factor(strip_citations(u)) for u in cited])
        sims = sims * weights * np.array(fits) * contrast
        if frame.framed and frame.arms:  # the lead answers: the arms compared, with a figure
            sims = sims + np.array(
                [
                    ARMS_BONUS * arms_named(u, frame) / len(frame.arms)
                    + FIGURE_BONUS * bool(numbers(strip_citations(u)))
                    for u in cited
                ]
            )
        if relevance:  # from the trials of the question before their neighbours
            docs = np.array([_source_relevance(u, relevance) for u in cited])
            sims = np.where(sims > 0, sims * (1 + LEAD_DOC_WEIGHT * docs), sims)
        # an open question leads only with a stated result (``findings.states_result``), never
        # with what its sources say of their aims or background
        # (on a treatment, or a treatment's primary question: what caused an event is said
        # without a result verb)
        if q.status != "answered" and (frame.framed or q.key in PRIMARY):
            weights = np.where([states_result(strip_citations(u)) for u in cited], weights, 0.0)
        # on a treatment, any question's lead sentence gives a figure, a comparison or a result
        # (``RESULT_WEIGHT``): not how outcomes were recorded, nor what is common knowledge
        if frame.framed:
            weights = np.where(weights >= RESULT_WEIGHT, weights, 0.0)
        # ... and on a comparison it names an arm, not set against a third comparator: a trial
        # of something else, or of one arm against placebo or control, leads no question
        # ... and, for a question that one-arm sources answer (who benefits, switching), it
        # names both: the lead compares the arms, a one-arm trial's finding stays in its section
        if len(frame.arms) >= 2:
            need = 1 if q.key in BOTH_ARMS else len(frame.arms)
            on_arms = [
                arms_named(u, frame) >= need and not third_arm(strip_citations(u), frame)
                for u in cited
            ]
            weights = np.where(on_arms, weights, 0.0)
        if weights.max() < PLAIN:
            continue
        sims = np.where(weights >= PLAIN, sims, -np.inf)
        order = rank(sims)
        if q.key in PRIMARY:  # each trial's primary result: the first it reports
            order = _first_results(cited, order, sims, weights * (contrast >= 1.0))
        before = len(parts)
        parts.append(cited[order[0]])
        if _answers(q):  # the answer: what the strongest trials found, not one of them
            both = [bool(frame.arms) and arms_named(u, frame) >= len(frame.arms) for u in cited]
            parts += _more_results(cited, order[1:], weights, parts, both)
        if asked_label(q.label):
            answer = parts[before:]
    # the analyst's own question is what the lead answers: the other questions' findings stay in
    # their sections ("What were the consequences of X?" is not answered by X's timeline), once
    # its sources state an answer in more than one sentence
    if len(answer) >= ASKED_LEAD_MIN:
        parts = answer
    parts = _not_contained(parts)
    # a comparison that no source makes says so first, then what each arm did in a trial of its
    # own, when its section quotes one (``pipeline.indirect``: the question stays open)
    unmade = [q for q in questions if q.key in PRIMARY and not q.sources_found]
    if len(frame.arms) >= 2 and unmade:
        first, second = (in_sentence(a) for a in frame.arms[:2])
        sec = by_heading.get(unmade[0].heading)
        by_arm = _arm_results(sec.text if sec else "", frame, parts)
        unmade_lead = f"No source found compares {first} with {second} directly"
        if by_arm:
            unmade_lead += "; trials of each against another comparator report the following"
        parts[:0] = [f"{unmade_lead}.", *by_arm]
    open_qs = [q for q in questions if q.status != "answered"]
    if open_qs:
        names = [
            f"{label_in_sentence(q.label)} ({q.sources_found} of {q.min_sources} sources)"
            if q.sources_found < q.min_sources
            else f"{label_in_sentence(q.label)} ({q.sources_found} sources, none addressing it "
            "directly)"
            for q in open_qs
        ]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        parts.append(f"The evidence found leaves open {listed}.")
    return " ".join(parts)


CONTAINED = 0.7  # share of a lead sentence's words and figures another one holds: it says it again


def _not_contained(parts: list[str]) -> list[str]:
    """``parts`` without a sentence whose content words and figures another, longer one holds
    at ``CONTAINED`` or more ("On 2 June three trains collided in Examplia." beside "On 2 June
    three trains collided in Examplia, killing 288 people."): the lead says a thing once. Two
    trials' results differ in their figures, and both stay."""
    figures = [set(numbers(strip_citations(u))) for u in parts]
    words = [set(topic_keys(strip_citations(u))) | f for u, f in zip(parts, figures, strict=True)]
    keep = []
    for i, (u, w) in enumerate(zip(parts, words, strict=True)):
        said = any(
            j != i
            and len(words[j]) > len(w)
            and figures[i] <= figures[j]
            and len(w & words[j]) >= CONTAINED * len(w)
            for j in range(len(parts))
        )
        if not (w and said):
            keep.append(u)
    return keep


def _first_results(
    cited: list[str], order: list[int], sims: np.ndarray, weights: np.ndarray
) -> list[int]:
    """``order`` with each sentence replaced by the first sentence of the section (in its
    order) that cites the same sources and could lead too (a finite score, ``weights`` ≥
    ``RESULT_WEIGHT``; the caller gives 0 to a sentence that sets no figures against each other,
    ``findings.contrasts``: "X has proven efficacy" is a claim, not a trial's result): a section
    quotes a source's sentences in the source's order, and an abstract reports its primary end
    point before its secondary ones (disease-free survival before overall survival), so a
    trial's first result is the one that answers "which did better"."""
    first: dict[frozenset[str], int] = {}
    for i, u in enumerate(cited):
        if np.isfinite(sims[i]) and weights[i] >= RESULT_WEIGHT:
            first.setdefault(frozenset(LOCAL_RE.findall(u)), i)
    out = [first.get(frozenset(LOCAL_RE.findall(cited[i])), i) for i in order]
    return list(dict.fromkeys(out))


def _page_opening(cited: list[str], relevance: dict[int, float] | None) -> list[str]:
    """The first cited sentences of the section on what the topic is, up to ``LEAD_RESULTS``,
    while they cite one source only, the same one, titled as the question (``relevance`` ≥
    ``PAGE_RELEVANCE``): the page on the topic opens the section with its own opening
    sentences (``answers.page_lead``), which say what happened, where and when."""
    out: list[str] = []
    first: set[str] = set()
    for u in cited[:LEAD_RESULTS]:
        marks = set(LOCAL_RE.findall(u))
        first = first or marks
        if len(marks) != 1 or marks != first:
            break
        out.append(u)
    if not out or not relevance:
        return []
    return out if relevance.get(int(next(iter(first))), 0.0) >= PAGE_RELEVANCE else []


def _arm_results(text: str, frame, taken: list[str]) -> list[str]:
    """Per arm of ``frame`` (in order), the first cited sentence of ``text`` (an open comparison
    question's section of indirect evidence) that names it and is not in ``taken``."""
    units = [u for u in cited_units(text) if CITE.search(u) and u not in taken]
    out: list[str] = []
    for i in range(len(frame.arms[:2])):
        hit = next((u for u in units if arms_of(u, frame)[i] and u not in out), None)
        if hit:
            out.append(hit)
    return out


def _source_relevance(unit: str, relevance: dict[int, float]) -> float:
    """The highest ``relevance`` of the sources a cited sentence cites (0.0 for none known)."""
    return max((relevance.get(int(n), 0.0) for n in LOCAL_RE.findall(unit)), default=0.0)


def _without(text: str, keys: set[str]) -> str:
    """``text`` without the words whose ``stems`` are all in ``keys`` (whole when none is left)."""
    kept = [w for w in text.split() if not (stems([w]) and stems([w]) <= keys)]
    return " ".join(kept) or text


def _answers(q) -> bool:
    """True for a question whose answer the report exists to give: a primary question
    (``planning.question_roles.PRIMARY``), or the question the analyst asked in so many words (its label
    is the question: ``planning.syllabus._asking``)."""
    return q.key in PRIMARY or asked_label(q.label)


def _states_anyway(q) -> bool:
    """True for a question the report exists to answer (``_answers``) left open with evidence
    from at least ``LEAD_OPEN_MIN`` sources: the lead still states what they found (the sentence
    on what the evidence leaves open says it is short of its sources), since those results are
    the answer the question was asked for; a single trial's result, with "1 of 5 sources" beside
    it, tells the analyst more than a lead that states nothing."""
    return _answers(q) and q.sources_found >= LEAD_OPEN_MIN


def _more_results(
    cited: list[str], order: list[int], weights: np.ndarray, taken: list[str], both: list[bool]
) -> list[str]:
    """Up to ``LEAD_RESULTS - 1`` more sentences for a primary question's lead, in ``order``:
    each states a result (``finding_weight`` ≥ ``RESULT_WEIGHT``) and cites a source no sentence of
    ``taken`` cites; those that name every arm of a comparison (``both``: which arm did better)
    before those that do not."""
    cites = {m for u in taken for m in CITE.findall(u)}
    out: list[str] = []
    for named in (True, False):
        for i in order:
            if len(out) >= LEAD_RESULTS - 1:
                return out
            marks = set(CITE.findall(cited[i]))
            if (named and not both[i]) or weights[i] < RESULT_WEIGHT or not marks or marks & cites:
                continue
            out.append(cited[i])
            cites |= marks
    return out


def _first_time(key: str, seen: set[str]) -> bool:
    """True the first time ``key`` is seen (and remembers it in ``seen``)."""
    if key in seen:
        return False
    seen.add(key)
    return True
