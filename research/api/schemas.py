"""Request and response bodies of the HTTP API.

The request models only check JSON types and reject unknown fields; every limit and choice
(turns 1–6, known engines, templates, corpora, dates, languages…) is checked by the one input
gate the CLI and the dashboard use, ``research.jobs.make_config`` (``research.jobs.validation``),
so the API accepts exactly what ``research run`` accepts and says what to fix in the same words.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from research.jobs import engine_options


class RunRequest(BaseModel):
    """``POST /runs``: the options of ``research run`` as JSON (defaults as the CLI's)."""

    model_config = ConfigDict(extra="forbid")

    topic: str = Field(description="the research question, up to 500 characters")
    corpus: str | None = Field(
        None,
        description="a .jsonl file or a folder of documents on the server "
        "(default: RESEARCH_CORPUS or the shared corpus)",
    )
    template: str = Field(
        "auto",
        description="question syllabus: auto, comparison, device, drug, general or intervention",
    )
    review: bool = Field(
        False, description="stop after planning in awaiting_review (then POST /runs/{id}/approve)"
    )
    max_perspectives: int = Field(4, description="personas, 1–8")
    max_turns: int = Field(3, description="dialogue turns per persona, 1–6")
    gap_turns: int = Field(2, description="rounds of gap searches after the turns, 0–5")
    depth: str = Field("standard", description="report length: brief, standard or deep")
    engine: str | None = Field(
        None, description="extractive (offline, default) or litellm (implied by model/models)"
    )
    mode: str = Field("storm", description="storm or costorm")
    costorm: dict[str, int | float] | None = Field(
        None,
        description="Co-STORM settings: experts, max_node_items, moderator_after, alpha, "
        "query_budget, max_turns",
    )
    search: list[str] | str | None = Field(
        None,
        description="search backends: local, pubmed, clinicaltrials, wikipedia, brave, tavily, "
        "serper, searxng (default local)",
    )
    corpora: list[str] | str | None = Field(None, description="ingested corpora to search too")
    min_databases: int = Field(1, description="distinct source types coverage requires, 1–8")
    model: str | None = Field(None, description="litellm model for every role")
    models: dict[str, str] | None = Field(None, description="litellm model per role")
    budget_usd: float | None = Field(None, description="stop LLM calls after this many USD")
    budget_tokens: int | None = Field(None, description="stop LLM calls after this many tokens")
    since: str | None = Field(None, description="only sources since YYYY[-MM[-DD]]")
    language: str | None = Field(None, description="report language (ISO 639-1; default en)")
    notify: list[str] | None = Field(
        None,
        description="webhook (http/https) or Apprise URLs told when the run completes, fails or "
        "awaits review; kept encrypted, shown back only redacted (docs/notifications.md)",
    )

    def config_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``research.jobs.make_config`` besides the topic, built as
        ``research run`` builds them: ``model`` applies to every role (``"*"``) under the
        per-role ``models``, and either implies the litellm engine unless one is named."""
        out: dict[str, Any] = self.model_dump(
            include={
                "corpus",
                "template",
                "review",
                "max_perspectives",
                "max_turns",
                "gap_turns",
                "depth",
                "mode",
                "min_databases",
                "since",
                "language",
            }
        )
        if self.costorm is not None:
            out["costorm"] = dict(self.costorm)
        if self.search is not None or self.corpora is not None:
            out.update(search=self.search, corpora=self.corpora)
        out.update(engine_options(self.engine, self.model, self.models))
        if self.budget_usd is not None:
            out["budget_usd"] = self.budget_usd
        if self.budget_tokens is not None:
            out["budget_tokens"] = self.budget_tokens
        if self.notify:
            out["notify"] = list(self.notify)
        return out


class RunCreated(BaseModel):
    """``POST /runs``' answer: the new run's id, status and where to follow it."""

    run_id: str
    status: str
    links: dict[str, str]


class RunRow(BaseModel):
    """One row of ``GET /runs`` (as ``research list --json``, plus mode and finish time)."""

    run_id: str
    status: str
    topic: str
    mode: str
    created: str = Field(description="ISO 8601 UTC")
    created_at: float = Field(description="Unix seconds")
    finished_at: float | None = Field(description="Unix seconds, or null while not ended")
    sources: int


class AskRequest(BaseModel):
    """``POST /runs/{id}/ask``: a follow-up question (as ``research ask``)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="the question, up to 1,000 characters")
    research: bool = Field(
        False, description="research more first: one Analyst dialogue turn on the run's backends"
    )


class ApproveRequest(BaseModel):
    """``POST /runs/{id}/approve``: any of the plan documents, edited (as ``research approve
    --plan FILE``; the shapes ``research plan --json`` prints). An empty body approves the plan
    as it is."""

    model_config = ConfigDict(extra="forbid")

    plan: dict[str, Any] | None = None
    syllabus: dict[str, Any] | None = None
    perspectives: list[dict[str, Any]] | None = None

    def edit(self) -> dict[str, Any]:
        """The edit for ``research.jobs.review.approve``: only the documents given."""
        return self.model_dump(exclude_none=True)
