"""A report organised by question: which section answers each syllabus
question, and which sentences go into which section (item 4: global assignment, no repeats).

``plan_sections``: STORM's refined outline (docs/design.md § Two-phase outline) still shapes the report. Each
syllabus question (docs/design.md § Source collector) is matched one-to-one to the outline section closest to it
(Hungarian assignment on the larger cosine of the heading to ``"label: description"`` and to
the label — without the topic, which every heading shares — kept when ≥ ``MATCH_MIN``); a
matched outline section becomes the question's section, headed by the question's label and
keeping its subsections, and answers it from the sources assigned to it (docs/design.md § Completion
``finalize_sources``). An unmatched question gets its own section, also headed by its label. The
report reads question by question (syllabus order), then the outline sections the
syllabus lacks, in outline order (they keep their sections).

``allocate``: every usable sentence (``evidence.units_for``) is scored against every section;
a sentence may go only to the section whose ``"topic: heading"`` is its nearest (argmax cosine,
the section-fit criterion of ``research.devtools.report_quality``), only when it is about the section's aspect
(cosine to ``SectionPlan.aspect()`` — the question's label and description, or the heading
without the topic — ≥ ``ASPECT_MIN``, ``QUESTION_ASPECT_MIN`` for a question, and ≥ ``RELATIVE_MIN``
of the best in that section) and,
for a question's section, only when its source is assigned to that question. Sentences that describe
study design (``text.STUDY_DESIGN``: "were randomized to receive…", "we aimed to…") count ``DESIGN_PENALTY`` less on the
aspect. Score = mean of the two cosines. One greedy pass over all (sentence, section) pairs,
question sections first, best score first, keeps a sentence when its section has room
(``PER_SECTION``) and it is not a near-duplicate of any sentence already kept anywhere in the
report (cosine ≥ ``DUPLICATE_SIM``, same words, or content-word overlap ≥ 0.7). A question's
section never takes a sentence that fits another heading better (``QUESTION_MARGIN`` and
``FIT_MARGIN`` are 0: an earlier version let empty question sections borrow near-fitting
sentences, which filed ACE-inhibitor trials under "Mechanism of Action").

``nest``: an outline section that answers no question itself is shown as a subsection of the
question whose sources it quotes and whose label + description is closest to it (mean of the
cosines to its sentences' centroid and to its heading, ≥ ``NEST_MIN``), so a specific section
("Tropical Wave") answers a general question
("History & Timeline") without moving any sentence; ``reading_order`` gives the levels.

A question is ``insufficient`` when it has fewer than ``min_sources`` sources or no usable
sentence; its section then opens with one explicit sentence giving the count
(``insufficient_sentence``), naming the sections where its sources are quoted instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from research.models import Outline, Question, Syllabus
from research.pipeline.material import Unit
from research.text import STUDY_DESIGN, norm_key, overlap
from research.text.vectors import Vectors

MATCH_MIN = (
    0.50  # cosine(heading, "label: description" or label) for a section to answer a question
)
ASPECT_MIN = 0.22  # cosine(sentence, section aspect) for a sentence to be written into it
QUESTION_ASPECT_MIN = 0.25  # the same floor for a question's section (its label + description)
DUPLICATE_SIM = 0.90  # below the 0.92 near-duplicate bar of the quality metric, on purpose
RELATIVE_MIN = 0.7  # ... and ≥ 70 % of the best such cosine in its section
PER_SECTION = 7
FALLBACK_MAX = 2
FIT_MARGIN = 0.0
QUESTION_MARGIN = 0.0  # a question section takes only sentences whose nearest heading is its own
NEST_MIN = 0.20  # mean cosine(section sentences' centroid / heading, question aspect) to nest under a question
DESIGN_PENALTY = 0.10  # aspect cosine taken off sentences that describe study design, not findings


@dataclass
class SectionPlan:
    """One report section: heading, subsections, and the syllabus question it answers (if any).

    ``sources``: ids of the collector sources assigned to the question (docs/design.md § Source collector); None for a
    section that answers no question (any on-topic source may feed it). ``status`` is
    "answered" | "insufficient" for question sections, "" otherwise. ``conduct_only``: the
    sources of a question whose best passages only say how their studies were run (its section
    says so instead of quoting them, ``statements.conduct_statement``). ``indirect``: an open
    comparison question's section that quotes what each arm did in trials of its own
    (``pipeline.indirect``)."""

    heading: str
    subsections: list[str] = field(default_factory=list)
    question: Question | None = None
    sources: list[str] | None = None
    status: str = ""
    units: list[Unit] = field(default_factory=list)
    parent: SectionPlan | None = None
    elsewhere: list[str] = field(default_factory=list)
    elsewhere_sources: list[str] = field(default_factory=list)
    conduct_only: list[str] = field(default_factory=list)
    indirect: bool = False

    def query(self, topic: str) -> str:
        """The text a sentence's fit is measured against: ``"topic: heading"`` (exactly the
        section-fit definition of ``research.devtools.report_quality``)."""
        return f"{topic}: {self.heading}"

    def aspect(self) -> str:
        """What the section is about without the topic: ``"label: description"`` of its question,
        else ``"heading. subsections"``."""
        if self.question is not None:
            return f"{self.question.label}: {self.question.description}"
        return (
            f"{self.heading}. {', '.join(self.subsections)}" if self.subsections else self.heading
        )


def load_matcher() -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    """scipy's ``linear_sum_assignment`` (Hungarian matching of outline headings to syllabus
    questions). scipy.optimize takes ~0.3 s to import, so it loads when the report is written,
    or earlier on the warm-up thread (``research.warmup``) while the conversations run."""
    from scipy.optimize import linear_sum_assignment  # noqa: PLC0415 - see above

    return linear_sum_assignment


def plan_sections(
    vectors: Vectors,
    topic: str,
    outline: Outline,
    syllabus: Syllabus | None,
    finalized: dict,
    questions_only: bool = False,
) -> list[SectionPlan]:
    """Sections of the report: outline sections (matched questions attached), then one section
    per unmatched question. ``finalized`` is ``SourceCollector.finalize_sources()``. With
    ``questions_only`` (a framed question: its syllabus is what the analyst asked) the report
    has the questions' sections alone, without the outline's other sections or subsections."""
    plans = [
        SectionPlan(heading=s.heading, subsections=list(s.subsections)) for s in outline.sections
    ]
    questions = list(syllabus.questions) if syllabus else []
    matched: dict[int, int] = {}
    if plans and questions:
        heads = [p.heading for p in plans]
        sims = np.maximum(
            vectors.sim(heads, [f"{q.label}: {q.description}" for q in questions]),
            vectors.sim(heads, [q.label for q in questions]),
        )
        rows, cols = load_matcher()(-sims)
        matched = {
            int(c): int(r) for r, c in zip(rows, cols, strict=True) if sims[r, c] >= MATCH_MIN
        }
    answering = []
    for j, q in enumerate(questions):
        plan = plans[matched[j]] if j in matched else SectionPlan(heading=q.label)
        plan.heading, plan.question = q.label, q  # a question's section is headed by its label
        entry = finalized.get("questions", {}).get(q.key, {})
        plan.sources = [s["source_id"] for s in entry.get("sources", [])]
        answering.append(plan)
    if questions_only and answering:
        for p in answering:
            p.subsections = []
        return answering
    taken = set(matched.values())
    return answering + [p for i, p in enumerate(plans) if i not in taken]


def allocate(vectors: Vectors, topic: str, plans: list[SectionPlan], units: list[Unit]) -> None:
    """Fill ``plan.units`` for every section (module doc: global assignment + dedupe) and set
    each question section's ``status``. Deterministic for the same input."""
    for p in plans:
        p.units = []
    if units and plans:
        _assign(vectors, topic, plans, units)
    nest(vectors, plans)
    for p in plans:
        if p.question is not None:
            enough = len(p.sources or []) >= p.question.min_sources
            has_text = bool(p.units) or any(c.units for c in plans if c.parent is p)
            p.status = "answered" if enough and has_text else "insufficient"


