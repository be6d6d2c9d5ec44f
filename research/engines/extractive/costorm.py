"""Co-STORM steps without a model (docs/design.md § Co-STORM round-table;
``research.engines.costorm_steps.CoStormSteps``), from sentence embeddings and text statistics.
Deterministic: the same input gives the same output.

- experts: '<phrase> Expert' personas from the key phrases of the background results, after a
  'General Background Expert';
- intent: after a question → ``potential_answer``; after a grounded potential answer →
  ``further_details`` when the expert's focus bears on the question (cosine ≥ ``FOCUS_SIM``)
  and the discourse has had no more further details than information requests (so the two
  alternate), else its own ``information_request``; after further details → ``information_request``;
- questions: an uncovered syllabus question closest to the expert's focus, else its own
  questions, else a follow-up on the last answer's key phrase;
- answers: the retrieved sentences most relevant to the question (``dialogue.answer``), each
  cited ``[n]``; further details add the expert's focus to the question;
- moderator: a question on the top unused item's key phrase not yet a mind-map concept, quoting
  the sentence it comes from with its citation;
- mind map: placement by the path and centroid similarities the mind map computed
  (``PLACE_SIM``/``NEST_SIM``/``ITEM_MIN_SIM``); concept names from syllabus labels or
  meaningful key phrases (``_good_name``); subtopics by agglomerative clustering of the items'
  embeddings, named by c-TF-IDF key phrases, with the items assigned to their cluster.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from sklearn.cluster import AgglomerativeClustering

from research.engines.base import AnswerOutput, PersonaList, QueryList, TextOutput
from research.engines.costorm_steps import (
    ExpertAnswerInput,
    ExpertQuestionInput,
    ExpertsInput,
    ExpertUpdateInput,
    IntentInput,
    IntentOutput,
    ModeratorInput,
    ModeratorOutput,
    PlacementInput,
    PlacementOutput,
    SubtopicInput,
    SubtopicOutput,
    TurnQueryInput,
    UtteranceInput,
)
from research.engines.extractive import dialogue, planning, writing
from research.engines.labels import OFFLINE_LABEL
from research.models import ANSWER_INTENTS, QUESTION_INTENTS, CoStormTurn, Perspective
from research.text import (
    aspect_of,
    clip,
    ensure_period,
    norm_key,
    ranked_phrases,
    split_sentences,
    strip_citations,
    subject_of,
    title_case,
    topic_keys,
)
from research.text.vectors import Vectors, rank

FOCUS_SIM = 0.30  # cosine(expert focus, question) for the expert to add further details
PLACE_SIM = 0.50  # score (mean of path and centroid cosines) to place information in a concept
NEST_SIM = 0.40  # score for a new concept to nest under the best existing (non-root) one
ITEM_MIN_SIM = 0.30  # mean cosine of a new text to a concept's items for it to go there (or nest)
KEEP_EXPERT_SIM = 0.40  # an expert this close to the moderator's question keeps the panel as is
ITEMS_PER_SUBTOPIC = 5
GENERAL = "General Background Expert"


class ExtractiveCoStorm:
    """``CoStormSteps`` for the offline engine (``label = "offline extractive mode"``).

    Args:
        vectors: the engine's ``Vectors`` (shared embedding cache); None → a new one.
    """

    name = "extractive"
    label = OFFLINE_LABEL

    def __init__(self, vectors: Vectors | None = None) -> None:
        self.vectors = vectors or Vectors()

    # ------------------------------------------------------------------ warm start
    def generate_experts(self, inp: ExpertsInput) -> PersonaList:
        """N experts: a General Background Expert, then one per key phrase of the background
        (c-TF-IDF key phrases of the background snippets, most distinctive first)."""
        subject = subject_of(planning.require_topic(inp.topic))
        text = " ".join(" ".join(r.snippets) or r.text[:2000] for r in inp.background)
        phrases = (
            ranked_phrases([text], top=30, exclude=topic_keys(inp.topic))[0] if text.strip() else []
        )
        picked: list[str] = []
        for p in (p for p in phrases if len(p.split()) >= 2 and _nameable(p)):
            words = {w.lower() for w in p.split()}
            if all(not (words & {w.lower() for w in q.split()}) for q in picked):
                picked.append(p)
        experts = [
            Perspective(
                name=GENERAL,
                focus=f"Definitions, key facts, figures and background of {subject}",
                questions=[
                    f"What is {subject}, and what are its defining facts?",
                    f"What background is needed to understand {subject}?",
                ],
            )
        ]
        names = {GENERAL.lower()}
        for phrase in picked:
            if len(experts) >= inp.n:
                break
            name = f"{title_case(phrase)} Expert"
            if name.lower() in names:
                continue
            names.add(name.lower())
            experts.append(_phrase_expert(phrase, subject))
        for fallback in (
            "clinical evidence",
            "safety",
            "mechanism",
            "guidelines",
            "history",
            "costs",
        ):
            if len(experts) >= inp.n:
                break
            if f"{title_case(fallback)} Expert".lower() not in names:
                names.add(f"{title_case(fallback)} Expert".lower())
                experts.append(_phrase_expert(fallback, subject))
        return PersonaList(perspectives=experts[: inp.n])

    # ------------------------------------------------------------------ expert turn
    def choose_intent(self, inp: IntentInput) -> IntentOutput:
        """See the module docstring; never asks twice in a row."""
        last = inp.history[-1] if inp.history else None
        if last is None or last.intent in QUESTION_INTENTS:
            return IntentOutput(intent="potential_answer")
        if (
            last.intent == "potential_answer"
            and last.role != inp.expert.name
            and last.question
            and last.sources
        ):
            details = sum(t.intent == "further_details" for t in inp.history)
            requests = sum(t.intent == "information_request" for t in inp.history)
            sim = float(self.vectors.sim([inp.expert.focus], [last.question])[0][0])
            if sim >= FOCUS_SIM and details <= requests:
                return IntentOutput(intent="further_details")
        return IntentOutput(intent="information_request")

    def expert_question(self, inp: ExpertQuestionInput) -> TextOutput:
        """The expert's next question (never one already asked in the discourse)."""
        subject = subject_of(inp.topic)
        asked = {norm_key(t.utterance) for t in inp.history} | {
            norm_key(t.question) for t in inp.history
        }
        gaps = [(q, dialogue.focus_question(q, subject)) for q in inp.next_focus]
        gaps = [(q, text) for q, text in gaps if norm_key(text) not in asked]
        if gaps:
            sims = self.vectors.sim(
                [inp.expert.focus], [f"{q.label}: {q.description}" for q, _ in gaps]
            )[0]
            return TextOutput(text=gaps[rank(sims)[0]][1])
        for q in inp.expert.questions:
            if q.strip() and norm_key(q) not in asked:
                return TextOutput(text=q.strip())
        follow = _follow_up(inp.history, subject, asked)
        if follow:
            return TextOutput(text=follow)
        n = sum(1 for t in inp.history if t.role == inp.expert.name) + 1
        return TextOutput(
            text=f"What else do sources report on {aspect_of(inp.expert.focus, subject).lower()} "
            f"for {subject} (point {n})?"
        )

    def turn_queries(self, inp: TurnQueryInput) -> QueryList:
        """QuestionToQuery (``dialogue.to_queries``); for further details the query built from
        the expert's focus comes first."""
        out = dialogue.to_queries(
            inp.topic, inp.question, inp.expert if inp.intent == "further_details" else None
        ).queries
        if inp.intent == "further_details" and len(out) > 1:
            out = [out[-1], *out[:-1]]
        return QueryList(queries=out[:3])

    def expert_answer(self, inp: ExpertAnswerInput) -> AnswerOutput:
        """The most relevant retrieved sentences, each cited ``[n]`` (``dialogue.answer``)."""
        question = inp.question
        if inp.intent == "further_details":
            question = f"{question} {aspect_of(inp.expert.focus, inp.topic)}"
        return dialogue.answer(self.vectors, inp.topic, question, inp.results)

    def polish_utterance(self, inp: UtteranceInput) -> TextOutput:
        """Repeated sentences and whitespace problems removed; citations verbatim."""
        return TextOutput(text=writing.polish(inp.utterance))

    # ------------------------------------------------------------------ moderator
    def moderator_question(self, inp: ModeratorInput) -> ModeratorOutput:
        """A question on the best new key phrase of the items (not a concept yet, not asked),
        quoting the item sentence that mentions it, cited ``[n]``."""
        subject = subject_of(inp.topic)
        if not inp.items:
            return ModeratorOutput(question=f"What have we not yet discussed about {subject}?")
        said = " ".join(
            [
                *(c.lower() for c in inp.concepts),
                *(t.utterance.lower() for t in inp.history if t.intent in QUESTION_INTENTS),
            ]
        )
        phrases = ranked_phrases(
            [" ".join(i.text for i in inp.items)], top=15, exclude=topic_keys(inp.topic)
        )[0]
        phrases = [p for p in phrases if _nameable(p)] or phrases
        phrase = next(
            (p for p in phrases if p.lower() not in said and len(p.split()) >= 2),
            next((p for p in phrases if p.lower() not in said), phrases[0] if phrases else "this"),
        )
        n, sentence = _quote(inp.items, phrase)
        q = f"What do the sources report about {phrase.lower()} for {subject}?"
        return ModeratorOutput(
            question=f"We have not discussed {phrase.lower()} yet. {sentence}[{n}] {q}",
            question_only=q,
            cited=[n],
        )

    def update_experts(self, inp: ExpertUpdateInput) -> PersonaList:
        """Keep the panel when an expert's focus is close to the question (cosine ≥
        ``KEEP_EXPERT_SIM``); else the expert farthest from it gives way to one on the
        question's key phrase."""
        experts = list(inp.experts)[: inp.n]
        if not experts:
            return PersonaList(perspectives=[])
        sims = self.vectors.sim([strip_citations(inp.question)], [e.focus for e in experts])[0]
        if float(np.max(sims)) >= KEEP_EXPERT_SIM:
            return PersonaList(perspectives=experts)
        subject = subject_of(inp.topic)
        q_part = inp.question.rsplit("]", 1)[-1]
        phrases = ranked_phrases([q_part], top=3, exclude=topic_keys(inp.topic))[0]
        if not phrases:
            return PersonaList(perspectives=experts)
        new = _phrase_expert(phrases[0], subject)
        if any(e.name.lower() == new.name.lower() for e in experts):
            return PersonaList(perspectives=experts)
        experts[int(rank(-sims)[0])] = new
        return PersonaList(perspectives=experts)

    # ------------------------------------------------------------------ mind map
    def choose_placement(self, inp: PlacementInput) -> PlacementOutput:
        """Score each non-root candidate by the mean of its name/path similarity and its centroid
        similarity (the new text vs the items already there; the path similarity alone when it
        holds none). The best one takes the item when its score ≥ ``PLACE_SIM`` and its centroid
        similarity ≥ ``ITEM_MIN_SIM`` (or when no new node is allowed); else a new concept named
        by ``_concept_name``, nested under the best candidate when its score ≥ ``NEST_SIM`` and
        the text is close to its items, else under the root."""
        cands, sims = inp.candidates, inp.similarities
        isims = (
            inp.item_similarities
            if len(inp.item_similarities) == len(cands)
            else [-1.0] * len(cands)
        )
        if not inp.allow_new:
            return PlacementOutput(path=cands[0])
        root = min(cands, key=len)
        scores = [
            (-1.0 if c == root else (s + i) / 2 if i >= 0 else s)
            for c, s, i in zip(cands, sims, isims, strict=True)
        ]
        best = rank(np.array(scores))[0]
        close = isims[best] < 0 or isims[best] >= ITEM_MIN_SIM
        if cands[best] != root and scores[best] >= PLACE_SIM and close:
            return PlacementOutput(path=cands[best])
        name = _concept_name(inp.question, inp.text, inp.topic)
        for c in cands:
            if c.rsplit(" > ", 1)[-1].lower() == name.lower():
                return PlacementOutput(path=c)
        syllabus = (
            ":" in inp.question.rsplit("]", 1)[-1]
        )  # a syllabus label names a top-level concept
        parent = (
            cands[best]
            if cands[best] != root and not syllabus and sims[best] >= NEST_SIM and close
            else root
        )
        return PlacementOutput(path=parent, new_node=name)

    def subtopics(self, inp: SubtopicInput) -> SubtopicOutput:
        """Agglomerative clusters (cosine, average linkage; deterministic) of the items' embeddings,
        one per ``ITEMS_PER_SUBTOPIC`` items (2..``max_subtopics``), each named by its best
        meaningful key phrase (``_good_name``; phrases shared by several of its items first);
        ``assignment`` maps each item to its cluster's name (-1 = stays in the concept: an unnamed
        cluster's items and the overview item, ``_overview_item``)."""
        keep = [n for n, t in enumerate(inp.items) if t.strip()]
        texts = [strip_citations(inp.items[n]) for n in keep]
        if len(texts) < 4:
            return SubtopicOutput(names=[])
        k = max(2, min(inp.max_subtopics, round(len(texts) / ITEMS_PER_SUBTOPIC)))
        vecs = self.vectors.encode(texts)
        labels = AgglomerativeClustering(
            n_clusters=k, metric="cosine", linkage="average"
        ).fit_predict(vecs)
        groups = [[t for t, lab in zip(texts, labels, strict=True) if lab == c] for c in range(k)]
        exclude = topic_keys(inp.topic, *inp.path.split(" > "))
        names: list[str] = []
        cluster_name: dict[int, int] = {}
        for c, cand in enumerate(
            ranked_phrases([" ".join(g) for g in groups], top=12, exclude=exclude)
        ):
            good = [
                p
                for p in cand
                if _good_name(p) and title_case(p).lower() not in (n.lower() for n in names)
            ]
            shared = [p for p in good if sum(p.lower() in t.lower() for t in groups[c]) >= 2]
            multi = [p for p in good if len(p.split()) >= 2]
            pick = next(iter([p for p in shared if p in multi] + multi + shared + good), None)
            if pick:
                cluster_name[c] = len(names)
                names.append(title_case(pick))
        if len(names) < 2:
            return SubtopicOutput(names=[])
        assignment = [-1] * len(inp.items)
        for n, lab in zip(keep, labels, strict=True):
            assignment[n] = cluster_name.get(int(lab), -1)
        overview = _overview_item(vecs, labels)
        if overview is not None:
            assignment[keep[overview]] = -1
        return SubtopicOutput(names=names, assignment=assignment)


