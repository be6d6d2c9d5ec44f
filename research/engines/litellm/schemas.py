"""Reply schemas the model must produce, per step (pydantic; sent as ``response_format``).
Most are the step output models of ``research.engines.base``; the analysis reply names facts
by id and is mapped to ``research.models.Analysis`` by the engine."""

from __future__ import annotations

from pydantic import BaseModel, Field

from research.engines.base import AnswerOutput, AskOutput, AssignOutput, PersonaList, QueryList, TextOutput
from research.models import Outline, Plan, SummaryCard


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
    """Issue 12: the planner's questions for this query (validated by ``research.plan_edit``)."""

    questions: list[QuestionReply]


class AnalysisReply(BaseModel):
    cross_validated: list[ValidatedClaim] = Field(default_factory=list)
    contradictions: list[ContradictionReply] = Field(default_factory=list)


REPLY = {
    "plan": Plan, "survey_queries": QueryList, "related_outline": RelatedReply, "personas": PersonaList,
    "ask_question": AskOutput, "question_to_queries": QueryList, "answer_question": AnswerOutput,
    "assign_questions": AssignOutput, "compress": SummaryCard, "analyze": AnalysisReply,
    "draft_outline": Outline, "refine_outline": Outline, "write_section": TextOutput, "write_lead": TextOutput,
    "polish": TextOutput, "fit_syllabus": SyllabusReply,
}

ROLE = {
    "plan": "planner", "survey_queries": "planner", "related_outline": "planner", "personas": "planner",
    "ask_question": "question_asker", "question_to_queries": "expert", "answer_question": "expert",
    "assign_questions": "expert", "compress": "compressor", "analyze": "planner", "draft_outline": "outline",
    "refine_outline": "outline", "write_section": "writer", "write_lead": "writer", "polish": "polish",
    "fit_syllabus": "planner",
}
