"""WikiWriter ↔ TopicExpert conversations, one per perspective, run in parallel (docs/design.md §
Simulated conversations; STORM paper §3.2).

Each turn: the writer asks (steered by the collector's ``next_focus``) and, with the litellm
engine, writes the search queries in the same call (otherwise the expert turns
the question into queries), the expert searches (every search is an offloaded tool call,
docs/design.md § Tool-result compression), answers with
``[n]`` citations grounded in the results, and every retrieved source that bears on a syllabus
question is saved to the collector with its questions (docs/design.md § Source collector). The writer ends with
"Thank you so much for your help!" or the turn cap stops it.

Scheduling, determinism and resume: each conversation runs in its own thread
and starts its next turn as soon as its previous one is computed — conversations never wait for
each other's turns (real LLM latency varies several-fold from call to call). What the old
lockstep rounds bought is kept by two rules:

* Commit order: computed turns are committed by the calling thread in (turn number, perspective)
  order — artifact files, ``save_source`` numbering (``src_NNN``), stored turns and events never
  depend on thread timing. A conversation computes ahead on its own uncommitted turns.
* Steering and grounding: turn r of every conversation is steered by the collector's
  ``next_focus`` as it was after every turn ``<= r-2`` was committed (turns 1 and 2: the
  coverage at the start), and its answer may draw only on the summary cards stored by then
  (``AnswerInput.known_cards``); both are stored per turn number in ``run:{id}:rounds`` (HSETNX)
  *before* any turn ``r-1`` is committed, so a resumed run steers exactly like the interrupted
  one. The one-turn slack is what lets a conversation run ahead of a slow one.

A resumed run rebuilds each conversation from its stored turns (a prefix of the commit order)
and redoes only unfinished turns.

Size: scheduling, deterministic steering and resume are one algorithm over the same turn
records; split, each part would need the others' invariants restated.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from research.engines.base import (
    THANKS,
    AnswerAssignInput,
    AnswerInput,
    AskInput,
    AssignOutput,
    QueryInput,
    TurnCard,
)
from research.errors import InvariantError
from research.evidence.passages import kept_for, result_evidence
from research.models import (
    ConversationResult,
    DialogueTurn,
    EvidencePassage,
    Perspective,
    SearchResult,
    TurnSource,
    now,
)
from research.pipeline.context import RunContext
from research.pipeline.recorders import DeferredRecorder, useful_messages
from research.text.findings import quote_rank
from research.text.frame_match import anchor_queries


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
    evidence: list[dict[str, list[EvidencePassage]]] = field(default_factory=list)
    keep_assigned: bool = False  # also save (unassigned, not counted) results the engine assigned


def counted_keys(ctx: RunContext, pending: PendingTurn, n: int) -> tuple[list[str], list[str]]:
    """``(counted, unsupported)`` question keys of result ``n`` (1-based): a key counts only when
    the result has an evidence passage for it (``research.evidence``). The extractive engine's
    keys are exactly those; a model's assignment keeps its keys that have a passage, and the
    others are ``unsupported`` (reported, not counted)."""
    ev = pending.evidence[n - 1] if len(pending.evidence) >= n else {}
    if ctx.engine.extractive:
        return [q.key for q in ctx.need_syllabus().questions if q.key in ev], []
    assigned = pending.assigned.relevant_questions if pending.assigned is not None else []
    model = assigned[n - 1] if len(assigned) >= n else []
    return [k for k in model if k in ev], [k for k in model if k not in ev]


def _save_sources(ctx: RunContext, pending: PendingTurn) -> list[TurnSource]:
    """Seed 000 ``save_source`` for each relevant result; returns the turn's numbered sources.
    Idempotent: a source saved before a crash is found by the collector's dedup."""
    if pending.assigned is None:
        return []
    sources = []
    for n, (res, excerpt) in enumerate(
        zip(pending.results, pending.assigned.key_excerpts, strict=False), start=1
    ):
        qkeys, unsupported = counted_keys(ctx, pending, n)
        assigned = pending.assigned.relevant_questions
        engine_keys = assigned[n - 1] if len(assigned) >= n else []
        if not qkeys and n not in pending.cited and not (pending.keep_assigned and engine_keys):
            continue
        saved = ctx.collector.save_source(
            source_type=res.source_type,
            external_id=res.external_id or res.doc_id,
            url=res.url,
            title=res.title,
            relevant_questions=qkeys,
            key_excerpts=excerpt or None,
            found_by=[f"{fb['backend']}: {fb['query']}" for fb in res.found_by],
        )
        if qkeys:
            ev = pending.evidence[n - 1]
            ctx.store.evidence(ctx.run_id).add(
                saved["source_id"],
                [
                    p.model_copy(update={"source_id": saved["source_id"]})
                    for k in qkeys
                    for p in ev[k]
                ],
                rank=lambda p: quote_rank(p.score, p.passage),
                limit=kept_for,
            )
        if unsupported:
            ctx.emit(
                "evidence.unsupported",
                {"source": saved["source_id"], "questions": unsupported},
            )
        sources.append(
            TurnSource(
                n=n,
                source_id=saved["source_id"],
                citation_id=saved["citation_id"],
                title=res.title,
                url=res.url,
                source_type=res.source_type,
                external_id=res.external_id,
                snippet=" ".join(res.snippets)[:600],
            )
        )
    return sources


