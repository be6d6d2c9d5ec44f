"""Outline and report writing without a model (docs/design.md § Two-phase outline; STORM paper §3.3–3.4).

- ``draft_outline`` (WritePageOutline): a generic 5–6 section outline picked by the topic's
  kind (biomedical, event, technology, general) from keyword lists.
- ``refine_outline`` (WritePageOutlineFromConv): KMeans over the conversations' answer
  sentences (4–7 clusters); each cluster's heading is its top c-TF-IDF key phrase; draft
  sections that the conversations support are kept. Headings name a subject (``names_subject``):
  a multi-word phrase or a name, never a lone common noun such as "Cycles".
- ``write_section`` / ``write_lead`` / ``polish``: extractive, citations kept verbatim. The
  sentences a section gets are chosen by the reporter (``research.pipeline.material`` /
  ``sections``): whole sentences of the sources' full text (no ``…`` snippet cuts), off-topic
  sources and sentences left out, each sentence assigned once to the section whose heading is
  its nearest, near-duplicates (cosine ≥ 0.9) removed across the whole report; ``write_lead``
  takes the key finding per syllabus question (``question_lead``) and the reporter removes it
  from its section (``reporter.dedupe_report``).

Size: the outline and the section writer share the tuning constants and helpers below; they
are one writer.
"""

from __future__ import annotations

import math
import re

import numpy as np

from research.citations import LOCAL_RE
from research.models import ConversationResult, Outline, OutlineSection, ReportSection
from research.planning.kinds import BOTH_ARMS, DEFINED_BY, PRIMARY, outcome_fit
from research.text import (
    ANAPHORA,
    CITE,
    STUDY_DESIGN,
    WEAK_HEAD,
    ensure_period,
    is_boilerplate,
    norm_key,
    numbers,
    ranked_phrases,
    split_sentences,
    strip_citations,
    subject_of,
    title_case,
    topic_keys,
    word_key,
)
from research.text.asking import asked_label, in_sentence, label_in_sentence
from research.text.comparators import third_arm
from research.text.definitions import defines
from research.text.findings import (
    PLAIN,
    POINTS_BACK,
    finding_factor,
    finding_weight,
    no_finding,
    outcome_family,
    result_factor,
    states_result,
)
from research.text.frame import frame_question
from research.text.frame_match import arms_named, arms_of
from research.text.stems import stems
from research.text.vectors import Vectors, pick_diverse, rank

_KINDS = (
    (
        "biomedical",
        "drug drugs therapy therapies cancer tumor tumour trial trials treatment disease vaccine "
        "clinical patients antibody inhibitor syndrome infection virus covid gene protein "
        "diabetes dose medicine medical health mab nib",
        [
            "Overview",
            "Background",
            "Mechanism of Action",
            "Clinical Evidence",
            "Safety and Adverse Effects",
            "Current Status and Outlook",
        ],
    ),
    (
        "event",
        "hurricane typhoon storm cyclone earthquake flood collision crash accident attack war election "
        "disaster fire shooting protest summit olympics tournament championship festival",
        ["Overview", "Background", "Timeline of Events", "Impact", "Response", "Aftermath"],
    ),
    (
        "technology",
        "software technology model models algorithm system systems network ai learning computer "
        "language protocol platform device robot data internet blockchain",
        [
            "Overview",
            "History",
            "Design and Technology",
            "Applications",
            "Challenges and Criticism",
            "Future Directions",
        ],
    ),
)
GENERAL = [
    "Overview",
    "Background",
    "Key Aspects",
    "Developments",
    "Reception and Debate",
    "Outlook",
]
SUPPORT_MIN = 3  # answer sentences (at least) that must vote for a draft section to keep it
SAME_HEADING = 0.75  # cosine at which a cluster phrase repeats a heading already taken
MIN_SENTENCES = 8  # distinct sentences refine_outline needs to cluster
SECTION_MIN_SIM = 0.15  # snippet sentence vs heading to be written into the section
# A draft section is kept only when this share of the answer sentences votes for it: below that
# it is the draft's guess about the topic, not something the research found.
SUPPORT_SHARE = 0.15
MAX_DRAFT_KEPT = 3  # draft sections kept at most, so the research's own clusters still get room
# Clusters (sections) of the refined outline: STORM's outlines hold a handful of top-level
# sections; fewer reads as a summary, more splits thin material into one-sentence sections.
MIN_CLUSTERS, MAX_CLUSTERS = 4, 7
TOP_PHRASES = 10  # c-TF-IDF phrases per cluster considered for its heading and subsections
WORD_BONUS = 0.05  # per extra word of a heading phrase, so names beat single words
# A section sentence's score: mostly how well it fits the heading, partly how on-topic it is,
# so a sentence that matches the heading's words about another subject ranks lower.
HEADING_WEIGHT, TOPIC_WEIGHT = 0.7, 0.3
CUT_SHORT_FACTOR = 0.8  # a sentence cut short ("…") says less: ranked after whole ones
NEAR_DUPLICATE = 0.9  # cosine at which two sentences say the same thing (one is dropped)
SECTION_MAX_SENTENCES, SECTION_MIN_SENTENCES = 9, 2  # a section's sentences when available
LEAD_MAX_SENTENCES, LEAD_MIN_SENTENCES = 4, 2  # the lead summarises, it does not retell


