"""Pydantic data shared by every module (docs/design.md § Terms).

Units: timestamps are Unix seconds (float); ``*_s`` fields are seconds; ``cost_usd`` is USD.
All models round-trip through JSON strings in Redis (``model_dump_json`` /
``model_validate_json``).

Size: the kernel's data in one place is the point (every layer imports it, none defines its own);
the models are declarations, grouped by section below.
"""

from __future__ import annotations

import re
import time
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, Field, PrivateAttr

RunStatus = Literal[
    "pending",
    "planning",
    "awaiting_review",
    "conversations",
    "analyzing",
    "synthesizing",
    "complete",
    "failed",
    "cancelled",
    "interrupted",
]
ACTIVE_STATUSES = ("pending", "planning", "conversations", "analyzing", "synthesizing")
PHASES = ("planning", "conversations", "analyzing", "synthesizing", "complete")
# ``awaiting_review`` is neither active nor terminal: the run waits, with no job and no
# lease, for the analyst to approve (or cancel) its plan; it is never marked interrupted or auto-resumed.
REVIEW_STATUS: Final = "awaiting_review"


def now() -> float:
    """Current time in Unix seconds."""
    return time.time()


# ----------------------------------------------------- syllabus (docs/design.md § Source collector)
class Question(BaseModel):
    """One syllabus question (docs/design.md § Question syllabus: ``STORM_QUESTIONS`` entry)."""

    key: str = Field(description="e.g. 'clinical.efficacy'")
    label: str
    description: str
    min_sources: int = Field(ge=1)


class Syllabus(BaseModel):
    """The run's research syllabus: named template plus its questions."""

    name: str
    questions: list[Question]

    def keys(self) -> list[str]:
        return [q.key for q in self.questions]

    def get(self, key: str) -> Question | None:
        return next((q for q in self.questions if q.key == key), None)


# -------------------------------------------------- plan (docs/design.md § Coordinator and planner)
class Step(BaseModel):
    """A plan step; sequential and independently executable (docs/design.md § Coordinator and planner)."""

    step_id: int
    title: str
    description: str


class Plan(BaseModel):
    """Planner output, exactly the schema (docs/design.md § Coordinator and planner): ``{plan_title, steps}``."""

    plan_title: str
    steps: list[Step]


# ---------------------------------------------------------------- search
class SearchResult(BaseModel):
    """One retrieved document.

    ``snippets`` are the passages shown to engines; ``text`` is the full document text when the
    backend has it (kept out of prompts; it goes to the raw artifact).
    """

    url: str
    title: str
    snippets: list[str] = Field(default_factory=list)
    text: str = ""
    source_type: str = "web"
    external_id: str = ""
    doc_id: str = ""
    published: str | None = Field(
        default=None, description="publication date YYYY[-MM[-DD]] when the backend knows it"
    )
    authors: list[str] = Field(default_factory=list, description="'Family Initials' as listed")
    journal: str = ""
    score: float = 0.0
    backend: str = "local"
    query: str = ""
    found_by: list[dict[Any, Any]] = Field(
        default_factory=list, description="[{backend, query}] that returned it"
    )


# -------------------------------------------- perspectives (docs/design.md § Perspective discovery)
class TopicOutline(BaseModel):
    """Structure extracted from a related topic found by the survey (docs/design.md § Perspective discovery)."""

    topic: str
    sections: list[str]
    source: str = ""


class Perspective(BaseModel):
    """A persona for one conversation (docs/design.md § Perspective discovery, STORM GenPersona)."""

    name: str
    focus: str
    questions: list[str] = Field(default_factory=list)


# ----------------------------------------- conversations (docs/design.md § Simulated conversations)
class TurnSource(BaseModel):
    """A source as cited inside one dialogue turn: local number ``n`` → collector ids."""

    n: int
    source_id: str
    citation_id: str = ""
    title: str
    url: str
    source_type: str
    external_id: str = ""
    snippet: str = ""


