"""WikiWriter ↔ TopicExpert conversations, one per perspective, run in parallel (seed 002
Phase 2; STORM paper §3.2).

Each turn: the writer asks (steered by the collector's ``next_focus``); the expert turns the
question into queries, searches (every search is an offloaded tool call, seed 001), answers with
``[n]`` citations grounded in the results, and every retrieved source that bears on a syllabus
question is saved to the collector with its questions (seed 000). The writer ends with
"Thank you so much for your help!" or the turn cap stops it.

Determinism and resume (issue 7): conversations advance in rounds (round r = every live
conversation's turn r). Within a round the turns are computed in parallel from the same
coverage snapshot (stored per round in ``run:{id}:rounds``), then committed one by one in
perspective order — artifact files, ``save_source`` numbering (``src_NNN``), stored turns and
events never depend on thread timing. A resumed run rebuilds each conversation from its stored
turns and redoes only unfinished turns.
"""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from research.engines.base import THANKS, AnswerInput, AskInput, AssignInput, AssignOutput, QueryInput
from research.models import ConversationResult, DialogueTurn, Perspective, SearchResult, TurnSource, now
from research.errors import InvariantError
from research.pipeline.context import RunContext
from research.pipeline.recorders import DeferredRecorder


def _dedupe(results: list[SearchResult]) -> list[SearchResult]:
    seen: set[str] = set()
    out = []
    for r in results:
        key = r.doc_id or r.url
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


@dataclass
class PendingTurn:
    """A computed turn not yet committed: its turn (sources empty), results, the engine's
    question assignment and the deferred tool calls."""

    turn: DialogueTurn
    results: list[SearchResult]
    assigned: AssignOutput | None
    cited: set[int]
    recorder: DeferredRecorder
    memory: list[dict] = field(default_factory=list)


def _save_sources(ctx: RunContext, pending: PendingTurn) -> list[TurnSource]:
    """Seed 000 ``save_source`` for each relevant result; returns the turn's numbered sources.
    Idempotent: a source saved before a crash is found by the collector's dedup."""
    if pending.assigned is None:
        return []
    sources = []
    for n, (res, qkeys, excerpt) in enumerate(zip(pending.results, pending.assigned.relevant_questions,
                                                  pending.assigned.key_excerpts), start=1):
        if not qkeys and n not in pending.cited:
            continue
        saved = ctx.collector.save_source(
            source_type=res.source_type, external_id=res.external_id or res.doc_id, url=res.url,
            title=res.title, relevant_questions=qkeys, key_excerpts=excerpt or None,
            found_by=[f"{fb['backend']}: {fb['query']}" for fb in res.found_by])  # issue 5
        sources.append(TurnSource(n=n, source_id=saved["source_id"], citation_id=saved["citation_id"],
                                  title=res.title, url=res.url, source_type=res.source_type,
                                  external_id=res.external_id, snippet=" ".join(res.snippets)[:600]))
    return sources


def round_focus(ctx: RunContext, round_no: int) -> list[str]:
    """The collector's ``next_focus`` keys at the start of round ``round_no``, stored on first
    use (HSETNX) so a resumed round steers its turns exactly like the interrupted one."""
    return ctx.store.round_focus(ctx.run_id, round_no, lambda: ctx.collector.get_progress().get("next_focus", []))


def _focus(ctx: RunContext, focus_keys: list[str], slot: int) -> list:
    """``focus_keys`` rotated by ``slot`` so that conversations running in parallel chase
    different coverage gaps instead of all asking about the same one."""
    qkeys = list(focus_keys)
    if qkeys:
        shift = slot % len(qkeys)
        qkeys = qkeys[shift:] + qkeys[:shift]
    return [q for q in (ctx.syllabus.get(k) for k in qkeys) if q is not None]


