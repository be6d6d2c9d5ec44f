"""Outline and report writing without a model (docs/design.md § Two-phase outline; STORM paper §3.3–3.4).

- ``draft_outline`` (WritePageOutline): a generic 5–6 section outline picked by the topic's
  kind (biomedical, event, technology, general) from keyword lists.
- ``refine_outline`` (WritePageOutlineFromConv): KMeans over the conversations' answer
  sentences (4–7 clusters); each cluster's heading is its top c-TF-IDF key phrase; draft
  sections that the conversations support are kept. Headings name a subject (``names_subject``):
  a multi-word phrase or a name, never a lone common noun such as "Cycles".
- ``write_section`` / ``polish``: extractive, citations kept verbatim (the lead: ``lead``). The
  sentences a section gets are chosen by the reporter (``research.pipeline.material`` /
  ``sections``): whole sentences of the sources' full text (no ``…`` snippet cuts), off-topic
  sources and sentences left out, each sentence assigned once to the section whose heading is
  its nearest, near-duplicates (cosine ≥ 0.9) removed across the whole report.

Size: the outline and the section writer share the tuning constants and helpers below; they
are one writer.
"""

from __future__ import annotations

import math
import re

import numpy as np

from research.models import ConversationResult, Outline, OutlineSection
from research.text import (
    WEAK_HEAD,
    ensure_period,
    is_boilerplate,
    norm_key,
    ranked_phrases,
    split_sentences,
    strip_citations,
    subject_of,
    title_case,
    topic_keys,
    word_key,
)
from research.text.findings import (
    finding_factor,
    no_finding,
)
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