def nest(vectors: Vectors, plans: list[SectionPlan]) -> None:
    """Put each outline section that answers no question itself under the question it serves,
    as a subsection ("a section or subsection whose text answers it"): among the
    questions that share at least one source with the section's sentences, the one whose
    ``aspect`` (label: description) is closest to the section: the mean of its cosine to the
    centroid of those sentences and to the section's heading, when that is ≥ ``NEST_MIN``. The
    sentences stay where the global assignment put
    them (their nearest heading), so nesting never moves a sentence; it only tells the reader
    which question a specific section (e.g. "Tropical Wave" under "History & Timeline")
    answers. Deterministic for the same input."""
    questions = [p for p in plans if p.question is not None]
    for p in plans:
        p.parent = None
        if p.question is not None or not p.units or not questions:
            continue
        ids = {u.source_id for u in p.units}
        cands = [q for q in questions if ids & set(q.sources or [])]
        if not cands:
            continue
        centroid = vectors.encode([u.text for u in p.units]).mean(axis=0)
        centroid = centroid / max(float(np.linalg.norm(centroid)), 1e-9)
        aspects = vectors.encode([q.aspect() for q in cands])
        # what the section says (its sentences) and what it is called (its heading) count alike:
        # "Adverse Events" belongs under "Safety Profile" even when its sentences also mention efficacy
        sims = 0.5 * (aspects @ centroid) + 0.5 * (aspects @ vectors.encode([p.heading])[0])
        best = int(np.argmax(sims))
        if float(sims[best]) >= NEST_MIN:
            p.parent = cands[best]


