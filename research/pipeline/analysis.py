"""Analysis phase (docs/design.md § Analysis the analysis agent): facts extracted from the
conversations, cross-validated (claims backed by ≥ 2 sources) and checked for contradictions."""

from __future__ import annotations

from research.citations import cited_spans
from research.engines.base import AnalysisInput, Fact
from research.models import Analysis, ConversationResult
from research.pipeline.context import RunContext


def extract_facts(conversations: list[ConversationResult]) -> list[Fact]:
    """Facts = answer spans with their cited sources (docs/design.md § Analysis: extractFactsFromConversation).

    One Fact per (span, cited source); spans without a resolvable citation are skipped.
    """
    facts: list[Fact] = []
    for conv in conversations:
        for turn in conv.turns:
            by_n = {s.n: s.source_id for s in turn.sources}
            for span, nums in cited_spans(turn.answer):
                for n in dict.fromkeys(nums):
                    if n in by_n:
                        text = span if span[-1] in ".!?…" else f"{span}."
                        facts.append(
                            Fact(text=text, source_id=by_n[n], perspective=turn.perspective)
                        )
    return facts


def analyze(
    ctx: RunContext, conversations: list[ConversationResult]
) -> tuple[Analysis, list[Fact]]:
    """Run the engine's analysis over the conversations' facts and store it."""
    facts = extract_facts(conversations)
    result = ctx.engine.analyze(AnalysisInput(topic=ctx.config.topic, facts=facts))
    ctx.store.put_doc(ctx.run_id, "analysis", result)
    ctx.emit(
        "analysis.done",
        {
            "facts": len(facts),
            "cross_validated": len(result.cross_validated),
            "contradictions": len(result.contradictions),
        },
    )
    return result, facts