# ---------------------------------------------------------------------- helpers
def _nameable(phrase: str) -> bool:
    """A phrase fit to name a concept or an expert: no short code-like words ('D8', 'q3w')."""
    return all(len(w) > 3 or not re.search(r"\d", w) for w in phrase.split()) and len(phrase) >= 4


def _phrase_expert(phrase: str, subject: str) -> Perspective:
    low = phrase.lower()
    return Perspective(
        name=f"{title_case(phrase)} Expert",
        focus=f"{phrase} in relation to {subject}",
        questions=[
            f"What do sources report about {low} and {subject}?",
            f"What is the role of {low} in {subject}?",
            f"What open questions remain about {low} for {subject}?",
        ],
    )


def _follow_up(history: list[CoStormTurn], subject: str, asked: set[str]) -> str | None:
    last = next(
        (t for t in reversed(history) if t.intent in ANSWER_INTENTS and "[" in t.utterance), None
    )
    if last is None:
        return None
    said = " ".join(t.utterance.lower() for t in history if t.intent in QUESTION_INTENTS)
    for phrase in ranked_phrases(
        [strip_citations(last.utterance)], top=8, exclude=topic_keys(subject)
    )[0]:
        if phrase.lower() in said or len(phrase.split()) < 2:
            continue
        q = f"Can you tell me more about {phrase.lower()} in relation to {subject}?"
        if norm_key(q) not in asked:
            return q
    return None