class DialogueTurn(BaseModel):
    """One WikiWriter question + TopicExpert answer (docs/design.md § Simulated conversations: ``DialogueTurn``).

    ``answer`` cites ``[n]`` where n indexes ``sources`` (``TurnSource.n``).
    """

    perspective: str
    turn_number: int
    question: str
    answer: str
    search_queries: list[str] = Field(default_factory=list)
    sources: list[TurnSource] = Field(default_factory=list)
    focus_questions: list[str] = Field(
        default_factory=list, description="syllabus keys steered by next_focus"
    )
    artifact_files: list[str] = Field(default_factory=list)
    started_at: float = Field(default_factory=now)
    ended_at: float = Field(default_factory=now)


class ConversationResult(BaseModel):
    """All turns for one perspective plus the exit reason."""

    perspective: Perspective
    turns: list[DialogueTurn]
    ended_by: Literal["thanks", "max_turns", "no_results", "cancelled"] = "max_turns"


# ------------------------------------- Co-STORM round-table (docs/design.md § Co-STORM round-table)
Intent = Literal["original_question", "information_request", "potential_answer", "further_details"]
QUESTION_INTENTS = ("original_question", "information_request")
ANSWER_INTENTS = ("potential_answer", "further_details")


class CoStormTurn(BaseModel):
    """One round-table utterance (docs/design.md § Co-STORM round-table): an expert, the Moderator or the Analyst.

    ``utterance`` cites ``[n]`` where n indexes ``sources`` (``TurnSource.n``); question turns
    usually cite nothing (a moderator question cites the unused information it came from).
    ``mind_map_nodes``: paths of the mind-map nodes the turn's information was inserted under.
    """

    turn_number: int = Field(ge=1)
    role: str = Field(description="expert name, 'Moderator' or 'Analyst'")
    kind: Literal["expert", "moderator", "analyst"] = "expert"
    intent: Intent
    utterance: str
    question: str = Field(default="", description="for answer turns: the question being answered")
    queries: list[str] = Field(default_factory=list)
    sources: list[TurnSource] = Field(default_factory=list)
    mind_map_nodes: list[str] = Field(default_factory=list)
    warm_start: bool = False
    artifact_files: list[str] = Field(default_factory=list)
    started_at: float = Field(default_factory=now)
    ended_at: float = Field(default_factory=now)


# --------------------------------------------- artifacts (docs/design.md § Tool-result compression)
class SummaryCard(BaseModel):
    """Compression output, exactly docs/design.md § Summary card."""

    summary_title: str
    summary: str
    extraction: list[str] = Field(default_factory=list)
    is_useful: bool


class ArtifactRecord(BaseModel):
    """A stored tool call: raw file on disk + its summary card.

    ``artifact_file`` is relative to the run's artifacts dir
    (``{data_dir}/research_artifacts/{run_id}``).
    """

    artifact_file: str
    tool_name: str
    step_id: int
    step_title: str
    perspective: str = ""
    tool_input: str = ""
    raw_chars: int
    raw_tokens: int = 0
    card_tokens: int = 0
    card: SummaryCard
    created_at: float = Field(default_factory=now)


# ---------------------------------------------------- collector (docs/design.md § Source collector)
class SourceRecord(BaseModel):
    """A source saved by ``save_source`` (docs/design.md § Source collector), as stored in Redis."""

    source_id: str
    citation_id: str
    source_type: str
    external_id: str
    url: str
    title: str
    key_excerpts: str = ""
    relevant_questions: list[str] = Field(default_factory=list)
    found_by: list[str] = Field(default_factory=list, description="'backend: query' that found it")
    saved_at: float = Field(default_factory=now)


# ------------------------------------------------------------- analysis (docs/design.md § Analysis)
class Claim(BaseModel):
    """A claim backed by ``source_ids`` (cross-validated when ≥ 2)."""

    text: str
    source_ids: list[str]


class Contradiction(BaseModel):
    """Two sources that disagree on the same point."""

    subject: str
    statement_a: str
    source_a: str
    statement_b: str
    source_b: str
    explanation: str = ""


class Analysis(BaseModel):
    """Output of the analysis phase: cross-validation and contradiction detection."""

    facts_total: int = 0
    cross_validated: list[Claim] = Field(default_factory=list)
    single_source: int = 0
    contradictions: list[Contradiction] = Field(default_factory=list)