def reading_order(plans: list[SectionPlan]) -> list[tuple[SectionPlan, int]]:
    """``(section, level)`` in reading order: each question's section (level 1) followed by the
    sections nested under it (level 2, outline order), then the sections that serve no question."""
    out: list[tuple[SectionPlan, int]] = []
    for p in plans:
        if p.question is not None:
            out.append((p, 1))
            out += [(c, 2) for c in plans if c.parent is p]
    out += [(p, 1) for p in plans if p.question is None and p.parent is None]
    return out


def _assign(vectors: Vectors, topic: str, plans: list[SectionPlan], units: list[Unit]) -> None:
    texts = [u.text for u in units]
    fit = vectors.sim(texts, [p.query(topic) for p in plans])  # (units, sections)
    design = np.array(
        [DESIGN_PENALTY * bool(STUDY_DESIGN.search(t)) for t in texts], dtype=np.float32
    )
    aspect = vectors.sim(texts, [p.aspect() for p in plans]) - design[:, None]
    score = 0.5 * fit + 0.5 * aspect
    floor = [QUESTION_ASPECT_MIN if p.question is not None else ASPECT_MIN for p in plans]
    allowed = np.array(
        [
            [
                (p.sources is None or u.source_id in set(p.sources)) and aspect[i, j] >= floor[j]
                for j, p in enumerate(plans)
            ]
            for i, u in enumerate(units)
        ]
    )
    best = fit.argmax(axis=1)
    is_q = [p.question is not None for p in plans]
    vecs = vectors.encode(texts)
    kept: list[int] = []

    def take(i: int, j: int) -> bool:
        if any(
            norm_key(texts[i]) == norm_key(texts[k]) or overlap(texts[i], texts[k]) >= 0.7
            for k in kept
        ):
            return False
        if kept and float(np.max(vecs[kept] @ vecs[i])) >= DUPLICATE_SIM:
            return False
        kept.append(i)
        plans[j].units.append(units[i])
        return True

    # questions first: a question section may take its sources' sentences whose fit to it is
    # within QUESTION_MARGIN of their best heading; then the outline's other sections
    pairs = [
        (i, j)
        for i in range(len(units))
        for j in range(len(plans))
        if allowed[i, j]
        and (j == best[i] or (is_q[j] and fit[i, j] >= fit[i, best[i]] - QUESTION_MARGIN))
    ]
    top: dict[int, float] = {}
    for i, j in pairs:
        top[j] = max(top.get(j, -1.0), float(aspect[i, j]))
    pairs = sorted(
        (ij for ij in pairs if aspect[ij] >= RELATIVE_MIN * top[ij[1]]),
        key=lambda ij: (not is_q[ij[1]], -float(score[ij]), ij),
    )
    for i, j in pairs:
        if len(plans[j].units) < PER_SECTION and i not in kept:
            take(i, j)
    for j, p in enumerate(
        plans
    ):  # an empty question section: its sources' best near-fitting sentences
        if p.question is None or p.units:
            continue
        near = [
            i
            for i in range(len(units))
            if allowed[i, j] and i not in kept and fit[i, j] >= fit[i].max() - FIT_MARGIN
        ]
        for i in sorted(near, key=lambda i: (-float(score[i, j]), i)):
            if len(p.units) >= FALLBACK_MAX:
                break
            take(i, j)
    order = {u: n for n, u in enumerate(units)}
    for p in plans:  # reading order: by source, then by position in the source
        p.units.sort(key=lambda u: order[u])


def insufficient_sentence(q: Question, found: int, elsewhere: list[str] | None = None) -> str:
    """The one explicit sentence for an unanswered question, with the count, e.g. "Market
    Status: 1 of 3 sources needed; the evidence found does not establish market status
    (development stage, approvals, commercialization)."."""
    desc = q.description.strip().rstrip(".")
    desc = desc.rsplit("?", 1)[-1].strip() or desc
    what = f"{q.label.lower()} ({desc[:1].lower()}{desc[1:]})" if desc else q.label.lower()
    if found < q.min_sources:
        return (
            f"{q.label}: {found} of {q.min_sources} sources needed; the evidence found does not "
            f"establish {what}."
        )
    where = ""
    if elsewhere:
        names = [f"“{h}”" for h in elsewhere[:3]]
        listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        where = f" (they are quoted under {listed})"
    return (
        f"{q.label}: {found} sources were assigned to this question ({q.min_sources} needed), but their "
        f"sentences fit other sections better{where}; the evidence found does not establish {what}."
    )
