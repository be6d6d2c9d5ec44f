"""Follow-up questions and the citation audit, as stored with a run.

Shapes only; the logic is in ``research.followup.{evidence,answer,audit,more}``. Stored as JSON
strings in Redis (``research.store.followups``): followups in ``run:{id}:followups`` (LIST), the
report's audit in the run document ``audit``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from research.models import Reference, now

Verdict = Literal["supported", "weak", "unsupported"]
MAX_QUESTION_CHARS = 1000  # a follow-up is a question, not a document


class CitationCheck(BaseModel):
    """The audit of one cited sentence against one cited source.

    ``score`` = ``cosine`` (MiniLM, best sentence window of the source) blended with ``overlap``
    (content-word recall of the sentence in that passage), both in [0, 1]; see
    ``research.followup.audit`` for the formula and thresholds.
    """

    where: str = Field(description="'report' or the follow-up id")
    sentence: str
    number: int = Field(description="the cited reference number [n]")
    source_id: str
    score: float
    cosine: float
    overlap: float
    verdict: Verdict
    passage: str = Field(default="", description="the best-matching passage of the cited source")
    on_question: bool = Field(
        default=True,
        description="the cited source is about the run's question (research.followup.audit)",
    )


class AuditSummary(BaseModel):
    """Counts of an audit plus its checks, worst first."""

    total: int = 0
    supported: int = 0
    weak: int = 0
    unsupported: int = 0
    off_question: int = Field(
        default=0, description="checks whose cited source is off the question"
    )
    checks: list[CitationCheck] = Field(default_factory=list)
    created_at: float = Field(default_factory=now)

    def line(self) -> str:
        """'41 of 43 citations supported; 2 weak' (the Report page's summary)."""
        parts = [f"{self.supported} of {self.total} citations supported"]
        if self.weak:
            parts.append(f"{self.weak} weak")
        if self.unsupported:
            parts.append(f"{self.unsupported} unsupported")
        if self.off_question:
            parts.append(f"{self.off_question} cite a source off the question")
        return "; ".join(parts)


class Followup(BaseModel):
    """One question asked of a run and its answer.

    ``answer`` cites ``[n]`` into the run's reference list: the report's references then every
    earlier follow-up's ``new_references``. ``sources_added``: sources research-more saved to the
    collector for this question (0 without research-more).
    """

    id: str
    question: str
    answer: str
    citations: list[int] = Field(default_factory=list)
    new_references: list[Reference] = Field(default_factory=list)
    sources_added: int = 0
    researched: bool = False
    found: bool = Field(default=True, description="False when nothing relevant was found")
    engine_label: str = ""
    extractive: bool = True
    audit: list[CitationCheck] = Field(default_factory=list)
    asked_at: float = Field(default_factory=now)
    answered_at: float = Field(default_factory=now)

    def cli_dict(self) -> dict[str, Any]:
        """``research ask --json``: {answer, citations, new_references, sources_added, audit, ...}."""
        return {
            "id": self.id,
            "question": self.question,
            "answer": self.answer,
            "citations": self.citations,
            "new_references": [r.model_dump(mode="json") for r in self.new_references],
            "sources_added": self.sources_added,
            "researched": self.researched,
            "found": self.found,
            "engine_label": self.engine_label,
            "extractive": self.extractive,
            "audit": [c.model_dump(mode="json") for c in self.audit],
        }


class PendingFollowup(BaseModel):
    """A follow-up asked but not yet answered (or failed): the job's resumable state, stored in
    ``run:{id}:followups:pending`` until the answer is appended.

    ``stage``: ``queued`` (no job has started it; a dead one is only taken for dead after
    ``PENDING_GRACE_S`` s) → ``researching`` → ``answering``. ``sources_before``: collector size
    (sources) when research-more started, so a resumed job excludes the same URLs and counts
    what its turn added. ``turn_number``: the Analyst follow-up turn number reserved for it; a
    stored turn with that number and this question is the job's own (not searched again).
    """

    id: str
    question: str
    research: bool = False
    stage: Literal["queued", "researching", "answering"] = "queued"
    asked_at: float = Field(default_factory=now)
    updated_at: float = Field(default_factory=now)
    sources_before: int | None = None
    turn_number: int | None = None
    attempts: int = Field(default=0, description="how many jobs started on it (1 = never resumed)")