def draft_outline(topic: str) -> Outline:
    """Generic outline from the topic alone: the kind whose keyword list the topic hits most
    (years like 2023 count as 'event'); ties and no hits → a general outline."""
    words = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", topic)}
    words |= {w[-3:] for w in words if w.endswith(("mab", "nib"))}
    best, best_hits = GENERAL, 0
    for kind, vocab, sections in _KINDS:
        hits = len(words & set(vocab.split())) + (
            kind == "event" and bool(re.search(r"\b(19|20)\d\d\b", topic))
        )
        if hits > best_hits:
            best, best_hits = sections, hits
    return Outline(sections=[OutlineSection(heading=h) for h in best])


def _answer_sentences(conversations: list[ConversationResult]) -> list[str]:
    out: list[str] = []
    for conv in conversations:
        for turn in conv.turns:
            if "[" not in turn.answer:  # "no relevant information" answers carry no citation
                continue
            for s in split_sentences(turn.answer):
                s = strip_citations(s)
                if len(s.split()) >= 5:
                    out.append(s)
    return list(dict.fromkeys(out))


def _source_sentences(conversations: list[ConversationResult]) -> list[str]:
    """Sentences (≥ 5 words, citation markers stripped, none ending in a ``…`` cut) of the
    snippets of the sources the conversations saved, in turn order: what the experts read."""
    out: list[str] = []
    for conv in conversations:
        for turn in conv.turns:
            for src in turn.sources:
                for s in split_sentences(src.snippet):
                    s = strip_citations(s)
                    if len(s.split()) >= 5 and not s.rstrip().endswith(("…", "...")):
                        out.append(s)
    return list(dict.fromkeys(out))


def _supported(
    vectors: Vectors, subject: str, draft: Outline, sents: list[str]
) -> list[OutlineSection]:
    """Draft sections the conversations support: each answer sentence votes for its nearest draft
    heading (cosine to 'topic: heading'); a section with ≥ max(``SUPPORT_MIN``, 15 % of the
    sentences) votes is kept (at most 3, draft order). 'Overview' neither votes nor is kept: the
    lead is the overview."""
    candidates = [s for s in draft.sections if s.heading.strip().lower() != "overview"]
    if not candidates:
        return []
    sims = vectors.sim([f"{subject}: {s.heading}" for s in candidates], sents)
    votes = np.bincount(sims.argmax(axis=0), minlength=len(candidates))
    need = max(SUPPORT_MIN, math.ceil(SUPPORT_SHARE * len(sents)))
    return [sec for sec, v in zip(candidates, votes, strict=True) if v >= need][:MAX_DRAFT_KEPT]


def _heading(
    vectors: Vectors, group: list[str], centroid: np.ndarray, cands: list[str], topic_keys: set[str]
) -> list[str]:
    """Cluster phrases best first: phrases found in ≥ 2 of the cluster's sentences first, then
    phrases without a topic word (a section need not repeat the topic), then by cosine to the
    cluster centroid (+0.05 per extra word, so names beat single words)."""
    if not cands:
        return []
    low = [g.lower() for g in group]
    count = [sum(c.lower() in g for g in low) for c in cands]
    cos = vectors.encode(cands) @ centroid
    score = [float(cos[i]) + WORD_BONUS * (len(c.split()) - 1) for i, c in enumerate(cands)]
    single_ok = [count[i] >= 2 or len(c.split()) > 1 for i, c in enumerate(cands)]
    topical = [bool(set(map(word_key, c.split())) & topic_keys) for c in cands]
    order = sorted(
        range(len(cands)),
        key=lambda i: (not single_ok[i], count[i] < 2, topical[i], -round(score[i], 4), i),
    )
    return [cands[i] for i in order]


