"""Research until answered: gap turns for the syllabus questions still unmet after the planned
conversations (docs/design.md § Completion: ``check_completion`` → ``finalize_sources`` is the loop's stop rule).

After the planned turns, while ``check_completion`` is not ready, each round searches for every
unmet question (``coverage_gaps``) with up to ``QUERIES_PER_ROUND`` new queries built from its
label, description and facets (the litellm engine's asker writes them), until the question is
met or the gap budget ends: ``RunConfig.gap_turns`` rounds (default 2) and at most
``MAX_GAP_QUERIES`` queries per question. Each search is a recorded tool call with its card and
artifact (docs/design.md § Tool-result compression), and each found source counts only with an evidence passage.

A gap turn is a dialogue turn of the conversation "Gap search" (turn number = the planned
turns + the round, focus = the question), so the Conversations page shows it and a resumed run finds it. Determinism and
resume follow the conversations' rules: a round's unmet questions, their queries and the cards
count are stored before any of its turns is committed (``RunStore.round_focus``, HSETNX under
``gap{round}``), turns are computed in parallel and committed in syllabus order, and turns
already stored are not redone.

The result, per question, is why research stopped (``QuestionStop.reason``): "met in the
planned conversations", "met after 3 gap queries", "no new evidence after 6 gap queries",
stored as the run document ``gaps`` and emitted as ``gap.question`` events.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from research.engines.base import AskInput
from research.errors import InvariantError
from research.evidence.judge import facets
from research.models import (
    ConversationResult,
    DialogueTurn,
    GapReport,
    Perspective,
    Question,
    QuestionStop,
    Syllabus,
    now,
)
from research.pipeline.context import RunContext
from research.pipeline.conversation import PendingTurn, commit_turn, research_turn
from research.pipeline.recorders import DeferredRecorder
from research.text import content_words, subject_of, word_key
from research.text.frame import frame_question
from research.text.frame_match import anchor_queries

GAP_PERSPECTIVE = Perspective(
    name="Gap search",
    focus="searches aimed at the syllabus questions still unanswered after the conversations",
)
QUERIES_PER_ROUND = 3
MAX_GAP_QUERIES = 6


def gap_queries(
    ctx: RunContext, q: Question, round_no: int, asked: dict[str, str] | None = None
) -> list[str]:
    """Up to ``QUERIES_PER_ROUND`` queries for question ``q`` in gap round ``round_no`` (1-based),
    never more than ``MAX_GAP_QUERIES`` over all rounds. Extractive: the subject plus the
    question's label, then each facet in turn. litellm: the asker writes them (one
    ``ask_question`` call steered at the question, with this round's facets as its perspective's
    questions), falling back to the extractive queries when it writes none."""
    asked = {} if asked is None else asked
    first = (round_no - 1) * QUERIES_PER_ROUND
    if first >= MAX_GAP_QUERIES:
        return []
    n = min(QUERIES_PER_ROUND, MAX_GAP_QUERIES - first)
    aspects = [q.label, *facets(q)]
    chosen = aspects[first : first + n] or aspects[:n]
    if not ctx.engine.extractive:  # the asker writes the queries, as in a turn
        ask = ctx.engine.ask_question(
            AskInput(
                topic=ctx.config.topic,
                perspective=GAP_PERSPECTIVE.model_copy(
                    update={"questions": [f"{q.label}: {'; '.join(chosen)}"]}
                ),
                history=[],
                next_focus=[q],
                max_turns=ctx.config.max_turns,
            )
        )
        queries = anchor_queries(
            [x.strip() for x in ask.queries if x.strip()][:n], ctx.config.topic
        )
        if queries:
            asked[q.key] = ask.question  # the turn asks what the asker wrote
            return queries
    frame = frame_question(ctx.config.topic)
    if frame.framed:  # the question's own terms, then what the unmet question asks
        core = frame.query_core(6)
        own = {word_key(w) for w in core.split()}
        return [
            " ".join([core, *[w for w in content_words(a) if word_key(w) not in own][:4]])
            for a in chosen
        ]
    subject = subject_of(ctx.config.topic)
    # the question the analyst asked names its subject already: not twice in one query
    own = {word_key(w) for w in subject.split()}
    return [
        " ".join([subject, *[w for w in content_words(a) if word_key(w) not in own]])
        if own & {word_key(w) for w in a.split()}
        else f"{subject} {a}"
        for a in chosen
    ]


def _question_text(q: Question) -> str:
    return f"What do sources report on {q.label.lower()} ({q.description.rstrip('?. ')})?"


def _snapshot(ctx: RunContext, round_no: int) -> dict:
    """The round's unmet questions, their queries and the cards count, stored once."""

    def compute() -> dict:
        unmet = ctx.collector.coverage_gaps()
        order = {q.key: i for i, q in enumerate(ctx.need_syllabus().questions)}
        unmet = sorted(unmet, key=lambda k: order.get(k, len(order)))
        syllabus = ctx.need_syllabus()
        questions: dict[str, str] = {}
        queries = {k: gap_queries(ctx, _question(syllabus, k), round_no, questions) for k in unmet}
        return {
            "focus": [k for k in unmet if queries[k]],
            "queries": {k: v for k, v in queries.items() if v},
            "questions": questions,
            "cards": ctx.store.count_cards(ctx.run_id),
            "sources": len(ctx.collector.all_sources()),
        }

    snap = ctx.store.round_focus(ctx.run_id, f"gap{round_no}", compute)
    if not isinstance(snap, dict):
        raise InvariantError(f"gap round {round_no} of run {ctx.run_id} has no stored snapshot")
    return snap