def round_focus(ctx: RunContext, round_no: int) -> tuple[list[str], int | None]:
    """``(focus keys, cards count)`` for turn number ``round_no``: the collector's unmet
    questions, largest deficit first (``coverage_gaps``: ``next_focus`` uncapped, so that every
    conversation can take a different gap) and how many summary cards the run had stored, read on first use and stored
    (``RunStore.round_focus``, HSETNX) so a resumed run steers and grounds its turns exactly like
    the interrupted one. The caller decides when that is (``run_conversations``: before any turn
    ``round_no - 1`` is committed). Runs stored before turns recorded their cards kept the focus list alone
    (cards count None = all)."""
    value = ctx.store.round_focus(
        ctx.run_id,
        round_no,
        lambda: {
            "focus": ctx.collector.coverage_gaps(),
            "cards": ctx.store.count_cards(ctx.run_id),
        },
    )
    if isinstance(value, list):
        return value, None
    if not isinstance(value, dict):
        raise InvariantError("The stored snapshot: a focus list or {focus, cards}")
    return list(value["focus"]), int(value["cards"])


def focus_shift(slot: int, round_no: int, conversations: int) -> int:
    """How far conversation ``slot`` rotates the focus list at turn ``round_no``: by its slot, so
    that conversations running in parallel chase different coverage gaps, plus one turn's worth of
    conversations from turn 2 on. A turn's focus snapshot is read before the previous turn is
    committed (``run_conversations``), so its first gaps are the ones that previous turn was
    already chasing; without the extra shift the second turns repeat the first turns' questions."""
    return slot + (conversations if round_no >= 2 else 0)


def _focus(ctx: RunContext, focus_keys: list[str], shift: int) -> list:
    """``focus_keys`` rotated left by ``shift`` (``focus_shift``)."""
    qkeys = list(focus_keys)
    if qkeys:
        shift = shift % len(qkeys)
        qkeys = qkeys[shift:] + qkeys[:shift]
    if ctx.syllabus is None:
        raise InvariantError("Planned before the conversations")
    return [q for q in (ctx.syllabus.get(k) for k in qkeys) if q is not None]


def compute_turn(
    ctx: RunContext,
    perspective: Perspective,
    history: list[DialogueTurn],
    focus_keys: list[str],
    slot: int = 0,
    known_cards: int | None = None,
    shift: int | None = None,
) -> PendingTurn | None:
    """One dialogue turn, computed but not committed; None when the writer says thanks.

    Thread-safe: writes nothing (tool outputs are compressed and queued). ``slot``: the
    conversation's index; its tool calls get ids ``conv{slot}.t{turn}.{n}``. ``known_cards``:
    how many of the run's stored cards the answer may use (None = all). ``shift``: rotation of
    ``focus_keys`` (``focus_shift``; default ``slot``).
    """
    started = now()
    turn_number = len(history) + 1
    recorder = DeferredRecorder(ctx.need_artifacts(), f"conv{slot}.t{turn_number}")
    ask = ctx.engine.ask_question(
        AskInput(
            topic=ctx.config.topic,
            perspective=perspective,
            history=history,
            next_focus=_focus(ctx, focus_keys, slot if shift is None else shift),
            max_turns=ctx.config.max_turns,
        )
    )
    if THANKS.lower() in ask.question.lower():
        return None
    focus = [ask.focus_question] if ask.focus_question else []
    queries = [q for q in ask.queries if q.strip()][:3] or ctx.engine.question_to_queries(
        QueryInput(topic=ctx.config.topic, question=ask.question, perspective=perspective)
    ).queries[:3]
    queries = anchor_queries(queries, ctx.config.topic)  # both arms and the population, always
    seen = {s.url for t in history for s in t.sources}  # the writer wants new information
    return research_turn(
        ctx,
        perspective,
        ask.question,
        queries,
        focus,
        recorder=recorder,
        turn_number=turn_number,
        exclude=seen,
        known_cards=known_cards,
        started=started,
    )