# ---------------------------------------------------------------- outline & report
class OutlineSection(BaseModel):
    heading: str
    subsections: list[str] = Field(default_factory=list)


class Outline(BaseModel):
    """A report outline: level-1 sections with optional level-2 subsections."""

    sections: list[OutlineSection]


class Reference(BaseModel):
    """One entry of the references list; ``number`` is 1..N by first appearance."""

    number: int
    source_id: str
    title: str
    url: str
    source_type: str
    external_id: str = ""


class ReportSection(BaseModel):
    heading: str
    text: str = Field(description="markdown; citations as [n] into Report.references")
    level: int = Field(
        default=1,
        ge=1,
        le=3,
        description="nesting: 1 = top section (##), 2 = ###, 3 = ####; "
        "Co-STORM sets it from the mind-map depth",
    )


class EvidencePassage(BaseModel):
    """A passage of a saved source that answers a syllabus question (docs/design.md § Terms:
    evidence): the question key, the source (collector id ``src_012``), the whole-sentence
    passage, its ``research.evidence.judge.evidence_score`` in [0, 1] and its character offsets
    ``[start, end)`` in the source's full text (the raw artifact's ``text``)."""

    question: str
    source_id: str
    passage: str
    score: float = Field(ge=0, le=1)
    start: int = Field(default=0, ge=0)
    end: int = Field(default=0, ge=0)
    # the family of outcome it reports read with its document's short forms ("12 LR" reports
    # recurrences: ``research.text.short_forms``); None: read from the passage alone
    outcome: str | None = None


class QuestionStop(BaseModel):
    """Why research on one syllabus question stopped: ``met`` (enough sources with evidence)
    or not, and the reason in words ("met in the planned turns", "met after 3 gap queries",
    "no new evidence after 6 gap queries"), with the gap queries searched for it."""

    key: str
    met: bool
    reason: str
    gap_queries: list[str] = Field(default_factory=list)


class GapReport(BaseModel):
    """The gap phase of a run (docs/design.md § Completion: ``check_completion`` as the loop's stop rule): the rounds
    done, whether the syllabus was complete at the end, and per question why it stopped."""

    rounds: int = 0
    ready: bool = False
    questions: list[QuestionStop] = Field(default_factory=list)


class ReportQuestion(BaseModel):
    """How the report answers one syllabus question: the section (``heading``) that
    answers it, ``status`` "answered" (enough sources and usable sentences) or "insufficient"
    (stated in that section), and ``sources``: the reference numbers its section cites."""

    key: str
    label: str
    heading: str
    status: Literal["answered", "insufficient"]
    sources: list[int] = Field(default_factory=list)
    sources_found: int = Field(
        default=0, ge=0, description="sources the collector assigned to the question"
    )
    min_sources: int = Field(default=1, ge=1)
    evidence: list[EvidencePassage] = Field(
        default_factory=list, description="the passages that count for the question"
    )
    stop_reason: str = Field(default="", description="why research on it stopped")


class Report(BaseModel):
    """The final cited report. ``markdown`` is the whole rendered document; ``questions``: one
    entry per syllabus question in syllabus order ([] for reports stored before reports carried questions)."""

    title: str
    lead: str
    sections: list[ReportSection]
    references: list[Reference]
    markdown: str
    engine_label: str = ""
    questions: list[ReportQuestion] = Field(default_factory=list)

    def section_levels(self) -> list[int]:
        """Nesting level (1–3) of each section: ``ReportSection.level``; for reports stored
        before that field existed, the ``##``/``###``/``####`` headings of ``markdown`` when they
        name the sections in order; else all 1."""
        levels = [s.level for s in self.sections]
        if any(lv > 1 for lv in levels):
            return levels
        heads = [
            (len(m.group(1)) - 1, m.group(2).strip())
            for m in re.finditer(r"^(#{2,4}) (.+)$", self.markdown, flags=re.M)
            if m.group(2).strip() != "References"
        ]
        if [h for _, h in heads] == [s.heading.strip() for s in self.sections]:
            return [lv for lv, _ in heads]
        return levels


