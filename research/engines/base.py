"""The Engine protocol: one method per pipeline step, pydantic in and out.

Steps follow docs/design.md § Tool-result compression (planner, compression) and docs/design.md §
STORM pipeline (STORM: related-topic survey, GenPersona, AskQuestionWithPersona, QuestionToQuery,
AnswerQuestion, WritePageOutline, WritePageOutlineFromConv, section writing, lead, polish) plus the analysis agent
(cross-validation, contradiction detection) and the question assignment (docs/design.md § Source collector).

Citation convention: wherever an engine receives numbered material (``results`` in
``AnswerInput``, ``snippets`` in ``SectionInput``) it cites with ``[n]`` where n is that
material's 1-based number; the pipeline maps numbers back to sources.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from research.models import (
    Analysis,
    ConversationResult,
    DialogueTurn,
    Outline,
    OutlineSection,
    Perspective,
    Plan,
    Question,
    ReportSection,
    SearchResult,
    SummaryCard,
    Syllabus,
    TopicOutline,
)
from research.text.vectors import Vectors

THANKS = "Thank you so much for your help!"


class PlanInput(BaseModel):
    topic: str
    syllabus: Syllabus


class SurveyInput(BaseModel):
    topic: str


class QueryList(BaseModel):
    queries: list[str]


class RelatedInput(BaseModel):
    topic: str
    query: str
    results: list[SearchResult]


class FitInput(BaseModel):
    """Fit the syllabus to the query. ``syllabus`` is the template of the topic's kind
    (``research.planning.syllabus.base_template``); ``related`` the related-topic survey."""

    topic: str
    syllabus: Syllabus
    related: list[TopicOutline] = Field(default_factory=list)


class PersonaInput(BaseModel):
    topic: str
    related: list[TopicOutline]
    syllabus: Syllabus
    max_perspectives: int = Field(ge=1)


class PersonaList(BaseModel):
    perspectives: list[Perspective]


class AskInput(BaseModel):
    """WikiWriter input (AskQuestionWithPersona). ``next_focus`` comes from ``get_progress``."""

    topic: str
    perspective: Perspective
    history: list[DialogueTurn]
    next_focus: list[Question] = Field(default_factory=list)
    max_turns: int


class AskOutput(BaseModel):
    """The question; contains ``THANKS`` when the writer ends the conversation. ``queries``
    (one call instead of two): the search queries for the question when the
    engine wrote them with it (the litellm asker does); empty → the pipeline asks
    ``question_to_queries`` (the extractive engine's path)."""

    question: str
    focus_question: str = Field(default="", description="syllabus key the question targets, if any")
    queries: list[str] = Field(
        default_factory=list, description="1-3 keyword search queries for the question"
    )


class QueryInput(BaseModel):
    topic: str
    question: str
    perspective: Perspective | None = None


class TurnCard(BaseModel):
    """The summary card of one of the turn's own searches (docs/design.md § Summary card), compressed but not
    stored yet (``DeferredRecorder``): ``query`` is the search's tool input."""

    query: str
    card: SummaryCard


class AnswerInput(BaseModel):
    topic: str
    question: str
    results: list[SearchResult] = Field(description="numbered 1..k in this order")
    known_cards: int | None = Field(
        default=None,
        description="how many of the run's stored summary cards "
        "(in commit order) the answer may draw on; None = all (a "
        "conversation turn sees the same cards whatever the thread timing)",
    )
    turn_cards: list[TurnCard] = Field(
        default_factory=list,
        description="cards of the searches that produced "
        "``results`` (the answer reads a card instead of long snippets)",
    )


class AnswerOutput(BaseModel):
    answer: str = Field(description="grounded answer citing [n] into AnswerInput.results")
    cited: list[int] = Field(default_factory=list)


class AssignInput(BaseModel):
    """Seed 000 question assignment for a batch of sources."""

    syllabus: Syllabus
    question: str = Field(description="the dialogue question the sources were found for")
    focus: list[str] = Field(default_factory=list, description="syllabus keys the turn targets")
    results: list[SearchResult]


class AssignOutput(BaseModel):
    relevant_questions: list[list[str]] = Field(
        description="per result, syllabus keys (may be empty)"
    )
    key_excerpts: list[str] = Field(description="per result, 1–2 sentence excerpt")


class AnswerAssignInput(BaseModel):
    """Answer the question AND assign its results to syllabus questions in one step
    (both read the same numbered results). ``answer.results`` are the results assigned."""

    answer: AnswerInput
    syllabus: Syllabus
    focus: list[str] = Field(default_factory=list, description="syllabus keys the turn targets")
    evidence: list[dict[str, str]] = Field(
        default_factory=list,
        description="per result (in order), syllabus key → the sentence the evidence judgement "
        "puts forward for it (its best over the bar): a model names a key for a result only "
        "when that sentence answers it (research.evidence)",
    )


class AnswerAssignOutput(BaseModel):
    """The answer and the assignment (None when there were no results to assign)."""

    answer: AnswerOutput
    assigned: AssignOutput | None = None


class CompressInput(BaseModel):
    """Seed 001 §4.3: inputs to compression (out of band, never injected into context)."""

    plan_title: str
    step_title: str
    step_description: str
    tool_name: str
    raw_output: str
    query: str = Field(default="", description="the tool's input (a search's query)")
    carded: dict[str, str] = Field(
        default_factory=dict,
        description="result key (doc_id, else url) → reference to the earlier card of this run "
        "that already covers that result: the compressor gets the reference, not the text",
    )


class Fact(BaseModel):
    text: str
    source_id: str
    perspective: str = ""


class AnalysisInput(BaseModel):
    topic: str
    facts: list[Fact]


class OutlineInput(BaseModel):
    topic: str


class RefineInput(BaseModel):
    topic: str
    draft: Outline
    conversations: list[ConversationResult]


class Snippet(BaseModel):
    n: int
    source_id: str
    text: str
    title: str = Field(default="", description="the source's title (shown to the litellm writer)")


class SectionInput(BaseModel):
    """One section to write. ``question``: the syllabus question the section answers,
    None for an outline section the syllabus lacks; ``snippets`` are whole sentences from the
    sources assigned to it, the only material the writer may cite."""

    topic: str
    section: OutlineSection
    snippets: list[Snippet]
    question: Question | None = None


class TextOutput(BaseModel):
    text: str


class RegenerateInput(BaseModel):
    """One report section to write again with the analyst's ``instruction`` ("shorter", "only
    phase III trials"): its ``heading``, its current ``text`` (citations ``[n]`` into the run's
    references), the syllabus ``question`` it answers (None for another outline section) and
    ``snippets`` numbered by the run's reference numbers, best first — with the current text's
    own citations, the only numbers the new text may cite. ``max_sentences``: the length the
    instruction leaves the section (sentences)."""

    topic: str
    heading: str
    text: str
    instruction: str
    snippets: list[Snippet]
    question: Question | None = None
    max_sentences: int = Field(default=6, ge=1, le=12)


class LeadQuestion(BaseModel):
    """A syllabus question as the lead sees it: where it is answered and whether it is."""

    key: str
    label: str
    description: str = ""
    heading: str
    status: str = Field(description="'answered' | 'insufficient'")
    sources_found: int = 0
    min_sources: int = 1


class LeadInput(BaseModel):
    """The lead gives the key finding per answered question (with citations) and says which
    questions the evidence leaves open; ``questions`` is [] for a report with no syllabus."""

    topic: str
    sections: list[ReportSection]
    questions: list[LeadQuestion] = Field(default_factory=list)
    relevance: dict[int, float] = Field(
        default_factory=dict,
        description="citation number [n] → how close its source's title is to the question, "
        "[0, 1]: a trial of the question itself before a neighbouring study",
    )


class PolishInput(BaseModel):
    topic: str
    text: str


@runtime_checkable
class Engine(Protocol):
    """What every engine implements. ``name`` is 'extractive' or 'litellm'; ``label`` is shown
    wherever its output is (the extractive one is "offline extractive mode"); ``extractive`` is
    True when the engine writes by quoting source sentences, with no language model (its answers'
    question keys are exactly the evidence judgement's, and reports carry its label);
    ``vectors`` is the run's sentence-vector cache, which the report's material, allocation and
    dedupe share with the engine's own steps; ``fallbacks()`` is ``{step: n}``, the steps the
    offline engine answered for a model that failed them ({} for an engine with no model)."""

    name: str
    label: str
    extractive: bool

    @property
    def vectors(self) -> Vectors: ...

    def fallbacks(self) -> dict[str, int]: ...

    def plan(self, inp: PlanInput) -> Plan: ...
    def survey_queries(self, inp: SurveyInput) -> QueryList: ...
    def related_outline(self, inp: RelatedInput) -> TopicOutline: ...
    def fit_syllabus(self, inp: FitInput) -> Syllabus: ...
    def personas(self, inp: PersonaInput) -> PersonaList: ...
    def ask_question(self, inp: AskInput) -> AskOutput: ...
    def question_to_queries(self, inp: QueryInput) -> QueryList: ...
    def answer_question(self, inp: AnswerInput) -> AnswerOutput: ...
    def assign_questions(self, inp: AssignInput) -> AssignOutput: ...
    def answer_and_assign(self, inp: AnswerAssignInput) -> AnswerAssignOutput: ...
    def compress(self, inp: CompressInput) -> SummaryCard: ...
    def analyze(self, inp: AnalysisInput) -> Analysis: ...
    def draft_outline(self, inp: OutlineInput) -> Outline: ...
    def refine_outline(self, inp: RefineInput) -> Outline: ...
    def write_section(self, inp: SectionInput) -> TextOutput: ...
    def write_lead(self, inp: LeadInput) -> TextOutput: ...
    def polish(self, inp: PolishInput) -> TextOutput: ...