def _quote(items: list[Any], phrase: str) -> tuple[int, str]:
    """(item number, sentence) of the first item sentence mentioning ``phrase`` (else item 1's
    first sentence), clipped to 240 characters."""
    for n, item in enumerate(items, start=1):
        for s in split_sentences(item.text):
            if phrase.lower() in s.lower():
                return n, ensure_period(clip(strip_citations(s), 240))
    first = (split_sentences(items[0].text) or [items[0].text])[0]
    return 1, ensure_period(clip(strip_citations(first), 240))


def _overview_item(vecs: np.ndarray, labels: np.ndarray) -> int | None:
    """The item that stays in the split concept as its overview: the one closest to the centroid
    of all items among those whose cluster keeps ≥ 2 others (None when no cluster is that big)."""
    sizes = np.bincount(labels)
    ok = [i for i in range(len(labels)) if sizes[labels[i]] >= 3]
    if not ok:
        return None
    centre = vecs.mean(axis=0)
    scores = np.round(vecs[ok] @ centre, 4)
    return ok[rank(scores)[0]]


GENERIC_NAME_WORDS = frozenset(
    "action actions phase phases iii ii iv status market data result results study studies trial trials "
    "use uses role effect effects report reports source sources information detail details patient patients "
    "group groups level levels rate rates time type types case cases need needs point points analysis "
    "approach approaches factor factors years year month months number option options efficacy "
    "january february march april may june july august september october november december "
    # units and quantities: what a figure is measured in names no concept ("Square Meter")
    "square meter meters metre metres mg kg ml dose doses dosage percent hour hours day days week "
    "weeks absolute relative original mean median range total overall baseline risk risks "
    "deficit deficits".split()
)
_QUANTITY_WORD = re.compile(r"\d")  # "10-year", "5-year": a span of time, not a concept