# ---------------------------------------------------------------- runs
class CoStormSettings(BaseModel):
    """Co-STORM round-table parameters (docs/design.md § Co-STORM round-table; the Co-STORM paper's defaults)."""

    experts: int = Field(default=3, ge=1, le=8, description="N: experts generated at warm start")
    max_node_items: int = Field(
        default=10, ge=2, le=100, description="K: items before a mind-map node is reorganized"
    )
    moderator_after: int = Field(
        default=2,
        ge=1,
        le=10,
        description="L: consecutive answer turns before the moderator speaks",
    )
    alpha: float = Field(default=0.5, ge=0.0, le=1.0, description="moderator rerank exponent α")
    query_budget: int = Field(
        default=30, ge=1, le=500, description="search queries before the round-table stops"
    )
    max_turns: int = Field(default=20, ge=1, le=200, description="turn cap of the round-table")


TemplateName = Literal[
    "auto",
    "comparison",
    "condition",
    "device",
    "drug",
    "event",
    "general",
    "intervention",
    "person",
]
"""The question-syllabus templates a run may start from: ``auto`` first (the default,
fitted to the topic), then the named templates of ``research.planning.syllabus.TEMPLATES``."""


class RunConfig(BaseModel):
    """Everything that defines a run. Never contains secrets (only model names).

    ``search``: backends to query ('local' = the run's corpus). ``corpora``: named
    ingested corpora searched besides ``corpus``. ``models``: role → litellm model name.
    ``budget_usd`` / ``budget_tokens``: per-run LLM caps (None = no cap). ``min_databases``: distinct
    source types (pubmed, web, local...) coverage needs before it is complete (1 = off).
    ``template``: ``auto`` (default: a syllabus fitted to the topic), ``drug`` or
    ``general``. ``review``: stop in ``awaiting_review`` after planning until the analyst approves.
    ``cassette_mode`` / ``cassette_path``: this run's LLM record/replay cassette (``--record`` /
    ``--replay``; a file path, never a key). ``notify``: this run's notification targets in
    their redacted display form (``https://hooks.example.org/… #1a2b3c``); the targets
    themselves (URLs that may hold tokens) ride only in a private attribute from the input gate
    to ``research.jobs.create_run``, which stores them encrypted apart from the run
    (``research.notify.targets``), so they never reach the run's hash, exports or logs.
    """

    topic: str
    mode: Literal["storm", "costorm"] = "storm"
    corpus: str = ""
    template: TemplateName = "auto"
    review: bool = False
    max_perspectives: int = Field(default=4, ge=1, le=12)
    max_turns: int = Field(default=3, ge=1, le=10)
    results_per_query: int = Field(default=6, ge=1, le=20)
    gap_turns: int = Field(
        default=2,
        ge=0,
        le=5,
        description="rounds of gap searches for unmet questions after the planned turns (0 = none)",
    )
    depth: Literal["brief", "standard", "deep"] = Field(
        default="standard", description="report length: about 300 / 1,000 / 2,500 words"
    )
    engine: Literal["extractive", "litellm"] = "extractive"
    models: dict[str, str] = Field(default_factory=dict)
    search: list[str] = Field(default_factory=lambda: ["local"])
    corpora: list[str] = Field(default_factory=list)
    min_databases: int = Field(
        default=1,
        ge=1,
        le=8,
        description="'sources span multiple databases': "
        "check_completion is ready only with sources of this many source types",
    )
    budget_usd: float | None = Field(default=None, ge=0)
    budget_tokens: int | None = Field(default=None, ge=0)
    costorm: CoStormSettings = Field(default_factory=CoStormSettings)
    cassette_mode: Literal["record", "replay"] | None = Field(
        default=None,
        description="record every LLM call to cassette_path, or answer every call from it (no network)",
    )
    cassette_path: str = ""
    since: str | None = Field(
        default=None,
        pattern=r"^\d{4}(-\d{2}){0,2}$",
        description="date window: sources published on or after YYYY[-MM[-DD]] "
        "(research.search.since)",
    )
    language: str = Field(
        default="en",
        pattern=r"^[a-z]{2}$",
        description="ISO 639-1 code of the report's language (litellm engine; research.llm.language)",
    )
    notify: list[str] = Field(
        default_factory=list,
        description="notification targets of this run, redacted for display (research.notify)",
    )
    # the full target URLs (may hold tokens): never serialised; see research.notify.targets
    _notify_targets: list[str] = PrivateAttr(default_factory=list)

    @property
    def cassette(self) -> tuple[str, str] | None:
        """This run's LLM cassette ``(mode, path)`` or None (then the process-wide one applies)."""
        return (
            (self.cassette_mode, self.cassette_path)
            if self.cassette_mode and self.cassette_path
            else None
        )

    @property
    def notify_targets(self) -> list[str]:
        """The full notification target URLs attached at the input gate; [] on a config read
        back from Redis (they are never serialised)."""
        return list(self._notify_targets)

    def attach_notify_targets(self, targets: list[str]) -> None:
        """Keep the full target URLs on this object only (``research.notify.targets.attach``)."""
        self._notify_targets = list(targets)

    @property
    def cassette_replay(self) -> bool:
        """True when this run answers its LLM calls from a cassette (no provider key needed)."""
        return self.cassette_mode == "replay" and bool(self.cassette_path)


