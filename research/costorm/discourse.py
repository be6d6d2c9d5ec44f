"""Round-table turns (docs/design.md § Experts and intents; Co-STORM paper §3.2–3.3).

Expert answer turn: queries → retrieve through ``RunContext.search`` (every call is an
offloaded tool call with a summary card, docs/design.md § Tool-result compression) → filter (the
engine keeps the relevant sentences) → cited response → polish → sources to the collector
(docs/design.md § Source collector) → cited information into the mind map; uncited results go to
the unused-information pool for the moderator. Expert question turn: question → polish. Moderator
turn: rerank the unused pool (α formula) → question from the top items → polish → participant-list
update. Analyst turn: the queued message as an ``original_question``.

Each function returns the new ``CoStormTurn`` and updates ``session`` (map, pool, counters)
in memory; the pipeline commits both together (``state.commit``).
"""

from __future__ import annotations

from dataclasses import dataclass

from research import citations
from research.costorm import moderator
from research.costorm.mindmap import MindItem, Similarity
from research.costorm.state import Session
from research.engines.base import AssignInput
from research.engines.costorm_steps import (
    CoStormSteps,
    ExpertAnswerInput,
    ExpertQuestionInput,
    ExpertUpdateInput,
    ModeratorInput,
    PoolItem,
    TurnQueryInput,
    UtteranceInput,
)
from research.errors import InvariantError
from research.evidence import passages
from research.evidence.passages import kept_for, result_evidence
from research.models import CoStormTurn, Intent, Perspective, SearchResult, TurnSource, now
from research.pipeline.context import RunContext
from research.planning.question_roles import BOTH_ARMS
from research.text import split_sentences
from research.text.findings import quote_rank
from research.text.frame_match import anchor_queries

MAX_QUERIES_PER_TURN = 3
POOL_TEXT_CHARS = 600


@dataclass
class Table:
    """What every turn needs: the run context, the engine's Co-STORM steps, the embeddings and
    the loaded session."""

    ctx: RunContext
    steps: CoStormSteps
    vectors: Similarity
    session: Session

    @property
    def topic(self) -> str:
        return self.ctx.config.topic

    @property
    def settings(self):
        return self.ctx.config.costorm


def last_question(session: Session) -> str:
    """The most recent question in the discourse (the topic's own when none was asked)."""
    for t in reversed(session.turns):
        if t.intent in ("original_question", "information_request"):
            return t.question or t.utterance
    return ""


def thread_urls(session: Session) -> set[str]:
    """URLs cited since the last question turn (the current thread of answers)."""
    urls: set[str] = set()
    for t in reversed(session.turns):
        if t.intent in ("original_question", "information_request"):
            break
        urls |= {x.url for x in t.sources}
    return urls


def on_question(ctx: RunContext, results: list[SearchResult], topic: str) -> list[SearchResult]:
    """The results an expert may speak from, so the mind map's concepts come from information
    on the question: those a STORM turn's evidence would keep (``passages.on_question``: for a
    framed question an arm, what it is for and the setting; no title for the opposite setting;
    about the topic or titled close to it)."""
    keep = passages.on_question(ctx.vectors(), topic, results)
    return [r for r, on in zip(results, keep, strict=True) if on]


def _dedupe(results: list[SearchResult]) -> list[SearchResult]:
    seen: set[str] = set()
    out = []
    for r in results:
        if (r.doc_id or r.url) not in seen:
            seen.add(r.doc_id or r.url)
            out.append(r)
    return out