def refine_outline(
    vectors: Vectors, topic: str, draft: Outline, conversations: list[ConversationResult]
) -> Outline:
    """Outline from the research: k = clamp(round(sqrt(n / 2)), 4, 7) KMeans clusters over the n
    distinct answer sentences (random_state 0). Each cluster of ≥ 2 sentences gives a section:
    heading = its key phrase (top-10 c-TF-IDF phrases ranked by ``_heading``; title case; not made
    only of topic words or generic nouns; not repeating a heading already taken: sub-phrase or
    cosine ≥ ``SAME_HEADING``), up to two more phrases as subsections. Draft sections the
    conversations support (``_supported``) come first, in draft order, then clusters by size.
    Fewer than ``MIN_SENTENCES`` distinct answer sentences (terse answers: the questions matched
    few sentences) → the sentences of the saved sources' snippets join them, as STORM's outline
    reads the whole conversation, search results included; still fewer → the draft unchanged.
    """
    sents = _answer_sentences(conversations)
    if len(sents) < MIN_SENTENCES:
        sents = list(dict.fromkeys(sents + _source_sentences(conversations)))
    if len(sents) < MIN_SENTENCES:
        return draft
    subject = subject_of(topic)
    vecs = vectors.encode(sents)
    k = max(MIN_CLUSTERS, min(MAX_CLUSTERS, round(math.sqrt(len(sents) / 2)), len(sents) // 2))
    from sklearn.cluster import KMeans  # noqa: PLC0415 - scikit-learn takes seconds to import; only the extractive outline clusters

    labels = KMeans(n_clusters=k, random_state=0, n_init=10).fit_predict(vecs.astype(np.float64))
    groups = [[s for s, lab in zip(sents, labels, strict=True) if lab == c] for c in range(k)]
    exclude = topic_keys(subject)
    phrases = ranked_phrases([" ".join(g) for g in groups], top=TOP_PHRASES, exclude=exclude)
    kept = _supported(vectors, subject, draft, sents)
    heads = [s.heading for s in kept]
    weak = exclude | WEAK_HEAD  # a heading needs a word beyond the topic's and generic nouns
    clustered: list[OutlineSection] = []
    for c in sorted(range(k), key=lambda c: (-len(groups[c]), c)):
        if len(groups[c]) < 2:
            continue
        cands = [title_case(p) for p in phrases[c] if not set(map(word_key, p.split())) <= weak]
        cands = [
            p
            for p in cands
            if not any(_same(p, h) for h in heads)
            and not re.search(r"\d", p)
            and names_subject(p, groups[c])
        ]
        if heads and cands:
            taken = vectors.sim(cands, heads).max(axis=1)
            cands = [p for p, t in zip(cands, taken, strict=True) if t < SAME_HEADING]
        centroid = vecs[labels == c].mean(axis=0)
        cands = _heading(
            vectors,
            groups[c],
            centroid / max(float(np.linalg.norm(centroid)), 1e-9),
            cands,
            exclude,
        )
        if not cands:
            continue
        head = cands[0]
        heads.append(head)
        subs: list[str] = []
        for p in cands[1:]:
            if len(subs) < 2 and not any(_same(p, x) for x in [*heads, *subs]):
                subs.append(p)
        clustered.append(OutlineSection(heading=head, subsections=subs))
    sections = kept + clustered
    return Outline(sections=sections) if len(sections) >= 2 else draft


_VERB_START = frozenset(
    """receive receives compare compares assess assesses evaluate evaluates determine
determines investigate investigates examine examines show shows demonstrate demonstrates improve improves
reduce reduces increase increases prevent prevents continue continues randomize randomise treat treats
undergo undergoes achieve achieves include includes given give gives use uses report reports""".split()
)


def names_subject(heading: str, sentences: list[str]) -> bool:
    """A heading names a subject: it does not open with a verb (``_VERB_START``:
    "Receive Imatinib"), and has two or more words, or one word that is a name —
    an acronym or mixed-case word (``EGFR``, ``mRNA``) or a word the sentences capitalise where
    a sentence does not start (``Gleevec``, ``Zelensky``). A lone common noun ("Cycles") is no
    heading."""
    words = heading.split()
    if words and words[0].lower() in _VERB_START:
        return False  # "Receive Imatinib" is an action, not a subject
    if len(words) != 1:
        return bool(words)
    w = words[0]
    if any(c.isupper() for c in w[1:]) or any(c.isdigit() for c in w):
        return True
    inner = re.compile(rf"(?<=[a-z,;:] ){re.escape(w[:1].upper() + w[1:].lower())}\b")
    lower = re.compile(rf"\b{re.escape(w.lower())}\b")
    capitalised = sum(bool(inner.search(s)) for s in sentences)
    return capitalised > 0 and capitalised >= sum(bool(lower.search(s)) for s in sentences)


def _same(a: str, b: str) -> bool:
    """One heading repeats the other (case-insensitive sub-phrase either way)."""
    a, b = a.lower(), b.lower()
    return a in b or b in a


def cited_units(text: str) -> list[str]:
    """Sentences of ``text`` with their trailing ``[n]`` markers attached (markers verbatim)."""
    units = []
    for para in re.split(r"\n\s*\n", text or ""):
        for s in split_sentences(para, min_words=1):
            if s.strip():
                units.append(s.strip())
    return units


def write_section(
    vectors: Vectors,
    topic: str,
    heading: str,
    subsections: list[str],
    snippets: list[tuple[int, str]],
) -> str:
    """Section text: snippet sentences most similar to the heading (0.7 × cos to
    'topic: heading. subsections' + 0.3 × cos to the topic), ≥ ``SECTION_MIN_SIM``, taken in the
    order of that similarity × ``findings.finding_factor`` (a stated result before a study's
    conduct), a study's conduct or aim only when nothing else qualifies, near-duplicates
    dropped, at most 9 (at least 2 when available); each followed by ``[n]`` of its snippet;
    grouped into paragraphs of ≤ 4 sentences (≤ 3 paragraphs), snippet order kept inside one.
    """
    sents: list[str] = []
    owner: list[int] = []
    for n, text in snippets:
        for s in split_sentences(strip_citations(text)):
            if len(s.split()) >= 4 and not is_boilerplate(s):
                sents.append(s)
                owner.append(n)
    if not sents:
        return ""
    subject = subject_of(topic)
    query = f"{subject}: {heading}" + (f". {', '.join(subsections)}" if subsections else "")
    sims = (
        HEADING_WEIGHT * vectors.sim([query], sents)[0]
        + TOPIC_WEIGHT * vectors.sim([subject], sents)[0]
    )
    sims = np.where([s.endswith("…") for s in sents], sims * CUT_SHORT_FACTOR, sims)
    # among the sentences close enough to the heading, what a source found before how its study
    # was run or what it set out to do (``findings.finding_factor``)
    weights = np.array([finding_factor(x) for x in sents])
    order = rank(np.round(sims * weights, 4))
    good = [i for i in order if sims[i] >= SECTION_MIN_SIM] or order[:SECTION_MIN_SENTENCES]
    # how a study was run or what it set out to do is no content of a section while anything
    # else is close enough to its heading
    said = [i for i in order if not no_finding(sents[i])] or order
    kept = set(said)
    good = [i for i in good if i in kept] or good
    chosen = pick_diverse(good, vectors.encode(sents), SECTION_MAX_SENTENCES, NEAR_DUPLICATE)
    if len(chosen) < SECTION_MIN_SENTENCES:
        chosen = pick_diverse(said, vectors.encode(sents), SECTION_MIN_SENTENCES, NEAR_DUPLICATE)
    size = 3 if len(chosen) <= 6 else 4
    paras = [sorted(chosen[i : i + size]) for i in range(0, len(chosen), size)][:3]
    return "\n\n".join(" ".join(f"{ensure_period(sents[i])}[{owner[i]}]" for i in p) for p in paras)


def write_evidence(snippets: list[tuple[int, str]], per_paragraph: int = 4) -> str:
    """A question's section from its chosen evidence (``research.pipeline.answers``): every
    sentence of every snippet, in the given order, each followed by ``[n]`` of its snippet; a
    source's sentences stay together, and paragraphs hold up to ``per_paragraph`` sentences."""
    paras: list[list[str]] = []
    for n, text in snippets:
        sents = [
            f"{ensure_period(x)}[{n}]"
            for x in split_sentences(strip_citations(text))
            if len(x.split()) >= 6 and (x[:1].isupper() or x[:1].isdigit())
        ]  # a registration number or a stray fragment after a passage is no sentence
        if not sents:
            continue
        if paras and len(paras[-1]) + len(sents) <= per_paragraph:
            paras[-1] += sents
        else:
            paras.append(sents)
    return "\n\n".join(" ".join(p) for p in paras)


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


def question_lead(
    vectors: Vectors,
    topic: str,
    sections: list[ReportSection],
    questions: list,
    relevance: dict[int, float] | None = None,
) -> str:
    """Key finding per question: for the question of what the topic is (``kinds.DEFINED_BY``,
    answered or not) a cited sentence that defines it (``text.definitions.defines``) when its
    section has one; for each answered question (and an open primary question with
    evidence from ``LEAD_OPEN_MIN`` sources, ``_states_anyway``), in syllabus order, the
    cited sentence of its section closest to ``"topic: label. description"`` (a sentence that
    describes study design rather than a result, ``text.STUDY_DESIGN``, scores ``DESIGN_PENALTY`` less, one that
    points back at what it does not name, ``text.ANAPHORA``, ``ANAPHORA_PENALTY`` less; the
    closeness is weighted by how much the sentence states a finding
    (``research.text.findings.finding_weight``) and by ``findings.result_factor`` (the groups'
    figures set against each other first), and a question whose every sentence is about a
    study's conduct or a page's furniture puts none in the lead; on a framed question (a
    treatment) the sentence gives a figure, a comparison or a result (``RESULT_WEIGHT``) and on a
    comparison it names an arm (``frame_match.arms_named``; both, for a question one-arm sources
    answer, outside ``kinds.BOTH_ARMS``) and no third comparator (``comparators.third_arm``:
    placebo, "versus control"); citations
    verbatim; a sentence already taken is not repeated; a positive score rises by up to
    ``LEAD_DOC_WEIGHT`` with ``relevance`` (citation number → [0, 1], its best cited source's);
    a primary question, ``planning.kinds.PRIMARY``,
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
    for q in questions:
        sec = by_heading.get(q.heading)
        unstated = q.status != "answered" and not _states_anyway(q)
        if sec is None or (unstated and q.key not in DEFINED_BY):
            continue
        cited = [
            u
            for u in cited_units(sec.text)
            if CITE.search(u) and norm_key(u) not in map(norm_key, parts)
        ]
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
        opening = f"No source found compares {first} with {second} directly"
        if by_arm:
            opening += "; trials of each against another comparator report the following"
        parts[:0] = [f"{opening}.", *by_arm]
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
    (``planning.kinds.PRIMARY``), or the question the analyst asked in so many words (its label
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


def _dedupe_prose(lines: list[str], seen: set[str]) -> str:
    kept = []
    for unit in split_sentences(" ".join(lines), min_words=1):
        key = norm_key(unit)
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(re.sub(r"\s+([,.;:!?])", r"\1", unit))
    return " ".join(kept)


def polish(text: str) -> str:
    """Remove repeated sentences (same words ignoring case, punctuation and citations) and
    whitespace problems; heading/list/quote lines (``#``, ``-``, ``*``, ``>``), paragraph breaks
    and ``[n]`` markers are kept verbatim."""
    seen: set[str] = set()
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text or ""):
        block: list[str] = []
        prose: list[str] = []
        for line in para.splitlines():
            if not line.strip():
                continue
            if line.lstrip().startswith(("#", "- ", "* ", ">")):
                if prose:
                    block.append(_dedupe_prose(prose, seen))
                    prose = []
                block.append(
                    " ".join(line.split())
                    if not line.lstrip().startswith(("- ", "* "))
                    else line.rstrip()
                )
            else:
                prose.append(line.strip())
        if prose:
            block.append(_dedupe_prose(prose, seen))
        block = [b for b in block if b.strip()]
        if block:
            out.append("\n".join(block))
    return "\n\n".join(out)


def _first_time(key: str, seen: set[str]) -> bool:
    """True the first time ``key`` is seen (and remembers it in ``seen``)."""
    if key in seen:
        return False
    seen.add(key)
    return True