def _good_name(phrase: str) -> bool:
    """A concept name an analyst would accept: nameable, and not only generic words, units and
    spans of time ('Action', 'Phase III', 'Market Status', 'Square Meter', 'Absolute 10-year
    Risk'); a single word needs ≥ 6 letters ('Nephrotoxicity')."""
    words = [w.lower() for w in phrase.split()]
    if not words or not _nameable(phrase):
        return False
    if all(w in GENERIC_NAME_WORDS or _QUANTITY_WORD.search(w) for w in words):
        return False
    return len(words) >= 2 or len(words[0]) >= 6


def _concept_name(question: str, text: str, topic: str) -> str:
    """A concept name: a syllabus question's label ('... report on <label>: <description>?' →
    'Mechanism of Action'); else the question's best meaningful key phrase (``_good_name``,
    topic words excluded), else the text's; multi-word phrases first."""
    exclude = topic_keys(topic)
    q = question.rsplit("]", 1)[-1]
    if ":" in q:  # syllabus focus question: the label names it
        q = q.split(":", 1)[0]
        m = re.search(r"\breport (?:on|about) (.+)$", q.strip(), flags=re.I)
        label = " ".join(m.group(1).split()) if m else ""
        if label and len(label.split()) <= 6 and _good_name(label):
            return title_case(label)[:80]
    fallback = ""
    for source in (q, text):
        phrases = ranked_phrases([strip_citations(source)], top=8, exclude=exclude)[0]
        good = [p for p in phrases if _good_name(p)]
        multi = [p for p in good if len(p.split()) >= 2]
        if multi or good:
            return title_case((multi or good)[0])
        fallback = fallback or (phrases[0] if phrases else "")
    words = aspect_of(question, topic).split()[:4]
    return title_case(" ".join(words)) if len(words) >= 2 else title_case(fallback) or "Other"