def save_sources(
    ctx: RunContext, question: str, results: list[SearchResult], cited: set[int]
) -> list[TurnSource]:
    """Seed 000 ``save_source`` for every cited result and every result bearing on a syllabus
    question, with the evidence judgement's passages of each saved result
    (``passages.result_evidence``, kept per question as a STORM turn keeps them: ``kept_for``);
    returns the turn's numbered sources (n = result number). A question that compares the arms
    of a comparison (``planning.question_roles.BOTH_ARMS``) counts a result only when the judgement finds
    a passage of it for that question, as in a STORM turn (``pipeline.conversation
    .counted_keys``); the others count the engine's assignment (counting only the judgement's
    keys there too steered the experts away from what they found: on the unseen question set,
    recall of the directly relevant documents fell from 0.85 to 0.72)."""
    if not results:
        return []
    assigned = ctx.engine.assign_questions(
        AssignInput(syllabus=ctx.syllabus, question=question, focus=[], results=results)
    )
    out = []
    for n, (res, qkeys, excerpt) in enumerate(
        zip(results, assigned.relevant_questions, assigned.key_excerpts, strict=False), start=1
    ):
        if not qkeys and n not in cited:
            continue
        # the judgement's passages of the saved result, kept as a STORM turn keeps them: the
        # report's section on the primary question quotes them
        judged = (
            result_evidence(ctx.vectors(), ctx.syllabus.questions, ctx.config.topic, [res])[0]
            if ctx.syllabus is not None
            else {}
        )
        # a question that compares the arms counts only a source that compares them (the
        # judgement's rule, ``passages.compares``): a trial of one arm against a third answers
        # no "A versus B"
        counted = [k for k in qkeys if k not in BOTH_ARMS or k in judged]
        saved = ctx.collector.save_source(
            source_type=res.source_type,
            external_id=res.external_id or res.doc_id,
            url=res.url,
            title=res.title,
            relevant_questions=counted,
            key_excerpts=excerpt or None,
        )
        passages = [
            p.model_copy(update={"source_id": saved["source_id"]})
            for ps in judged.values()
            for p in ps
        ]
        if passages:
            ctx.store.evidence(ctx.run_id).add(
                saved["source_id"],
                passages,
                rank=lambda p: quote_rank(p.score, p.passage),
                limit=kept_for,
            )
        out.append(
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
    return out


def _resolve(utterance: str, sources: list[TurnSource]) -> str:
    """Drop ``[n]`` markers that have no saved source (so every citation in a turn resolves)."""
    have = {s.n for s in sources}
    return citations.LOCAL_RE.sub(
        lambda m: m.group(0) if int(m.group(1)) in have else "", utterance
    ).strip()


def insert_cited(
    table: Table,
    utterance: str,
    sources: list[TurnSource],
    question: str,
    turn: int,
    last_sentence: bool = False,
) -> list[str]:
    """Each cited span of ``utterance`` becomes a mind-map item (one per citation); with
    ``last_sentence`` only the sentence right before the citation (a moderator's quote).
    Returns the distinct node paths they landed in."""
    by_n = {s.n: s for s in sources}
    paths: list[str] = []
    for span, nums in citations.cited_spans(utterance):
        if last_sentence:
            span = (split_sentences(span, min_words=1) or [span])[-1]
        for n in dict.fromkeys(nums):
            src = by_n.get(n)
            if src is None:
                continue
            item = MindItem(
                id=0,
                text=span,
                source_id=src.source_id,
                title=src.title,
                url=src.url,
                question=question,
                turn=turn,
            )
            path = table.session.mindmap.add_item(
                item, question or span, table.steps, table.vectors, table.settings.max_node_items
            )
            if path not in paths:
                paths.append(path)
    return paths


def _whole_sentences(text: str, max_chars: int) -> str:
    """Leading whole sentences of ``text`` up to ``max_chars`` (at least the first, clipped)."""
    out: list[str] = []
    for sent in split_sentences(text, min_words=1):
        if out and len(" ".join([*out, sent])) > max_chars:
            break
        out.append(sent)
    return " ".join(out)[: max_chars * 2]


def _pool_unused(
    table: Table, results: list[SearchResult], cited: set[int], question: str, turn: int
) -> None:
    for n, r in enumerate(results, start=1):
        if n in cited or r.url in table.session.cited_urls:
            continue
        text = _whole_sentences(" ".join(r.snippets) or r.text, POOL_TEXT_CHARS)
        if text.strip():
            table.session.pool.append(
                PoolItem(
                    text=text,
                    question=question,
                    turn=turn,
                    result=r.model_copy(update={"text": ""}),
                )
            )


def answer_turn(
    table: Table, expert: Perspective, intent: Intent, question: str, *, warm: bool = False
) -> CoStormTurn:
    """An expert's ``potential_answer`` / ``further_details`` turn (see module docstring). The
    queries are cut to the run's remaining query budget."""
    ctx, s = table.ctx, table.session
    started, number = now(), len(s.turns) + 1
    question = question or f"What are the key facts about {table.topic}?"
    left = max(0, table.settings.query_budget - s.meta.queries_used)
    queries = table.steps.turn_queries(
        TurnQueryInput(
            topic=table.topic, expert=expert, intent=intent, question=question, history=s.turns
        )
    ).queries
    queries = anchor_queries(queries[: min(MAX_QUERIES_PER_TURN, left)] or queries[:1], table.topic)
    step = ctx.step_for(question)
    results: list[SearchResult] = []
    seen = thread_urls(s)  # further details bring new sources, not the ones just cited
    for q in queries:
        ctx.check_cancel()
        results += ctx.search(q, step, perspective=expert.name, exclude=seen)
        seen |= {r.url for r in results}
        s.meta.queries_used += 1
    results = on_question(ctx, _dedupe(results), table.topic)
    answer = table.steps.expert_answer(
        ExpertAnswerInput(
            topic=table.topic,
            expert=expert,
            intent=intent,
            question=question,
            history=s.turns,
            results=results,
        )
    )
    cited = {int(n) for n in citations.LOCAL_RE.findall(answer.answer)} | set(answer.cited)
    sources = save_sources(ctx, question, results, cited)
    polished = table.steps.polish_utterance(
        UtteranceInput(
            topic=table.topic,
            role=expert.name,
            intent=intent,
            utterance=answer.answer,
            history=s.turns,
        )
    ).text
    utterance = _resolve(polished or answer.answer, sources)
    used = {int(n) for n in citations.LOCAL_RE.findall(utterance)}
    _pool_unused(table, results, used, question, number)
    paths = insert_cited(table, utterance, sources, question, number)
    return CoStormTurn(
        turn_number=number,
        role=expert.name,
        kind="expert",
        intent=intent,
        utterance=utterance,
        question=question,
        queries=queries,
        sources=sources,
        mind_map_nodes=paths,
        warm_start=warm,
        started_at=started,
        ended_at=now(),
    )


def question_turn(table: Table, expert: Perspective, intent: Intent) -> CoStormTurn:
    """An expert's ``information_request`` / ``original_question`` turn, steered by the
    collector's uncovered syllabus questions (docs/design.md § Source collector: ``next_focus``)."""
    s, started = table.session, now()
    focus_keys = table.ctx.collector.get_progress().get("next_focus", [])
    syllabus = table.ctx.syllabus
    if syllabus is None:
        raise InvariantError("Planned before the round table")
    focus = [q for q in (syllabus.get(k) for k in focus_keys) if q is not None]
    text = table.steps.expert_question(
        ExpertQuestionInput(
            topic=table.topic, expert=expert, intent=intent, history=s.turns, next_focus=focus
        )
    ).text
    text = (
        table.steps.polish_utterance(
            UtteranceInput(
                topic=table.topic, role=expert.name, intent=intent, utterance=text, history=s.turns
            )
        ).text
        or text
    )
    return CoStormTurn(
        turn_number=len(s.turns) + 1,
        role=expert.name,
        kind="expert",
        intent=intent,
        utterance=text,
        started_at=started,
        ended_at=now(),
    )


def moderator_turn(table: Table) -> CoStormTurn:
    """Seed 004 moderator: rerank unused information since its last turn (α), a question from
    the top items (cited), polish, participant-list update. Used items leave the pool."""
    ctx, s, started = table.ctx, table.session, now()
    number = len(s.turns) + 1
    items = moderator.top_items(s.pool, s.turns, table.topic, table.settings.alpha, table.vectors)
    out = table.steps.moderator_question(
        ModeratorInput(
            topic=table.topic, items=items, concepts=s.mindmap.node_names(), history=s.turns
        )
    )
    results = [i.result for i in items]
    cited = {n for n in out.cited if 1 <= n <= len(items)} | {
        int(n) for n in citations.LOCAL_RE.findall(out.question) if 1 <= int(n) <= len(items)
    }
    sources = save_sources(ctx, out.question, results, cited)
    polished = (
        table.steps.polish_utterance(
            UtteranceInput(
                topic=table.topic,
                role=moderator.MODERATOR,
                intent="original_question",
                utterance=out.question,
                history=s.turns,
            )
        ).text
        or out.question
    )
    utterance = _resolve(polished, sources)
    used_urls = {items[n - 1].result.url for n in cited}
    s.pool = [p for p in s.pool if p.result.url not in used_urls]
    question = out.question_only or utterance
    paths = insert_cited(table, utterance, sources, question, number, last_sentence=True)
    before = [e.name for e in s.meta.experts]
    s.meta.experts = (
        table.steps.update_experts(
            ExpertUpdateInput(
                topic=table.topic,
                experts=s.meta.experts,
                question=utterance,
                n=table.settings.experts,
            )
        ).perspectives
        or s.meta.experts
    )
    after = [e.name for e in s.meta.experts]
    if after != before:
        ctx.emit("costorm.experts_updated", {"experts": after})
    return CoStormTurn(
        turn_number=number,
        role=moderator.MODERATOR,
        kind="moderator",
        intent="original_question",
        utterance=utterance,
        question=question,
        sources=sources,
        mind_map_nodes=paths,
        started_at=started,
        ended_at=now(),
    )


def analyst_turn(table: Table, message: str) -> CoStormTurn:
    """The analyst's queued message as an ``original_question`` turn."""
    return CoStormTurn(
        turn_number=len(table.session.turns) + 1,
        role="Analyst",
        kind="analyst",
        intent="original_question",
        utterance=message,
    )
