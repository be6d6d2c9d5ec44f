"""The Co-STORM engine steps (docs/design.md § Co-STORM round-table; Co-STORM paper §3 and appendix
B): IO models and the
``CoStormSteps`` protocol. It lives with the engines, which implement it
(``research.engines.extractive.costorm`` offline, ``research.engines.litellm.costorm`` with a
model); ``research.engines.factory.costorm_steps(engine)`` picks the implementation for a run.

Citation convention as in ``research.engines.base``: numbered material (``results``,
``items``) is cited with ``[n]``, n being its 1-based number.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from research.engines.base import AnswerOutput, PersonaList, QueryList, TextOutput
from research.models import CoStormTurn, Intent, Perspective, Question, SearchResult


class ExpertsInput(BaseModel):
    """Warm start: the background search results of the topic → N experts."""

    topic: str
    background: list[SearchResult]
    n: int = Field(ge=1)


class IntentInput(BaseModel):
    """An expert chooses its intent from the discourse history (oldest turn first)."""

    topic: str
    expert: Perspective
    history: list[CoStormTurn]


class IntentOutput(BaseModel):
    intent: Intent


class ExpertQuestionInput(BaseModel):
    """An expert's question turn. ``next_focus``: uncovered syllabus questions (docs/design.md § Source collector)."""

    topic: str
    expert: Perspective
    intent: Intent
    history: list[CoStormTurn]
    next_focus: list[Question] = Field(default_factory=list)


class TurnQueryInput(BaseModel):
    """Search queries for an answer turn (``question``: the question being answered)."""

    topic: str
    expert: Perspective
    intent: Intent
    question: str
    history: list[CoStormTurn]


class ExpertAnswerInput(BaseModel):
    """A cited answer turn from the filtered retrieved results (numbered 1..k)."""

    topic: str
    expert: Perspective
    intent: Intent
    question: str
    history: list[CoStormTurn]
    results: list[SearchResult]


class UtteranceInput(BaseModel):
    """Polish an utterance in the discourse (citations ``[n]`` must stay verbatim)."""

    topic: str
    role: str
    intent: Intent
    utterance: str
    history: list[CoStormTurn]


class PoolItem(BaseModel):
    """A piece of retrieved information not cited yet (moderator material, docs/design.md § Co-STORM round-table).

    ``question``: the question it was retrieved for (q of the α formula); ``turn``: the turn
    that retrieved it.
    """

    text: str
    question: str
    turn: int
    result: SearchResult


class ModeratorInput(BaseModel):
    """Moderator: a new question from the top-ranked unused information (numbered 1..k)."""

    topic: str
    items: list[PoolItem]
    concepts: list[str] = Field(description="mind-map node names already discussed")
    history: list[CoStormTurn]


class ModeratorOutput(BaseModel):
    """The moderator's utterance (``question``, may quote items with ``[n]``); ``question_only``:
    the bare question the experts answer next ('' = the whole utterance); ``cited``: numbers of
    the items it is grounded in."""

    question: str
    question_only: str = ""
    cited: list[int] = Field(default_factory=list)


class ExpertUpdateInput(BaseModel):
    """Update the participant list after a moderator question (keep ``n`` experts)."""

    topic: str
    experts: list[Perspective]
    question: str
    n: int = Field(ge=1)


class PlacementInput(BaseModel):
    """Mind-map insert (appendix B): choose one of the candidate node paths (most similar first,
    ' > '-joined from the root) or, when ``allow_new``, a new child under one of them."""

    topic: str
    question: str
    text: str
    candidates: list[str]
    similarities: list[float]
    allow_new: bool = True
    item_similarities: list[float] = Field(
        default_factory=list,
        description="per candidate: mean cosine of ``text`` to the items already "
        "in its subtree (its centroid), -1 when it holds none; [] = not computed",
    )


class PlacementOutput(BaseModel):
    """``path``: the chosen candidate; ``new_node``: name of a child to create under it ('' = none)."""

    path: str
    new_node: str = ""


class SubtopicInput(BaseModel):
    """Mind-map reorganize: new subtopic names for an over-full concept from its items."""

    topic: str
    path: str
    items: list[str]
    max_subtopics: int = Field(default=4, ge=2)


class SubtopicOutput(BaseModel):
    """``names``: new subtopics; ``assignment`` (optional): per input item, the index into
    ``names`` of its subtopic (-1 = stays in the parent); [] = the map re-inserts items itself."""

    names: list[str]
    assignment: list[int] = Field(default_factory=list)


@runtime_checkable
class CoStormSteps(Protocol):
    """What an engine implements for Co-STORM mode (docs/design.md § Co-STORM round-table).
    Deterministic for the extractive engine; the litellm engine prompts a model per step."""

    name: str
    label: str

    def generate_experts(self, inp: ExpertsInput) -> PersonaList: ...
    def choose_intent(self, inp: IntentInput) -> IntentOutput: ...
    def expert_question(self, inp: ExpertQuestionInput) -> TextOutput: ...
    def turn_queries(self, inp: TurnQueryInput) -> QueryList: ...
    def expert_answer(self, inp: ExpertAnswerInput) -> AnswerOutput: ...
    def polish_utterance(self, inp: UtteranceInput) -> TextOutput: ...
    def moderator_question(self, inp: ModeratorInput) -> ModeratorOutput: ...
    def update_experts(self, inp: ExpertUpdateInput) -> PersonaList: ...
    def choose_placement(self, inp: PlacementInput) -> PlacementOutput: ...
    def subtopics(self, inp: SubtopicInput) -> SubtopicOutput: ...
