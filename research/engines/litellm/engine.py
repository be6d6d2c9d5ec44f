"""``LiteLLMEngine``: every ``research.engines.base.Engine`` step through litellm.

Prompts: ``prompts/{step}.md`` (our wording with STORM's intent, docs/design.md § STORM pipeline;
docs/design.md § Tool-result compression: planner and compression schemas). Structured output and
re-ask: ``structured.py``. Calls, accounting, budget and record/replay:
``research.llm.session.LLMSession``. Each step's role, reply model, prompt file and cassette key:
its declaration in ``research.engines.steps``. Calling a step, its fallback, the offline answers
and the ``read_artifact`` tool: the base class ``runner.StepRunner``; reply sanitising:
``sanitise.py``.

Fallbacks: when the run's budget is exhausted, or a step's reply is still invalid after a
re-ask (bad JSON, cut at the step's bound, or weak: an empty answer, an empty or repeated query
list, a plan, syllabus or outline with no usable entry — each ``post`` below raises
``InvalidOutput`` with the reason the re-ask carries), or the provider keeps failing after
retries, that step is answered by the offline extractive engine (so the run still ends with a
report) and an ``llm.fallback`` event says so (``fallbacks()``: the run's count by step, for
``research show --json``, the report's note and the run page). Auth errors and
replay misses are raised (the run fails with their code). Replies are sanitised: citation
markers outside the material's numbers are dropped, syllabus keys filtered, list lengths fixed.

Size: one method per Engine step, each a prompt, its reply model and its fallback; they share the
material and fallback helpers, so splitting them would scatter one protocol's implementation.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from research.config import load_settings
from research.engines.base import (
    AnalysisInput,
    AnswerAssignInput,
    AnswerAssignOutput,
    AnswerInput,
    AnswerOutput,
    AskInput,
    AskOutput,
    AssignInput,
    AssignOutput,
    CompressInput,
    FitInput,
    LeadInput,
    OutlineInput,
    PersonaInput,
    PersonaList,
    PlanInput,
    PolishInput,
    QueryInput,
    QueryList,
    RefineInput,
    RegenerateInput,
    RelatedInput,
    SectionInput,
    SurveyInput,
    TextOutput,
)
from research.engines.extractive.writing import polish as polish_text
from research.engines.litellm import material as mat
from research.engines.litellm.planned import offline_by_design
from research.engines.litellm.prompts import compact
from research.engines.litellm.runner import READ_ARTIFACT_TOOL, StepRunner
from research.engines.litellm.sanitise import (
    CITE_RE,
    _assignment,
    _keep_cites,
    _outline,
    cited_only,
)
from research.engines.litellm.weak import (
    nonempty,
    usable_headings,
    usable_personas,
    usable_queries,
)
from research.llm.errors import InvalidOutput
from research.llm.session import LLMSession
from research.llm.tokens import count_tokens
from research.models import (
    Analysis,
    Claim,
    Contradiction,
    Outline,
    Plan,
    RunConfig,
    Step,
    SummaryCard,
    Syllabus,
    TopicOutline,
)
from research.planning.edit import check_questions
from research.text.vectors import Vectors

if TYPE_CHECKING:
    from research.engines.extractive.engine import ExtractiveEngine


class LiteLLMEngine(StepRunner):
    """The LLM engine (``name = "litellm"``, ``label = "litellm (MODEL[, MODEL…])"``).

    Args:
        config: the run config (models per role, budgets).
        run_id, store, settings: the run being executed (None → standalone: in-memory
            accounting, no budget flag, ``read_artifact`` disabled).

    Raises (at construction): InputError when a role has no model.
    """

    name = "litellm"
    extractive = False
    cards_once = True  # each document reaches the compressor once per run (artifacts.prepare)
    compress_in_background = True  # a turn's cards are made while the conversation goes on
    planned: dict[str, str] = {}  # {step: reason} answered offline by design (set per engine)

    def __init__(
        self, config: RunConfig, run_id: str | None = None, store=None, settings=None
    ) -> None:
        self.config, self.run_id, self.store, self.settings = config, run_id, store, settings
        self.session = LLMSession(config, run_id, store, settings, on_budget=self._on_budget)
        self.label = engine_label(self.session.models)
        # steps a local model leaves to the offline engine by design (``planned``)
        self.planned = offline_by_design(self.session.models, settings or load_settings())
        # offline cards are no model call: made at once and whole, as the extractive engine's
        self.compress_in_background = self.cards_once = "compress" not in self.planned
        self._announced: set[str] = set()
        self._fallback_engine: ExtractiveEngine | None = None  # made on the first fallback
        self._vectors: Vectors | None = None
        self._lock = threading.Lock()
        if store and run_id and self.session.cassette:
            store.emit(
                run_id,
                "llm.cassette",
                {"mode": self.session.cassette.mode, "file": self.session.cassette.path.name},
            )

    # ------------------------------------------------------------------ planning
    def plan(self, inp: PlanInput) -> Plan:
        """Seed 001 §3.2 plan; steps renumbered 1..n."""

        def post(p: Plan) -> Plan:
            if not p.steps:
                raise InvalidOutput("plan: no steps")
            return Plan(
                plan_title=p.plan_title.strip()[:120] or inp.topic[:120],
                steps=[
                    Step(step_id=i, title=s.title, description=s.description)
                    for i, s in enumerate(p.steps, start=1)
                ],
            )

        return self._guard(
            "plan",
            {"topic": inp.topic, "syllabus": mat.plan_syllabus(inp.syllabus)},
            lambda: self._fallback().plan(inp),
            post,
        )

    def survey_queries(self, inp: SurveyInput) -> QueryList:
        """Seed 002 §1.1: 3–5 related-topic queries."""
        return self._run(
            "survey_queries",
            {"topic": inp.topic},
            lambda: self._fallback().survey_queries(inp),
            lambda q: QueryList(queries=usable_queries(q.queries, 5)),
        )

    def related_outline(self, inp: RelatedInput) -> TopicOutline:
        """Seed 002 §1.1: a related topic's name and sections from one query's results."""
        m = {"query": inp.query, "titles": mat.related(inp.results)}  # the query names the topic
        src = inp.results[0].url if inp.results else ""
        return self._run(
            "related_outline",
            m,
            lambda: self._fallback().related_outline(inp),
            lambda r: TopicOutline(
                topic=r.topic, sections=usable_headings(r.sections)[:8], source=src
            ),
            inp=inp,
            tool_tokens=count_tokens(compact(m["titles"])),
        )

    def fit_syllabus(self, inp: FitInput) -> Syllabus:
        """The planner proposes 4–8 questions for this query (``prompts/fit_syllabus.md``),
        validated by ``research.planning.edit.check_questions``; an invalid proposal (bad key, duplicate,
        min_sources out of 1–20, fewer than 4 or more than 8) keeps the template (event ``llm.fallback``)."""

        def post(reply) -> Syllabus:
            errors: list[str] = []
            questions = check_questions([q.model_dump() for q in reply.questions], errors)
            if errors or not 4 <= len(questions) <= 8:
                raise InvalidOutput(
                    "fit_syllabus: " + ("; ".join(errors)[:300] or f"{len(questions)} questions")
                )
            return Syllabus(name=inp.syllabus.name, questions=questions)

        m = {
            "topic": inp.topic,
            "template": mat.syllabus(inp.syllabus),
            "related": [{"topic": r.topic, "sections": r.sections} for r in inp.related],
        }
        return self._guard("fit_syllabus", m, lambda: inp.syllabus, post)

    def personas(self, inp: PersonaInput) -> PersonaList:
        """Seed 002 §1.2 GenPersona (≤ max_perspectives)."""
        m = mat.personas(inp)
        return self._run(
            "personas",
            m,
            lambda: self._fallback().personas(inp),
            lambda p: PersonaList(perspectives=usable_personas(p)[: inp.max_perspectives]),
        )

    # ------------------------------------------------------------------ conversations
    def ask_question(self, inp: AskInput) -> AskOutput:
        """AskQuestionWithPersona and QuestionToQuery in ONE call (the asker
        returns its question and 1–3 search queries; ``material.ask``: bounded history);
        ``focus_question`` kept only when it is an offered key; no queries on a thanks."""
        keys = {q.key for q in inp.next_focus}

        def post(a: AskOutput) -> AskOutput:
            if not a.question.strip():
                raise InvalidOutput("ask_question: the question is empty")
            queries = usable_queries(a.queries, 3) if any(q.strip() for q in a.queries) else []
            return AskOutput(
                question=a.question.strip(),
                focus_question=a.focus_question if a.focus_question in keys else "",
                queries=queries,
            )

        return self._run(
            "ask_question", mat.ask(inp), lambda: self._fallback().ask_question(inp), post, inp=inp
        )

    def question_to_queries(self, inp: QueryInput) -> QueryList:
        """QuestionToQuery: 1–3 queries."""
        m = {
            "topic": inp.topic,
            "question": inp.question,
            "perspective": inp.perspective.name if inp.perspective else "",
        }
        return self._run(
            "question_to_queries",
            m,
            lambda: self._fallback().question_to_queries(inp),
            lambda q: QueryList(queries=usable_queries(q.queries, 3)),
            inp=inp,
        )

    def answer_question(self, inp: AnswerInput) -> AnswerOutput:
        """AnswerQuestion grounded in the numbered results (+ their cards, read_artifact tool)."""
        cards = self._cards_for({r.query for r in inp.results if r.query}, inp.known_cards)
        m = mat.answer(inp, cards)
        valid = set(range(1, len(inp.results) + 1))

        def post(a: AnswerOutput) -> AnswerOutput:
            text = _keep_cites(a.answer, valid)
            if not text:
                raise InvalidOutput("answer_question: the answer is empty")
            cited = sorted({int(n) for n in CITE_RE.findall(text)})
            return AnswerOutput(answer=text, cited=cited)

        tools = [READ_ARTIFACT_TOOL] if (self.run_id and m["artifacts"]) else None
        return self._run(
            "answer_question",
            m,
            lambda: self._fallback().answer_question(inp),
            post,
            inp=inp,
            tools=tools,
            run_tool=self._read_artifact,
            tool_tokens=count_tokens(compact(m["results"]) + compact(m["artifacts"])),
        )

    def assign_questions(self, inp: AssignInput) -> AssignOutput:
        """Seed 000 assignment: per result, valid syllabus keys and a ≤ 300-char excerpt."""
        m = mat.assign(inp)

        def post(a: AssignOutput) -> AssignOutput:
            return _assignment(
                a.relevant_questions, a.key_excerpts, inp.results, set(inp.syllabus.keys())
            )

        return self._run(
            "assign_questions",
            m,
            lambda: self._fallback().assign_questions(inp),
            post,
            inp=inp,
            tool_tokens=count_tokens(compact(m["results"])),
        )

    def answer_and_assign(self, inp: AnswerAssignInput) -> AnswerAssignOutput:
        """Answer + question assignment (docs/design.md § Collector tools) in ONE call over one copy of the numbered
        results (``prompts/answer_and_assign.md``, ``material.answer_assign``: the turn's cards stand
        in for long snippets); sanitised as ``answer_question`` and ``assign_questions`` are.
        No results → ``answer_question`` alone (nothing to assign)."""
        a = inp.answer
        if not a.results:
            return AnswerAssignOutput(answer=self.answer_question(a))
        m = mat.answer_assign(
            inp, self._cards_for({r.query for r in a.results if r.query}, a.known_cards)
        )
        valid = set(range(1, len(a.results) + 1))

        def post(r) -> AnswerAssignOutput:
            text = _keep_cites(r.answer, valid)
            if not text:
                raise InvalidOutput("answer_and_assign: the answer is empty")
            answer = AnswerOutput(
                answer=text, cited=sorted({int(n) for n in CITE_RE.findall(text)})
            )
            return AnswerAssignOutput(
                answer=answer,
                assigned=_assignment(
                    r.relevant_questions, r.key_excerpts, a.results, set(inp.syllabus.keys())
                ),
            )

        tools = (
            [READ_ARTIFACT_TOOL] if (self.run_id and any("file" in x for x in m["notes"])) else None
        )
        return self._run(
            "answer_and_assign",
            m,
            lambda: self._fallback().answer_and_assign(inp),
            post,
            inp=inp,
            tools=tools,
            run_tool=self._read_artifact,
            tool_tokens=count_tokens(compact(m["results"]) + compact(m["notes"])),
        )

    # ------------------------------------------------------------------ artifacts & analysis
    def compress(self, inp: CompressInput) -> SummaryCard:
        """Seed 001 §4.4 card (out of band: not counted as context) from ``material.compress``:
        a search's results as passages around the query's terms, results carded earlier in the
        run as references to their cards. By design (``planned``: a local compressor), the
        offline engine makes the card."""
        if "compress" in self.planned:
            return self._offline("compress").compress(inp)

        def post(card: SummaryCard) -> SummaryCard:
            if not card.summary.strip():
                raise InvalidOutput("compress: the summary is empty")
            return card

        return self._run(
            "compress", mat.compress(inp), lambda: self._fallback().compress(inp), post, inp=inp
        )

    def analyze(self, inp: AnalysisInput) -> Analysis:
        """Cross-validation (claims from ≥ 2 sources) and contradictions; the (deduplicated)
        facts go as lines ``"F1 S1: text"`` (fact id, source label, text ≤ ``FACT_CHARS``)."""
        uniq = list(
            {(f.text, f.source_id): f for f in inp.facts}.values()
        )  # a fact said twice by one source: once
        ids = {f"F{i}": f for i, f in enumerate(uniq[: mat.MAX_FACTS], start=1)}
        src_label = {
            sid: f"S{i}"
            for i, sid in enumerate(dict.fromkeys(f.source_id for f in ids.values()), start=1)
        }
        m = {
            "topic": inp.topic,
            "facts": [
                f"{k} {src_label[f.source_id]}: {mat.clip(f.text, mat.FACT_CHARS)}"
                for k, f in ids.items()
            ],
        }

        def post(a) -> Analysis:
            claims = []
            for c in a.cross_validated:
                srcs = list(dict.fromkeys(ids[i].source_id for i in c.fact_ids if i in ids))
                if len(srcs) >= 2:
                    claims.append(Claim(text=c.text, source_ids=srcs))
            contra = [
                Contradiction(
                    subject=c.subject,
                    statement_a=ids[c.fact_a].text,
                    source_a=ids[c.fact_a].source_id,
                    statement_b=ids[c.fact_b].text,
                    source_b=ids[c.fact_b].source_id,
                    explanation=c.explanation,
                )
                for c in a.contradictions
                if c.fact_a in ids
                and c.fact_b in ids
                and ids[c.fact_a].source_id != ids[c.fact_b].source_id
            ]
            per_src: dict[str, set] = {}
            for f in inp.facts:
                per_src.setdefault(f.text, set()).add(f.source_id)
            return Analysis(
                facts_total=len(inp.facts),
                cross_validated=claims,
                single_source=sum(1 for s in per_src.values() if len(s) < 2),
                contradictions=contra,
            )

        if not inp.facts:
            return Analysis()
        return self._run("analyze", m, lambda: self._fallback().analyze(inp), post)

    # ------------------------------------------------------------------ outline & report
    def draft_outline(self, inp: OutlineInput) -> Outline:
        """WritePageOutline from the topic only."""
        return self._guard(
            "draft_outline",
            {"topic": inp.topic},
            lambda: self._fallback().draft_outline(inp),
            _outline,
        )

    def refine_outline(self, inp: RefineInput) -> Outline:
        """WritePageOutlineFromConv."""
        return self._guard(
            "refine_outline",
            mat.refine(inp),
            lambda: self._fallback().refine_outline(inp),
            _outline,
        )

    def write_section(self, inp: SectionInput) -> TextOutput:
        """A section answering its syllabus question (when it has one) from the snippets of the
        sources assigned to it (``material.section``), citing ``[snippet.n]`` only: a
        reply citing any other number is re-asked once with the allowed numbers
        (``cited_only``); if the re-ask still cites outside them, the extractive engine writes
        the section from the same snippets. Stray markers are dropped as a last guard."""
        valid = {s.n for s in inp.snippets}
        return self._run(
            "write_section",
            mat.section(inp),
            lambda: self._fallback().write_section(inp),
            lambda t: TextOutput(text=nonempty(_keep_cites(t.text, valid), "write_section")),
            inp=inp,
            reply=cited_only(valid),
        )

    def regenerate_section(self, inp: RegenerateInput) -> TextOutput:
        """A section written again with the analyst's instruction (``material.regenerate``),
        citing only the snippets' run reference numbers and those its current text cites (a
        reply citing others is re-asked once, ``cited_only``). Not a pipeline step (the
        analyst's desk calls it, ``research.desk.regenerate``), so no ``Engine`` protocol
        method; when the model cannot answer, the snippets themselves, best first, are the
        section (``snippet_text``)."""
        valid = {s.n for s in inp.snippets} | {int(n) for n in CITE_RE.findall(inp.text)}
        return self._run(
            "regenerate_section",
            mat.regenerate(inp),
            lambda: TextOutput(text=snippet_text(inp)),
            lambda t: TextOutput(text=_keep_cites(t.text, valid)),
            inp=inp,
            reply=cited_only(valid),
        )

    def write_lead(self, inp: LeadInput) -> TextOutput:
        """Lead: the key finding per answered syllabus question with its citations, and the
        questions the evidence leaves open (``material.lead``); a lead that cites a number absent
        from the sections, or nothing, is re-asked like a section. When no section cites a source
        the offline engine writes the lead (the open questions) with no call."""
        valid = {int(n) for s in inp.sections for n in CITE_RE.findall(s.text)}
        if not valid:  # nothing to cite: a model's lead would state claims no source supports
            return self._fallback().write_lead(inp)
        return self._run(
            "write_lead",
            mat.lead(inp),
            lambda: self._fallback().write_lead(inp),
            lambda t: TextOutput(text=nonempty(_keep_cites(t.text, valid), "write_lead")),
            reply=cited_only(valid),
        )

    def polish(self, inp: PolishInput) -> TextOutput:
        """Repeated sentences removed, without a model call (``extractive.writing.polish``).

        The section writer's prompt already asks for fluent prose with no sentence repeated, so
        a second call that copy-edits the writer's own text bought little and cost a call and
        a round trip per section; STORM likewise polishes once, for the whole article (its lead),
        which ``write_lead`` is here. Citations are kept verbatim."""
        return TextOutput(text=polish_text(inp.text))


def snippet_text(inp: RegenerateInput) -> str:
    """The first ``max_sentences`` snippets, best first, each cited ``[n]``: the extractive
    form of a regenerated section (and its fallback when the model cannot answer)."""
    parts = []
    for s in inp.snippets[: inp.max_sentences]:
        text = s.text.strip()
        parts.append(f"{text if text[-1:] in '.!?' else text + '.'} [{s.n}]")
    return " ".join(parts)


def engine_label(models: dict[str, str]) -> str:
    """``litellm (m1, m2)``: the distinct models in role order."""
    return f"litellm ({', '.join(dict.fromkeys(models.values()))})"
