"""WikiWriter ↔ TopicExpert conversations, one per perspective, run in parallel (seed 002
Phase 2; STORM paper §3.2).

Each turn: the writer asks (steered by the collector's ``next_focus``); the expert turns the
question into queries, searches (every search is an offloaded tool call, seed 001), answers with
``[n]`` citations grounded in the results, and every retrieved source that bears on a syllabus
question is saved to the collector with its questions (seed 000). The writer ends with
"Thank you so much for your help!" or the turn cap stops it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from research.engines.base import THANKS, AnswerInput, AskInput, AssignInput, QueryInput
from research.models import ConversationResult, DialogueTurn, Perspective, SearchResult, TurnSource, now
from research.pipeline.context import RunContext


def _dedupe(results: list[SearchResult]) -> list[SearchResult]:
    seen: set[str] = set()
    out = []
    for r in results:
        key = r.doc_id or r.url
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _save_sources(ctx: RunContext, question: str, focus: list[str], results: list[SearchResult],
                  cited: set[int]) -> list[TurnSource]:
    """Seed 000 ``save_source`` for each relevant result; returns the turn's numbered sources."""
    assigned = ctx.engine.assign_questions(AssignInput(syllabus=ctx.syllabus, question=question,
                                                       focus=focus, results=results))
    sources = []
    for n, (res, keys, excerpt) in enumerate(zip(results, assigned.relevant_questions,
                                                 assigned.key_excerpts), start=1):
        if not keys and n not in cited:
            continue
        saved = ctx.collector.save_source(
            source_type=res.source_type, external_id=res.external_id or res.doc_id, url=res.url,
            title=res.title, relevant_questions=keys, key_excerpts=excerpt or None)
        sources.append(TurnSource(n=n, source_id=saved["source_id"], citation_id=saved["citation_id"],
                                  title=res.title, url=res.url, source_type=res.source_type,
                                  external_id=res.external_id, snippet=" ".join(res.snippets)[:600]))
    return sources


def _focus(ctx: RunContext, slot: int) -> list:
    """The collector's ``next_focus`` questions, rotated by ``slot`` so that conversations running
    in parallel chase different coverage gaps instead of all asking about the same one."""
    keys = ctx.collector.get_progress().get("next_focus", [])
    if keys:
        shift = slot % len(keys)
        keys = keys[shift:] + keys[:shift]
    return [q for q in (ctx.syllabus.get(k) for k in keys) if q is not None]


def run_turn(ctx: RunContext, perspective: Perspective, history: list[DialogueTurn],
             memory: list[dict], slot: int = 0) -> DialogueTurn | None:
    """One dialogue turn; None when the writer says thanks. ``slot``: the conversation's index."""
    started = now()
    ask = ctx.engine.ask_question(AskInput(topic=ctx.config.topic, perspective=perspective, history=history,
                                           next_focus=_focus(ctx, slot), max_turns=ctx.config.max_turns))
    if THANKS.lower() in ask.question.lower():
        return None
    focus = [ask.focus_question] if ask.focus_question else []
    step = ctx.step_for(" ".join([ask.question, *focus]))
    queries = ctx.engine.question_to_queries(QueryInput(topic=ctx.config.topic, question=ask.question,
                                                        perspective=perspective)).queries[:3]
    results: list[SearchResult] = []
    seen = {s.url for t in history for s in t.sources}  # the writer wants new information
    for q in queries:
        ctx.check_cancel()
        results += ctx.search(q, step, perspective=perspective.name, memory=memory, exclude=seen)
        seen |= {r.url for r in results}
    results = _dedupe(results)
    answer = ctx.engine.answer_question(AnswerInput(topic=ctx.config.topic, question=ask.question, results=results))
    sources = _save_sources(ctx, ask.question, focus, results, set(answer.cited)) if results else []
    kept = {s.n for s in sources}
    # cited results are always kept (see _save_sources), so every [n] in the answer resolves
    assert set(answer.cited) <= kept, f"answer cites {set(answer.cited) - kept} with no saved source"
    return DialogueTurn(perspective=perspective.name, turn_number=len(history) + 1, question=ask.question,
                        answer=answer.answer, search_queries=queries, sources=sources, focus_questions=focus,
                        started_at=started, ended_at=now())


def simulate_conversation(ctx: RunContext, perspective: Perspective, slot: int = 0) -> ConversationResult:
    """Seed 002 §2.4 SimulateConversation for one perspective; stores each finished turn."""
    history: list[DialogueTurn] = []
    memory: list[dict] = []
    ended_by = "max_turns"
    for _ in range(ctx.config.max_turns):
        ctx.check_cancel()
        turn = run_turn(ctx, perspective, history, memory, slot)
        if turn is None:
            ended_by = "thanks"
            break
        history.append(turn)
        ctx.store.append_turn(ctx.run_id, turn)
    ctx.emit("conversation.completed", {"perspective": perspective.name, "turns": len(history),
                                        "ended_by": ended_by, "working_memory_messages": len(memory)})
    return ConversationResult(perspective=perspective, turns=history, ended_by=ended_by)


def run_conversations(ctx: RunContext, perspectives: list[Perspective]) -> list[ConversationResult]:
    """Seed 002 §4.3: all perspectives in parallel (one thread each); results in perspective order.

    An exception in any conversation propagates after all threads finish.
    """
    with ThreadPoolExecutor(max_workers=max(1, len(perspectives)), thread_name_prefix="conv") as pool:
        futures = [pool.submit(simulate_conversation, ctx, p, i) for i, p in enumerate(perspectives)]
        return [f.result() for f in futures]