def config_bounds(name: str) -> tuple[int, int]:
    """``(ge, le)`` of the numeric ``RunConfig`` field ``name`` (its ``Field(ge=, le=)``), so the CLI,
    the launch form and ``jobs.make_config`` state no limit of their own.

    Raises:
        KeyError: no such field. ValueError: the field has no lower and upper bound.
    """
    meta = RunConfig.model_fields[name].metadata
    lo = next((m.ge for m in meta if hasattr(m, "ge")), None)
    hi = next((m.le for m in meta if hasattr(m, "le")), None)
    if lo is None or hi is None:
        raise ValueError(f"RunConfig.{name} has no ge/le bounds")
    return lo, hi


def config_choices(name: str) -> tuple[str, ...]:
    """The values of the ``Literal`` ``RunConfig`` field ``name`` (e.g. ``mode``, ``engine``).

    Raises:
        KeyError: no such field. ValueError: the field is not a Literal.
    """
    values = tuple(a for a in get_args(RunConfig.model_fields[name].annotation) if a is not None)
    if not values or not all(isinstance(v, str) for v in values):
        raise ValueError(f"RunConfig.{name} is not a Literal of strings")
    return values


PERSPECTIVES_RANGE = config_bounds("max_perspectives")  # (1, 12)
TURNS_RANGE = config_bounds("max_turns")  # (1, 10)
MIN_DATABASES_RANGE = config_bounds("min_databases")  # (1, 8)
ENGINES = config_choices("engine")  # ("extractive", "litellm")
MODES = config_choices("mode")  # ("storm", "costorm")
TEMPLATE_CHOICES = config_choices("template")  # ("auto", "comparison", "device", …)
DEPTHS = config_choices("depth")  # ("brief", "standard", "deep")
GAP_TURNS_RANGE = config_bounds("gap_turns")  # (0, 5)


class RunState(BaseModel):
    """The run's hash in Redis, typed."""

    run_id: str
    status: RunStatus
    topic: str
    mode: str
    config: RunConfig
    created_at: float
    updated_at: float
    finished_at: float | None = None
    error: str = ""
    error_code: str = ""
    engine_label: str = ""
    report_path: str = ""
    wall_s: float = 0.0
    budget_exhausted: bool = False
    stop_reason: str = Field(
        default="", description="why the run stopped early or how Co-STORM ended"
    )
    review_state: str = Field(
        default="", description="plan review: '' (none), 'awaiting', 'approved'"
    )
    llm_queued: int = Field(
        default=0,
        description="calls of the run's model waiting for a free slot while the run has one "
        "waiting (research.llm.slots); 0 when none of the run's calls waits",
    )


class Event(BaseModel):
    """One entry of the run's Redis Stream; ``id`` is the stream id."""

    id: str = ""
    ts: float = Field(default_factory=now)
    type: str
    data: dict[Any, Any] = Field(default_factory=dict)


class Usage(BaseModel):
    """LLM accounting totals for a run (zeros for the extractive engine)."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # of prompt_tokens, read from the provider's prompt cache
    cost_usd: float = 0.0