def _question(syllabus: Syllabus, key: str) -> Question:
    q = syllabus.get(key)
    if q is None:
        raise InvariantError(f"question {key!r} is not in syllabus {syllabus.name!r}")
    return q


def _compute(
    ctx: RunContext,
    key: str,
    queries: list[str],
    round_no: int,
    cards: int,
    exclude: set[str],
    question: str | None = None,
) -> PendingTurn:
    q = _question(ctx.need_syllabus(), key)
    recorder = DeferredRecorder(ctx.need_artifacts(), f"gap.r{round_no}.{key}")
    return research_turn(
        ctx,
        GAP_PERSPECTIVE,
        question or _question_text(q),
        queries,
        [key],
        recorder=recorder,
        turn_number=ctx.config.max_turns + round_no,
        exclude=exclude,
        known_cards=cards,
        started=now(),
    )


def fill_gaps(ctx: RunContext) -> tuple[ConversationResult | None, GapReport]:
    """Run the gap rounds (module docstring); returns the "Gap search" conversation (None when
    no gap turn was needed or allowed) and the stop reason of every question."""
    met_before = set(ctx.need_syllabus().keys()) - set(ctx.collector.coverage_gaps())
    if ctx.config.gap_turns:  # as it was before the first gap turn, also when resumed after it
        met_before = set(ctx.need_syllabus().keys()) - set(_snapshot(ctx, 1)["focus"])
    stored = [t for t in ctx.store.get_turns(ctx.run_id) if t.perspective == GAP_PERSPECTIVE.name]
    turns: list[DialogueTurn] = list(stored)
    asked: dict[str, list[str]] = {}
    rounds = 0
    for round_no in range(1, ctx.config.gap_turns + 1):
        ctx.check_cancel()
        snap = _snapshot(ctx, round_no)
        if not snap["focus"]:
            break
        rounds = round_no
        for k in snap["focus"]:
            asked.setdefault(k, []).extend(snap["queries"][k])
        ctx.emit(
            "gap.round",
            {"round": round_no, "questions": snap["focus"], "queries": snap["queries"]},
        )
        number = ctx.config.max_turns + round_no  # gap turns follow the planned ones
        done = {t.focus_questions[0] for t in stored if t.turn_number == number}
        todo = [k for k in snap["focus"] if k not in done]
        # the sources saved before the round: a resumed round searches exactly like the first try
        exclude = {s.url for s in ctx.collector.all_sources()[: int(snap["sources"])]}
        with ThreadPoolExecutor(
            max_workers=max(1, min(4, len(todo))), thread_name_prefix="gap"
        ) as pool:
            futures = [
                pool.submit(
                    _compute,
                    ctx,
                    k,
                    snap["queries"][k],
                    round_no,
                    int(snap["cards"]),
                    exclude,
                    snap.get("questions", {}).get(k),
                )
                for k in todo
            ]
            for fut in futures:  # committed in syllabus order, whatever finished first
                turns.append(commit_turn(ctx, fut.result()))
    report = _stops(ctx, met_before, asked, rounds)
    ctx.store.put_doc(ctx.run_id, "gaps", report)
    for stop in report.questions:
        ctx.emit(
            "gap.question",
            {
                "key": stop.key,
                "met": stop.met,
                "reason": stop.reason,
                "gap_queries": len(stop.gap_queries),
            },
        )
    conv = (
        ConversationResult(perspective=GAP_PERSPECTIVE, turns=turns, ended_by="max_turns")
        if turns
        else None
    )
    return conv, report


def _stops(
    ctx: RunContext, met_before: set[str], asked: dict[str, list[str]], rounds: int
) -> GapReport:
    counts = ctx.collector.question_counts()
    out = []
    for q in ctx.need_syllabus().questions:
        n, queries = counts.get(q.key, 0), asked.get(q.key, [])
        met = n >= q.min_sources
        if q.key in met_before:
            reason = "met in the planned conversations"
        elif met:
            reason = f"met after {len(queries)} gap {'query' if len(queries) == 1 else 'queries'}"
        elif not ctx.config.gap_turns:
            reason = f"{n} of {q.min_sources} sources with evidence; gap searches were off"
        elif n == 0:
            reason = f"no source with evidence after {len(queries)} gap queries"
        else:
            reason = (
                f"{n} of {q.min_sources} sources with evidence after {len(queries)} gap queries"
            )
        out.append(QuestionStop(key=q.key, met=met, reason=reason, gap_queries=queries))
    return GapReport(rounds=rounds, ready=all(s.met for s in out), questions=out)
