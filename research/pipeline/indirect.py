"""The report's indirect evidence: for a comparison that no source of the run makes, what each
arm did in trials of its own (``research.evidence.indirect``; docs/evidence.md § Indirect
evidence).

``add_arm_results(ctx, topic, plans) → bool`` fills the sections of the questions that only a
trial of one arm against the other answers (``planning.question_roles.BOTH_ARMS``) and that no source
answered, when the primary question has no source either, with the arms' own results, read
from every search result of the run (``text.artifact_text.search_results``: the gate of
``evidence.passages.on_question_docs`` keeps a trial of the comparator alone out of the
conversations, so it is looked for again here). The sources quoted are saved to the collector
unassigned (they answer no question: the questions stay open) so that they can be cited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from research.evidence.indirect import arm_results
from research.models import Question, SearchResult
from research.pipeline.material import Unit
from research.planning.question_roles import BOTH_ARMS, PRIMARY
from research.text.artifact_text import search_results
from research.text.frame import frame_question

if TYPE_CHECKING:
    from research.pipeline.context import RunContext
    from research.pipeline.sections import SectionPlan


def add_arm_results(ctx: RunContext, topic: str, plans: list[SectionPlan]) -> bool:
    """Give each open comparison question's section (module doc) the arms' own results as its
    units and mark it ``indirect``; True when any source was saved for them (the caller reads
    the collector's sources again). Nothing happens for a question that is not a comparison, or
    when any source answers the primary question."""
    if len(frame_question(topic).arms) < 2:
        return False
    asked = [(p, p.question) for p in plans if p.question is not None]
    if any(q.key in PRIMARY and p.sources for p, q in asked):
        return False
    open_plans = [(p, q) for p, q in asked if q.key in BOTH_ARMS and not p.sources]
    if not open_plans:
        return False
    results = search_results(ctx.run_id, ctx.settings)
    taken: set[str] = set()  # a passage is quoted once, under the first question it answers
    saved = False
    for plan, question in open_plans:
        units = arm_units(ctx, topic, question, results, taken)
        if units:
            plan.units = units
            plan.indirect = True
            saved = True
    return saved


def arm_units(
    ctx: RunContext,
    topic: str,
    question: Question,
    results: list[SearchResult] | None = None,
    taken: set[str] | None = None,
) -> list[Unit]:
    """The arms' own results on ``question`` (``evidence.indirect.arm_results``) among
    ``results`` (default: every search result of the run), their sources saved to the collector
    unassigned; the passages quoted are added to ``taken`` (and none in it is quoted again)."""
    if results is None:
        results = search_results(ctx.run_id, ctx.settings)
    taken = set() if taken is None else taken
    units = []
    for found in arm_results(ctx.vectors(), topic, question, results, frozenset(taken)):
        taken.add(found.passage.passage)
        r = found.result
        out = ctx.collector.save_source(
            r.source_type,
            r.external_id,
            r.url,
            r.title,
            [],
            key_excerpts=found.passage.passage,
            found_by=[f"{x.get('backend', '')}: {x.get('query', '')}" for x in r.found_by],
        )
        units.append(Unit(text=found.passage.passage, source_id=out["source_id"]))
    return units
