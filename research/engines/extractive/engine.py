"""``ExtractiveEngine``: every pipeline step with no language model and no key, from sentence
embeddings (all-MiniLM-L6-v2) and text statistics (docs/design.md § Engines).

Each method takes and returns the step models of ``research.engines.base`` and is deterministic
for the same input. Algorithms live in the sibling modules: ``planning`` (docs/design.md §
Coordinator and planner: plan, docs/design.md § Perspective discovery: survey + personas),
``dialogue`` (docs/design.md § Simulated conversations: conversation steps, docs/design.md § Source
collector: question assignment), ``compress`` (docs/design.md § Summary card: summary cards),
``analysis`` (docs/design.md § STORM pipeline analysis agent), ``writing`` and ``lead`` (docs/design.md §
Two-phase outline: outline, STORM §3.4 article writing).
"""

from __future__ import annotations

from typing import Any

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
    RelatedInput,
    SectionInput,
    SurveyInput,
    TextOutput,
)
from research.engines.extractive import (
    analysis,
    compress,
    dialogue,
    fitting,
    lead,
    planning,
    writing,
)
from research.engines.labels import OFFLINE_LABEL
from research.models import Analysis, Outline, Plan, SummaryCard, Syllabus, TopicOutline
from research.text.vectors import Vectors


class ExtractiveEngine:
    """The offline engine (``name = "extractive"``, ``label = "offline extractive mode"``).

    Args:
        embedder: object with ``encode(list[str]) -> np.ndarray (n, 384)`` (L2-normalised rows);
            None → ``research.search.embeddings.get_embedder()``, loaded on first use. Vectors are
            cached per engine, so one engine can serve a whole run (thread-safe).

    Raises (from steps): ``research.errors.InputError`` for an empty topic;
    ``research.errors.UnknownQuestionError`` for focus keys missing from the syllabus.
    """

    name = "extractive"
    label = OFFLINE_LABEL
    extractive = True

    def __init__(self, embedder: Any | None = None) -> None:
        self.vectors = Vectors(embedder)

    def fallbacks(self) -> dict[str, int]:
        """{}: no step here has a model to fall back from."""
        return {}

    # ------------------------------------------------------------------ planning
    def plan(self, inp: PlanInput) -> Plan:
        """Seed 001 §3.2 plan: survey step, one step per syllabus question, cross-check step."""
        return planning.make_plan(inp.topic, inp.syllabus)

    def survey_queries(self, inp: SurveyInput) -> QueryList:
        """Seed 002 §1.1: 3–5 keyword queries on different angles of the topic."""
        return planning.survey_queries(inp.topic)

    def related_outline(self, inp: RelatedInput) -> TopicOutline:
        """Seed 002 §1.1: a related topic's name and sections from one query's results."""
        return planning.related_outline(inp.topic, inp.query, inp.results)

    def fit_syllabus(self, inp: FitInput) -> Syllabus:
        """4–8 questions fitted to the topic from the survey (``fitting`` module doc)."""
        return fitting.fit_syllabus(self.vectors, inp.topic, inp.syllabus, inp.related)

    def personas(self, inp: PersonaInput) -> PersonaList:
        """Seed 002 §1.2 GenPersona: Basic Fact Writer first, ≤ ``max_perspectives`` in all."""
        return planning.make_personas(
            self.vectors, inp.topic, inp.related, inp.syllabus, inp.max_perspectives
        )

    # ------------------------------------------------------------------ conversations
    def ask_question(self, inp: AskInput) -> AskOutput:
        """AskQuestionWithPersona: next template question or ``base.THANKS``."""
        return dialogue.ask(inp.topic, inp.perspective, inp.history, inp.next_focus, inp.max_turns)

    def question_to_queries(self, inp: QueryInput) -> QueryList:
        """QuestionToQuery: 1–3 keyword queries."""
        return dialogue.to_queries(inp.topic, inp.question, inp.perspective)

    def answer_question(self, inp: AnswerInput) -> AnswerOutput:
        """AnswerQuestion: 3–6 retrieved sentences, each cited ``[n]`` into ``inp.results``."""
        return dialogue.answer(self.vectors, inp.topic, inp.question, inp.results)

    def assign_questions(self, inp: AssignInput) -> AssignOutput:
        """Seed 000 question assignment: syllabus keys and a ≤ 300-char excerpt per result."""
        return dialogue.assign(self.vectors, inp.syllabus, inp.question, inp.focus, inp.results)

    def answer_and_assign(self, inp: AnswerAssignInput) -> AnswerAssignOutput:
        """``answer_question`` then ``assign_questions`` over the same results (the
        offline engine has no prompt to share, so this is exactly the two steps)."""
        a = inp.answer
        answer = self.answer_question(a)
        assigned = (
            self.assign_questions(
                AssignInput(
                    syllabus=inp.syllabus, question=a.question, focus=inp.focus, results=a.results
                )
            )
            if a.results
            else None
        )
        return AnswerAssignOutput(answer=answer, assigned=assigned)

    # ------------------------------------------------------------------ artifacts & analysis
    def compress(self, inp: CompressInput) -> SummaryCard:
        """Seed 001 §4.4 summary card of one raw tool output."""
        return compress.compress(
            self.vectors, inp.plan_title, inp.step_title, inp.step_description, inp.raw_output
        )

    def analyze(self, inp: AnalysisInput) -> Analysis:
        """Cross-validated claims (≥ 2 sources), single-source count, contradictions."""
        return analysis.analyze(self.vectors, inp.facts)

    # ------------------------------------------------------------------ outline & report
    def draft_outline(self, inp: OutlineInput) -> Outline:
        """WritePageOutline: generic 6-section outline from the topic only."""
        return writing.draft_outline(inp.topic)

    def refine_outline(self, inp: RefineInput) -> Outline:
        """WritePageOutlineFromConv: clusters of the conversations' answers → sections."""
        return writing.refine_outline(self.vectors, inp.topic, inp.draft, inp.conversations)

    def write_section(self, inp: SectionInput) -> TextOutput:
        """A section from its snippets, each sentence cited ``[snippet.n]``: a syllabus question's
        section quotes all of its chosen evidence (``writing.write_evidence``); another section
        takes the snippet sentences closest to its heading (``writing.write_section``)."""
        if inp.question is not None:
            return TextOutput(text=writing.write_evidence([(s.n, s.text) for s in inp.snippets]))
        return TextOutput(
            text=writing.write_section(
                self.vectors,
                inp.topic,
                inp.section.heading,
                inp.section.subsections,
                [(s.n, s.text) for s in inp.snippets],
            )
        )

    def write_lead(self, inp: LeadInput) -> TextOutput:
        """Lead from the sections' sentences, citations verbatim: the key finding per syllabus
        question and the questions left open (``lead.question_lead``), else 2–4 top sentences."""
        return TextOutput(
            text=lead.write_lead(
                self.vectors, inp.topic, inp.sections, inp.questions, inp.relevance
            )
        )

    def polish(self, inp: PolishInput) -> TextOutput:
        """Duplicate sentences and whitespace problems removed; citations verbatim."""
        return TextOutput(text=writing.polish(inp.text))
