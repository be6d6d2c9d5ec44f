"""Reply models that exist only for the litellm engine's prompts (pydantic; sent as
``response_format``): the model names facts, candidates and questions by id or number and the
engine maps the reply back to ``research.models`` / ``research.engines.base`` types. The other
steps reply with their output model directly (see ``research.engines.steps.STEPS``)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RelatedReply(BaseModel):
    topic: str
    sections: list[str]


class ValidatedClaim(BaseModel):
    text: str
    fact_ids: list[str] = Field(description="ids of the facts (from ≥ 2 sources) that support it")


class ContradictionReply(BaseModel):
    subject: str
    fact_a: str
    fact_b: str
    explanation: str = ""


class QuestionReply(BaseModel):
    key: str
    label: str
    description: str = ""
    min_sources: int = 3


class SyllabusReply(BaseModel):
    """The planner's questions for this query (validated by ``research.planning.edit``)."""

    questions: list[QuestionReply]


class AnalysisReply(BaseModel):
    cross_validated: list[ValidatedClaim] = Field(default_factory=list)
    contradictions: list[ContradictionReply] = Field(default_factory=list)


class AnswerAssignReply(BaseModel):
    """The answer (cited ``[n]``) and, per numbered result, its syllabus keys and a key
    excerpt — one reply over one copy of the results (was two calls: answer, assign)."""

    answer: str
    cited: list[int] = Field(default_factory=list)
    relevant_questions: list[list[str]] = Field(
        default_factory=list, description="per result, syllabus keys"
    )
    key_excerpts: list[str] = Field(
        default_factory=list, description="per result, its most relevant sentence"
    )


class PlacementReply(BaseModel):
    """Mind-map placement reply: ``choice`` = 1-based number of the chosen candidate;
    ``new_node`` = a new concept to create under it ('' = place it in the candidate itself)."""

    choice: int = Field(ge=1)
    new_node: str = ""