def research_turn(
    ctx: RunContext,
    perspective: Perspective,
    question: str,
    queries: list[str],
    focus: list[str],
    *,
    recorder: DeferredRecorder,
    turn_number: int,
    exclude: set[str],
    known_cards: int | None,
    started: float,
) -> PendingTurn:
    """The expert's half of a turn: search each query (tool calls deferred on ``recorder``;
    ``exclude``: URLs not to return), judge each result's evidence passages, answer with
    citations and assign questions. Writes nothing."""
    tctx = ctx.recording(recorder)  # the turn's tool calls: compressed now, written on commit
    step = ctx.step_for(" ".join([question, *focus]))
    results: list[SearchResult] = []
    memory: list[dict] = []
    seen = set(exclude)
    ctx.prime_searches(queries)
    for q in queries:
        ctx.check_cancel()
        results += tctx.search(q, step, perspective=perspective.name, memory=memory, exclude=seen)
        seen |= {r.url for r in results}
    results = _dedupe(results)
    evidence = result_evidence(
        ctx.vectors(), ctx.need_syllabus().questions, ctx.config.topic, results
    )
    out = ctx.engine.answer_and_assign(
        AnswerAssignInput(
            answer=AnswerInput(
                topic=ctx.config.topic,
                question=question,
                results=results,
                known_cards=known_cards,
                # compression in the background: the answer does not wait for the turn's cards
                turn_cards=[] if recorder.background else turn_cards(recorder),
            ),
            syllabus=ctx.syllabus,
            focus=focus,
            # the judgement's best sentence per question: the model decides which answer
            evidence=[{k: ps[0].passage for k, ps in ev.items() if ps} for ev in evidence],
        )
    )
    answer, assigned = out.answer, out.assigned
    turn = DialogueTurn(
        perspective=perspective.name,
        turn_number=turn_number,
        question=question,
        answer=answer.answer,
        search_queries=queries,
        sources=[],
        focus_questions=focus,
        started_at=started,
        ended_at=now(),
    )
    return PendingTurn(
        turn=turn,
        results=results,
        assigned=assigned,
        cited=set(answer.cited),
        recorder=recorder,
        memory=memory,
        evidence=evidence,
    )


def turn_cards(recorder: DeferredRecorder) -> list[TurnCard]:
    """The summary cards of the turn's searches so far (compressed, not yet stored), in call
    order: the answer reads them instead of long snippets."""
    return [TurnCard(query=call.tool_input, card=call.card) for call, _ in recorder.calls]


def commit_turn(ctx: RunContext, pending: PendingTurn) -> DialogueTurn:
    """Write the turn's tool calls, save its sources (docs/design.md § Source collector) and store the turn."""
    pending.recorder.commit()
    pending.memory[:] = useful_messages(pending.memory)
    sources = _save_sources(ctx, pending)
    kept = {s.n for s in sources}
    # cited results are always kept (see _save_sources), so every [n] in the answer resolves
    if not pending.cited <= kept:
        raise InvariantError(
            f"The answer cites {sorted(pending.cited - kept)} with no saved source."
        )
    turn = pending.turn.model_copy(update={"sources": sources})
    ctx.store.append_turn(ctx.run_id, turn)
    return turn


def provisional(ctx: RunContext, pending: PendingTurn) -> DialogueTurn:
    """The turn as its own conversation sees it before it is committed: the URLs of the
    results that will become its sources (the same rule as ``_save_sources``), no collector ids
    yet. Engines read questions, answers and source URLs from a history, never collector ids."""
    sources = []
    if pending.assigned is not None:
        for n, res in enumerate(pending.results, start=1):
            if counted_keys(ctx, pending, n)[0] or n in pending.cited:
                sources.append(
                    TurnSource(
                        n=n,
                        source_id="",
                        title=res.title,
                        url=res.url,
                        source_type=res.source_type,
                        external_id=res.external_id,
                    )
                )
    return pending.turn.model_copy(update={"sources": sources})


