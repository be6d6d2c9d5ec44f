"""``LiteLLMCoStorm``: the Co-STORM steps (``research.engines.costorm_steps.CoStormSteps``,
docs/design.md § Co-STORM round-table; Co-STORM paper §3 and appendix B) through litellm, for runs
with ``--engine litellm``.

One prompt template per step in ``prompts/costorm_*.md`` (our wording, the paper's intent);
structured output, ``<think>`` stripping and the one re-ask come from ``structured.py``; calls,
accounting (phase = run status, role, model, step), budgets and record/replay from the
engine's ``LLMSession``, exactly as for the STORM steps. Roles reuse the engine's role names
(``research.llm.models.ROLES``): experts' steps → ``expert``, the moderator's question and the
experts' questions → ``question_asker``, panel generation/updates → ``planner``, mind-map
placement and subtopics → ``outline``, polishing → ``polish`` (each step's declaration in
``research.engines.steps``: role, reply model, prompt file, cassette key).

Fallbacks as in ``LiteLLMEngine``: budget exhausted, a reply still invalid after the re-ask,
or a provider failing after retries → that step is answered by ``ExtractiveCoStorm`` (and an
``llm.fallback`` event says so); auth errors and replay misses are raised. Replies are
sanitised: citation numbers outside the material dropped, list lengths fixed, placements
mapped back to the offered candidates, intents kept consistent with the discourse.

Size: one method per Co-STORM step, each a prompt, its reply model and its fallback, like
``LiteLLMEngine``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from research.engines.base import AnswerInput, AnswerOutput, PersonaList, QueryList, TextOutput
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
from research.engines.litellm import material as mat
from research.engines.litellm.engine import LiteLLMEngine
from research.engines.litellm.runner import READ_ARTIFACT_TOOL
from research.engines.litellm.sanitise import CITE_RE, _keep_cites
from research.engines.litellm.weak import usable_queries
from research.engines.replies import PlacementReply
from research.llm.errors import InvalidOutput
from research.llm.tokens import count_tokens
from research.models import QUESTION_INTENTS, CoStormTurn, Perspective

if TYPE_CHECKING:
    from research.engines.extractive.costorm import ExtractiveCoStorm

HISTORY_TURNS = 8  # most recent turns shown to the model
UTTERANCE_CHARS = 400  # per turn in the history material
ITEM_CHARS = 400  # per moderator item / subtopic item
MAX_SUBTOPIC_ITEMS = (
    40  # items shown to the subtopics step (a bigger concept is re-inserted item by item)
)
SEP = " > "


def history(turns: list[CoStormTurn], k: int = HISTORY_TURNS) -> list[dict]:
    """The last ``k`` turns as ``{turn, role, intent, utterance}`` (utterances clipped)."""
    return [
        {
            "turn": t.turn_number,
            "role": t.role,
            "intent": t.intent,
            "utterance": t.utterance[:UTTERANCE_CHARS],
        }
        for t in turns[-k:]
    ]


def expert(p: Perspective) -> dict:
    return {"name": p.name, "focus": p.focus}


class LiteLLMCoStorm:
    """``CoStormSteps`` for the litellm engine (``name = "litellm"``, ``label`` = the engine's).

    Args:
        engine: the run's ``LiteLLMEngine`` (its session, store, run id and extractive fallback).
    """

    name = "litellm"

    def __init__(self, engine: LiteLLMEngine) -> None:
        self.engine = engine
        self.label = engine.label
        self._fallback_steps: ExtractiveCoStorm | None = None

    @property
    def vectors(self):
        """The fallback extractive engine's embeddings (the mind map and moderator rerank use them)."""
        return self._fallback().vectors

    def _fallback(self):
        if self._fallback_steps is None:
            from research.engines.extractive.costorm import ExtractiveCoStorm  # noqa: PLC0415 - scikit-learn, only when a step falls back

            self._fallback_steps = ExtractiveCoStorm(self.engine._fallback().vectors)
        return self._fallback_steps

    def _run(
        self,
        step: str,
        material: dict,
        fallback: Callable[[], Any],
        post: Callable[[Any], Any] = lambda x: x,
        *,
        inp: Any = None,
        tool_tokens: int = 0,
        tools: list[dict] | None = None,
        run_tool=None,
    ) -> Any:
        """The engine's ``_run`` (one place that calls a step's model, re-asks, and falls back
        with ``llm.fallback``). Raises LLMError for auth errors and replay misses."""
        return self.engine._run(
            step,
            material,
            fallback,
            post,
            inp=inp,
            tool_tokens=tool_tokens,
            tools=tools,
            run_tool=run_tool,
        )

    # ------------------------------------------------------------------ warm start
    def generate_experts(self, inp: ExpertsInput) -> PersonaList:
        """N experts from the background results (names made unique; missing ones from the
        extractive fallback)."""
        m = {
            "topic": inp.topic,
            "n": inp.n,
            "background": mat.results(inp.background, mat.SHORT_CHARS * 2),
        }

        def post(p: PersonaList) -> PersonaList:
            out: list[Perspective] = []
            for e in p.perspectives:
                if e.name.strip() and e.name.strip().lower() not in {x.name.lower() for x in out}:
                    out.append(
                        Perspective(
                            name=e.name.strip()[:80],
                            focus=e.focus.strip() or e.name.strip(),
                            questions=[q.strip() for q in e.questions if q.strip()][:3],
                        )
                    )
            if not out:
                raise InvalidOutput("costorm_experts: no experts")
            if len(out) < inp.n:
                for e in self._fallback().generate_experts(inp).perspectives:
                    if len(out) < inp.n and e.name.lower() not in {x.name.lower() for x in out}:
                        out.append(e)
            return PersonaList(perspectives=out[: inp.n])

        return self._run(
            "costorm_experts",
            m,
            lambda: self._fallback().generate_experts(inp),
            post,
            tool_tokens=count_tokens(json.dumps(m["background"])),
        )

    # ------------------------------------------------------------------ expert turn
    def choose_intent(self, inp: IntentInput) -> IntentOutput:
        """The expert's intent. A pending question (or an empty discourse) is always answered:
        a question intent there becomes ``potential_answer`` (no two questions in a row)."""
        last = inp.history[-1] if inp.history else None
        m = {
            "topic": inp.topic,
            "expert": expert(inp.expert),
            "history": history(inp.history),
            "last_intent": last.intent if last else "",
        }

        def post(o: IntentOutput) -> IntentOutput:
            if (last is None or last.intent in QUESTION_INTENTS) and o.intent in QUESTION_INTENTS:
                return IntentOutput(intent="potential_answer")
            return o

        return self._run(
            "costorm_intent", m, lambda: self._fallback().choose_intent(inp), post, inp=inp
        )

    def expert_question(self, inp: ExpertQuestionInput) -> TextOutput:
        """The expert's question (information request / original question), steered by the
        uncovered syllabus questions."""
        m = {
            "topic": inp.topic,
            "expert": {**expert(inp.expert), "questions": inp.expert.questions[:3]},
            "intent": inp.intent,
            "history": history(inp.history),
            "next_focus": [
                {"key": q.key, "label": q.label, "description": q.description}
                for q in inp.next_focus[:3]
            ],
        }

        def post(t: TextOutput) -> TextOutput:
            text = CITE_RE.sub("", t.text).strip()
            if not text:
                raise InvalidOutput("costorm_question: empty question")
            return TextOutput(text=text[:500])

        return self._run(
            "costorm_question", m, lambda: self._fallback().expert_question(inp), post, inp=inp
        )

    def turn_queries(self, inp: TurnQueryInput) -> QueryList:
        """1–3 search queries for the question (further details: from the expert's focus)."""
        m = {
            "topic": inp.topic,
            "expert": expert(inp.expert),
            "intent": inp.intent,
            "question": inp.question,
            "history": history(inp.history, 4),
        }
        return self._run(
            "costorm_queries",
            m,
            lambda: self._fallback().turn_queries(inp),
            lambda q: QueryList(queries=usable_queries(q.queries, 3)),
            inp=inp,
        )

    def expert_answer(self, inp: ExpertAnswerInput) -> AnswerOutput:
        """A cited answer from the numbered results (+ their summary cards and the
        ``read_artifact`` tool, docs/design.md § Tool-result compression); only numbers 1..len(results) survive."""
        cards = self.engine._cards_for({r.query for r in inp.results if r.query})
        base = mat.answer(
            AnswerInput(topic=inp.topic, question=inp.question, results=inp.results), cards
        )
        m = {
            **base,
            "expert": expert(inp.expert),
            "intent": inp.intent,
            "history": history(inp.history, 4),
        }
        valid = set(range(1, len(inp.results) + 1))

        def post(a: AnswerOutput) -> AnswerOutput:
            text = _keep_cites(a.answer, valid)
            if not text:
                raise InvalidOutput("costorm_answer: empty answer")
            return AnswerOutput(answer=text, cited=sorted({int(n) for n in CITE_RE.findall(text)}))

        tools = [READ_ARTIFACT_TOOL] if (self.engine.run_id and m["artifacts"]) else None
        return self._run(
            "costorm_answer",
            m,
            lambda: self._fallback().expert_answer(inp),
            post,
            inp=inp,
            tools=tools,
            run_tool=self.engine._read_artifact,
            tool_tokens=count_tokens(json.dumps(m["results"]) + json.dumps(m["artifacts"])),
        )

    def polish_utterance(self, inp: UtteranceInput) -> TextOutput:
        """Copy-edit an utterance; a reply that adds a citation number (or is empty) keeps the input."""
        if not inp.utterance.strip():
            return TextOutput(text=inp.utterance)
        before = set(CITE_RE.findall(inp.utterance))
        m = {
            "topic": inp.topic,
            "role": inp.role,
            "intent": inp.intent,
            "utterance": inp.utterance,
            "history": history(inp.history, 3),
        }

        def post(t: TextOutput) -> TextOutput:
            ok = t.text.strip() and set(CITE_RE.findall(t.text)) <= before
            return TextOutput(text=t.text.strip()) if ok else TextOutput(text=inp.utterance)

        return self._run(
            "costorm_polish", m, lambda: self._fallback().polish_utterance(inp), post, inp=inp
        )

    # ------------------------------------------------------------------ moderator
    def moderator_question(self, inp: ModeratorInput) -> ModeratorOutput:
        """A new question from the top-ranked unused items (numbered 1..k), not on a concept
        already discussed; citations kept to the item numbers."""
        m = {
            "topic": inp.topic,
            "concepts": inp.concepts[:30],
            "history": history(inp.history, 6),
            "items": [
                {"n": i, "text": it.text[:ITEM_CHARS], "retrieved_for": it.question[:200]}
                for i, it in enumerate(inp.items, start=1)
            ],
        }
        valid = set(range(1, len(inp.items) + 1))

        def post(o: ModeratorOutput) -> ModeratorOutput:
            text = _keep_cites(o.question, valid)
            if not text:
                raise InvalidOutput("costorm_moderator: empty question")
            cited = sorted(
                {n for n in o.cited if n in valid} | {int(n) for n in CITE_RE.findall(text)}
            )
            return ModeratorOutput(
                question=text,
                question_only=CITE_RE.sub("", o.question_only).strip()[:500],
                cited=cited,
            )

        return self._run(
            "costorm_moderator",
            m,
            lambda: self._fallback().moderator_question(inp),
            post,
            inp=inp,
            tool_tokens=count_tokens(json.dumps(m["items"])),
        )

    def update_experts(self, inp: ExpertUpdateInput) -> PersonaList:
        """The panel after a moderator question: ``n`` unique experts (missing places keep the
        current experts, in order)."""
        m = {
            "topic": inp.topic,
            "question": inp.question,
            "n": inp.n,
            "experts": [{**expert(e), "questions": e.questions[:2]} for e in inp.experts],
        }

        def post(p: PersonaList) -> PersonaList:
            out: list[Perspective] = []
            for e in [*p.perspectives, *inp.experts]:
                if e.name.strip() and e.name.strip().lower() not in {x.name.lower() for x in out}:
                    out.append(
                        Perspective(
                            name=e.name.strip()[:80],
                            focus=e.focus.strip() or e.name.strip(),
                            questions=[q.strip() for q in e.questions if q.strip()][:3],
                        )
                    )
            return PersonaList(perspectives=out[: inp.n])

        return self._run(
            "costorm_update_experts", m, lambda: self._fallback().update_experts(inp), post, inp=inp
        )

    # ------------------------------------------------------------------ mind map
    def choose_placement(self, inp: PlacementInput) -> PlacementOutput:
        """The model picks a candidate by number (or a new concept under it); a new concept
        that names an offered candidate's last concept maps to that candidate."""
        m = {
            "topic": inp.topic,
            "question": inp.question[:300],
            "text": inp.text[:ITEM_CHARS],
            "allow_new": inp.allow_new,
            "candidates": [
                {"n": i, "path": c, "similarity": s}
                for i, (c, s) in enumerate(
                    zip(inp.candidates, inp.similarities, strict=True), start=1
                )
            ],
        }

        def post(r: PlacementReply) -> PlacementOutput:
            if r.choice > len(inp.candidates):
                raise InvalidOutput(
                    f"costorm_placement: choice {r.choice} is not a candidate number"
                )
            path = inp.candidates[r.choice - 1]
            new = " ".join(r.new_node.replace(">", " ").split())[:80] if inp.allow_new else ""
            for c in inp.candidates:
                if new and c.rsplit(SEP, 1)[-1].lower() == new.lower():
                    return PlacementOutput(path=c)
            if new.lower() == path.rsplit(SEP, 1)[-1].lower():
                new = ""
            return PlacementOutput(path=path, new_node=new)

        return self._run(
            "costorm_placement", m, lambda: self._fallback().choose_placement(inp), post, inp=inp
        )

    def subtopics(self, inp: SubtopicInput) -> SubtopicOutput:
        """2..``max_subtopics`` distinct subtopic names for an over-full concept ([] = keep it),
        and where each item goes: the model's ``assignment`` (one 1-based name number per item,
        0 = stays) becomes ``SubtopicOutput.assignment`` (0-based, -1 = stays), so the mind map
        re-inserts a reorganized concept's items from this one call instead of one
        ``costorm_placement`` call per item (a 4×5 Co-STORM run on the loopback made 335 such
        calls). An assignment of the wrong length or with a number that names no subtopic is
        dropped (the map then places the items one by one, as before); an item sent to a name
        that was dropped as a repeat of another or of the concept stays."""
        own = inp.path.rsplit(SEP, 1)[-1].lower()
        shown = inp.items[:MAX_SUBTOPIC_ITEMS]
        m = {
            "topic": inp.topic,
            "path": inp.path,
            "max_subtopics": inp.max_subtopics,
            "items": [{"n": i, "text": t[:ITEM_CHARS]} for i, t in enumerate(shown, start=1)],
        }

        def post(o: SubtopicOutput) -> SubtopicOutput:
            names: list[str] = []
            where: list[int] = []  # per name of the reply: its index in ``names``, -1 when dropped
            for n in o.names:
                n = " ".join(n.replace(">", " ").split())[:80]
                keep = (
                    bool(n)
                    and n.lower() != own
                    and n.lower() not in {x.lower() for x in names}
                    and len(names) < inp.max_subtopics
                )
                where.append(len(names) if keep else -1)
                if keep:
                    names.append(n)
            if len(names) < 2:
                return SubtopicOutput(names=[])
            valid = (
                len(shown) == len(inp.items)
                and len(o.assignment) == len(inp.items)
                and all(0 <= a <= len(o.names) for a in o.assignment)
            )
            return SubtopicOutput(
                names=names,
                assignment=[where[a - 1] if a else -1 for a in o.assignment] if valid else [],
            )

        return self._run(
            "costorm_subtopics", m, lambda: self._fallback().subtopics(inp), post, inp=inp
        )