def compute_turn(ctx: RunContext, perspective: Perspective, history: list[DialogueTurn],
                 focus_keys: list[str], slot: int = 0) -> PendingTurn | None:
    """One dialogue turn, computed but not committed; None when the writer says thanks.

    Thread-safe: writes nothing (tool outputs are compressed and queued). ``slot``: the
    conversation's index; its tool calls get ids ``conv{slot}.t{turn}.{n}``.
    """
    started = now()
    turn_number = len(history) + 1
    recorder = DeferredRecorder(ctx.artifacts, f"conv{slot}.t{turn_number}")
    tctx = copy.copy(ctx)
    tctx.artifacts = recorder
    ask = ctx.engine.ask_question(AskInput(topic=ctx.config.topic, perspective=perspective, history=history,
                                           next_focus=_focus(ctx, focus_keys, slot), max_turns=ctx.config.max_turns))
    if THANKS.lower() in ask.question.lower():
        return None
    focus = [ask.focus_question] if ask.focus_question else []
    step = ctx.step_for(" ".join([ask.question, *focus]))
    queries = ctx.engine.question_to_queries(QueryInput(topic=ctx.config.topic, question=ask.question,
                                                        perspective=perspective)).queries[:3]
    results: list[SearchResult] = []
    memory: list[dict] = []
    seen = {s.url for t in history for s in t.sources}  # the writer wants new information
    for q in queries:
        ctx.check_cancel()
        results += tctx.search(q, step, perspective=perspective.name, memory=memory, exclude=seen)
        seen |= {r.url for r in results}
    results = _dedupe(results)
    answer = ctx.engine.answer_question(AnswerInput(topic=ctx.config.topic, question=ask.question, results=results))
    assigned = ctx.engine.assign_questions(AssignInput(syllabus=ctx.syllabus, question=ask.question, focus=focus,
                                                       results=results)) if results else None
    turn = DialogueTurn(perspective=perspective.name, turn_number=turn_number, question=ask.question,
                        answer=answer.answer, search_queries=queries, sources=[], focus_questions=focus,
                        started_at=started, ended_at=now())
    return PendingTurn(turn=turn, results=results, assigned=assigned, cited=set(answer.cited),
                       recorder=recorder, memory=memory)


def commit_turn(ctx: RunContext, pending: PendingTurn) -> DialogueTurn:
    """Write the turn's tool calls, save its sources (seed 000) and store the turn."""
    pending.recorder.commit()
    sources = _save_sources(ctx, pending)
    kept = {s.n for s in sources}
    # cited results are always kept (see _save_sources), so every [n] in the answer resolves
    if not pending.cited <= kept:
        raise InvariantError(f"The answer cites {sorted(pending.cited - kept)} with no saved source.")
    turn = pending.turn.model_copy(update={"sources": sources})
    ctx.store.append_turn(ctx.run_id, turn)
    return turn


def run_conversations(ctx: RunContext, perspectives: list[Perspective]) -> list[ConversationResult]:
    """Seed 002 §2.4/§4.3: all perspectives in parallel, round by round; results in perspective
    order. Turns already stored for the run (a resume) are kept and not redone.

    An exception in any conversation propagates after the round's threads finish (the first in
    perspective order); nothing of that round after the failing conversation is committed.
    """
    stored = ctx.store.get_turns(ctx.run_id)
    histories: list[list[DialogueTurn]] = [[t for t in stored if t.perspective == p.name] for p in perspectives]
    memories: list[list[dict]] = [[] for _ in perspectives]
    ended: dict[int, str] = {}
    with ThreadPoolExecutor(max_workers=max(1, len(perspectives)), thread_name_prefix="conv") as pool:
        for round_no in range(1, ctx.config.max_turns + 1):
            todo = [i for i in range(len(perspectives)) if i not in ended and len(histories[i]) == round_no - 1]
            if not todo:
                continue
            ctx.check_cancel()
            focus_keys = round_focus(ctx, round_no)
            futures = [pool.submit(compute_turn, ctx, perspectives[i], histories[i], focus_keys, i) for i in todo]
            done = [(i, f.exception() or f.result()) for i, f in zip(todo, futures)]
            for i, outcome in done:
                if isinstance(outcome, BaseException):
                    raise outcome
                if outcome is None:
                    ended[i] = "thanks"
                    continue
                histories[i].append(commit_turn(ctx, outcome))
                memories[i] += outcome.memory
    results = []
    for i, p in enumerate(perspectives):
        ended_by = ended.get(i, "max_turns")
        ctx.emit("conversation.completed", {"perspective": p.name, "turns": len(histories[i]),
                                            "ended_by": ended_by, "working_memory_messages": len(memories[i])})
        results.append(ConversationResult(perspective=p, turns=histories[i], ended_by=ended_by))
    return results