class _Schedule:
    """Hand-over between conversation threads and the committing thread: steering focus per
    turn number (published by the committer) and computed turns per (turn number, slot)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._focus: dict[int, tuple[list[str], int | None]] = {}
        self._done: dict[tuple[int, int], object] = {}
        self.stopped = False

    def publish_focus(self, round_no: int, focus: tuple[list[str], int | None]) -> None:
        with self._cond:
            self._focus[round_no] = focus
            self._cond.notify_all()

    def focus(self, round_no: int) -> tuple[list[str], int | None] | None:
        """Wait for turn ``round_no``'s ``(focus keys, cards count)``; None when stopped."""
        with self._cond:
            self._cond.wait_for(lambda: round_no in self._focus or self.stopped)
            return None if self.stopped else self._focus[round_no]

    def put(self, round_no: int, slot: int, outcome: object) -> None:
        with self._cond:
            self._done[(round_no, slot)] = outcome
            self._cond.notify_all()

    def take(self, round_no: int, slot: int) -> object:
        with self._cond:
            self._cond.wait_for(lambda: (round_no, slot) in self._done)
            return self._done.pop((round_no, slot))

    def stop(self) -> None:
        with self._cond:
            self.stopped = True
            self._cond.notify_all()


def _converse(
    ctx: RunContext,
    perspective: Perspective,
    history: list[DialogueTurn],
    slot: int,
    sched: _Schedule,
    conversations: int = 1,
) -> None:
    """One conversation's thread: compute its turns one after another (each as soon as the
    previous one is computed and its focus is published) and hand them to the committer.
    Ends at thanks (hands over None), at the turn cap, on an exception (handed over) or stop."""
    history = list(history)
    for round_no in range(len(history) + 1, ctx.config.max_turns + 1):
        snapshot = sched.focus(round_no)
        if snapshot is None:
            return
        try:
            ctx.check_cancel()
            pending = compute_turn(
                ctx,
                perspective,
                history,
                snapshot[0],
                slot,
                known_cards=snapshot[1],
                shift=focus_shift(slot, round_no, conversations),
            )
        except BaseException as exc:
            sched.put(round_no, slot, exc)
            return
        sched.put(round_no, slot, pending)
        if pending is None:
            return
        history.append(provisional(ctx, pending))


def run_conversations(ctx: RunContext, perspectives: list[Perspective]) -> list[ConversationResult]:
    """Seed 002 §2.4/§4.3: all perspectives in parallel, each at its own pace (see the module
    docstring); results in perspective order. Turns already stored for the run (a resume) are
    kept and not redone.

    An exception in any conversation propagates when its turn comes up in commit order (the
    first in that order); nothing after it is committed, and the other conversations stop after
    their current turn.
    """
    stored = ctx.store.get_turns(ctx.run_id)
    histories: list[list[DialogueTurn]] = [
        [t for t in stored if t.perspective == p.name] for p in perspectives
    ]
    memories: list[list[dict]] = [[] for _ in perspectives]
    ended: dict[int, str] = {}
    max_turns = ctx.config.max_turns
    sched = _Schedule()
    for r in (1, 2):  # turns 1 and 2 are steered by the coverage at the start
        if r <= max_turns:
            sched.publish_focus(r, round_focus(ctx, r))
    with ThreadPoolExecutor(
        max_workers=max(1, len(perspectives)), thread_name_prefix="conv"
    ) as pool:
        for i, p in enumerate(perspectives):
            pool.submit(_converse, ctx, p, histories[i], i, sched, len(perspectives))
        try:
            for round_no in range(1, max_turns + 1):
                for i in range(len(perspectives)):
                    if i in ended or len(histories[i]) >= round_no:
                        continue  # ended, or committed before an interruption
                    outcome = sched.take(round_no, i)
                    if isinstance(outcome, BaseException):
                        raise outcome
                    if outcome is None:
                        ended[i] = "thanks"
                        continue
                    if not isinstance(outcome, PendingTurn):
                        raise InvariantError("A taken turn is a PendingTurn")
                    histories[i].append(commit_turn(ctx, outcome))
                    memories[i] += outcome.memory
                if (
                    round_no + 2 <= max_turns
                ):  # every turn <= round_no is committed: steer round_no + 2
                    sched.publish_focus(round_no + 2, round_focus(ctx, round_no + 2))
        finally:
            sched.stop()
    results = []
    for i, p in enumerate(perspectives):
        ended_by = ended.get(i, "max_turns")
        ctx.emit(
            "conversation.completed",
            {
                "perspective": p.name,
                "turns": len(histories[i]),
                "ended_by": ended_by,
                "working_memory_messages": len(memories[i]),
            },
        )
        results.append(ConversationResult(perspective=p, turns=histories[i], ended_by=ended_by))
    return results
