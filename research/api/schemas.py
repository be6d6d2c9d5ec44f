"""Request and response bodies of the HTTP API, and the one error body.

The request models check JSON types and reject unknown fields, and publish in
``/openapi.json`` the bounds and choices a schema can state; those, and everything else (the topic's text
rules, that a named corpus exists, a backend's key, a model, dates, languages…) is checked by the
one input gate the CLI and the dashboard use, ``research.jobs.make_config``
(``research.jobs.validation``), so the API accepts exactly what ``research run`` accepts and says
what to fix in the same words.

Every error answer has the body :class:`ErrorBody`; :func:`error_responses` documents it for the
statuses an operation can answer, so a client generated from the schema reads errors right.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from research.jobs import engine_options
from research.jobs.validation import MAX_TOPIC_CHARS
from research.models import (
    DEPTHS,
    ENGINES,
    GAP_TURNS_RANGE,
    MIN_DATABASES_RANGE,
    MODES,
    PERSPECTIVES_RANGE,
    TEMPLATE_CHOICES,
    TURNS_RANGE,
)

MAX_QUESTION_CHARS = 1000


def _bounds(lo: int, hi: int) -> dict[str, Any]:
    """The published bounds of an integer option; the input gate enforces them, with the
    message ``research run`` prints."""
    return {"minimum": lo, "maximum": hi}


class ErrorBody(BaseModel):
    """Every error answer: what to fix, a stable code, and for a 422 of the request's shape one
    entry per problem (``loc`` the field's path, ``msg``, ``type``; empty otherwise)."""

    detail: str = Field(description="what went wrong and what to fix, in a sentence")
    code: str = Field(description="a stable code, e.g. invalid_input, run_not_found")
    errors: list[dict[str, Any]] = Field(
        default_factory=list, description="the request's field problems (422), else empty"
    )


_MEANINGS = {
    401: "no token, or an unknown or revoked one (`WWW-Authenticate: Bearer`)",
    403: "the token's scope does not allow this (insufficient_scope, not_your_run), or a corpus "
    "that is not registered on the server (corpus_not_registered)",
    404: "no such run, report version, follow-up or corpus",
    409: "the run is not in a state for this request (report_not_ready, not_awaiting_review…)",
    422: "the request is not valid: the body says what to fix",
    429: "the token made too many requests this minute (`Retry-After`: seconds)",
    500: "the server's own settings are wrong (invalid_config, data_dir_unwritable)",
    503: "Redis cannot be reached (store_unavailable)",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for the error statuses an operation answers, each with
    :class:`ErrorBody` (and ``Retry-After`` / ``WWW-Authenticate`` where they are sent)."""
    out: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        entry: dict[str, Any] = {"model": ErrorBody, "description": _MEANINGS[status]}
        if status == 429:
            entry["headers"] = {
                "Retry-After": {"description": "seconds to wait", "schema": {"type": "string"}}
            }
        if status == 401:
            entry["headers"] = {
                "WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}
            }
        out[status] = entry
    return out


class RunRequest(BaseModel):
    """``POST /runs``: the options of ``research run`` as JSON (defaults as the CLI's)."""

    # strict: a JSON string is not a number nor a boolean (the schema says which is which)
    model_config = ConfigDict(extra="forbid", strict=True)

    topic: str = Field(
        description=f"the research question, up to {MAX_TOPIC_CHARS} characters of plain text",
        json_schema_extra={"minLength": 1, "maxLength": MAX_TOPIC_CHARS},
    )
    corpus: str | None = Field(
        None,
        description="a .jsonl file or a folder of documents registered on the server: inside a "
        "folder of RESEARCH_CORPUS_ROOTS (a relative path is taken inside each), else 403 "
        "corpus_not_registered; default: the server's default corpus. Named corpora go in "
        "`corpora`.",
    )
    template: str = Field(
        "auto",
        description="question syllabus",
        json_schema_extra={"enum": list(TEMPLATE_CHOICES)},
    )
    review: bool = Field(
        False,
        description="stop after planning in awaiting_review (then POST /runs/{id}/approve); "
        "STORM mode only",
    )
    max_perspectives: int = Field(
        4,
        json_schema_extra=_bounds(PERSPECTIVES_RANGE[0], PERSPECTIVES_RANGE[1]),
        description="personas",
    )
    max_turns: int = Field(
        3,
        json_schema_extra=_bounds(TURNS_RANGE[0], TURNS_RANGE[1]),
        description="dialogue turns per persona",
    )
    gap_turns: int | None = Field(
        None,
        json_schema_extra=_bounds(GAP_TURNS_RANGE[0], GAP_TURNS_RANGE[1]),
        description="rounds of gap searches after the turns (default 2; "
        "RESEARCH_LOCAL_GAP_TURNS, 0, when every model is local)",
    )
    depth: str = Field(
        "standard", description="report length", json_schema_extra={"enum": list(DEPTHS)}
    )
    engine: str | None = Field(
        None,
        description="extractive (offline, default) or litellm (implied by model/models)",
        json_schema_extra={"enum": [*ENGINES, None]},
    )
    mode: str = Field("storm", description="run mode", json_schema_extra={"enum": list(MODES)})
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
    min_databases: int = Field(
        1,
        json_schema_extra=_bounds(MIN_DATABASES_RANGE[0], MIN_DATABASES_RANGE[1]),
        description="distinct source types coverage requires",
    )
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

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(
        description="the question, plain text",
        json_schema_extra={"minLength": 1, "maxLength": MAX_QUESTION_CHARS},
    )
    research: bool = Field(
        False, description="research more first: one Analyst dialogue turn on the run's backends"
    )


class ApproveRequest(BaseModel):
    """``POST /runs/{id}/approve``: any of the plan documents, edited (as ``research approve
    --plan FILE``; the shapes ``research plan --json`` prints). An empty body approves the plan
    as it is."""

    model_config = ConfigDict(extra="forbid", strict=True)

    plan: dict[str, Any] | None = None
    syllabus: dict[str, Any] | None = None
    perspectives: list[dict[str, Any]] | None = None

    def edit(self) -> dict[str, Any]:
        """The edit for ``research.jobs.review.approve``: only the documents given."""
        return self.model_dump(exclude_none=True)
