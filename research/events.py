"""Every event a run can emit, declared once: its name, its payload fields
and its human line.

A run's events are entries of the Redis Stream ``run:{id}:events`` (docs/design.md § State in Redis),
each ``{ts, type, data}`` with ``data`` a JSON object. This module is the one list of them:

- ``EventType`` — a ``Literal`` of every event name; emitters type their argument with it.
- ``EVENTS`` — name → :class:`EventSpec`: a pydantic model of the payload (``extra="forbid"``:
  an undeclared key is an error, so is a missing required one) and the one-line human
  description the dashboard shows (``research.ui.events.describe_event``).
- :func:`check_event` — what ``RunStore.emit`` calls before writing; raises
  :class:`~research.errors.InvariantError` naming the unknown type, the missing or the extra field.

The payload stored in Redis is the emitter's dict unchanged (validation does not coerce or
reorder it), so runs stored before this module still read and render the same.

To add an event: add its name to ``EventType`` and an ``EVENTS`` entry with its fields and its
line (the import-time check below and ``tests/test_events.py`` fail until both exist); then emit
it with ``store.emit(run_id, "your.event", {...})`` or ``ctx.emit("your.event", {...})``.

A layer of its own: imports only pydantic and ``research.errors``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from research.errors import InvariantError

EventType = Literal[
    # run lifecycle
    "run.created",
    "status",
    "run.resumed",
    "run.interrupted",
    "resume.requested",
    "cancel.requested",
    "error.traceback",
    "index.progress",
    # planning and plan review
    "coordinator.routed",
    "plan.ready",
    "survey.done",
    "syllabus.fitted",
    "syllabus.fallback",
    "perspectives.ready",
    "review.awaiting",
    "plan.edited",
    "plan.approved",
    # conversations and sources
    "tool.called",
    "search.failed",
    "search.empty",
    "scrape.failed",
    "turn.finished",
    "conversation.completed",
    "coverage.checked",
    "evidence.unsupported",
    "gap.round",
    "gap.question",
    # analysis and report
    "analysis.done",
    "outline.ready",
    "outline.refine_failed",
    "section.written",
    "section.skipped",
    "report.ready",
    # litellm engine
    "llm.cassette",
    "llm.fallback",
    "llm.offline",
    "budget.exhausted",
    # Co-STORM round table
    "costorm.resumed",
    "costorm.warm_start",
    "costorm.stopped",
    "costorm.experts_updated",
    "analyst.posted",
    # follow-up questions and the citation audit
    "followup.asked",
    "followup.failed",
    "followup.research.started",
    "followup.research.finished",
    "followup.answered",
    "followup.resumed",
    "followup.resume.requested",
    "audit.finished",
    # the analyst's desk: report versions, comments, date window
    "report.versioned",
    "comment.added",
    "comment.status",
    "since.unsupported",
    # notifications of the run's end (research.notify)
    "notification.sent",
    "notification.failed",
]


class Opt:
    """Marks an optional payload field: ``Opt(str)`` may be absent (a bare type is required)."""

    def __init__(self, type_: Any) -> None:
        self.type_ = type_


@dataclass(frozen=True)
class EventSpec:
    """One declared event: ``model`` validates the payload; ``line`` is its human line, a
    ``str.format`` template over the payload (lists join with ", ", absent fields read "?") or a
    function of the payload dict returning the line."""

    model: type[BaseModel]
    line: str | Callable[[dict[str, Any]], str]


def _event(name: str, line: str | Callable[[dict[str, Any]], str], **fields: Any) -> EventSpec:
    defs: dict[str, Any] = {
        f: ((t.type_ | None, None) if isinstance(t, Opt) else (t, ...)) for f, t in fields.items()
    }
    model = create_model(
        "Event_" + name.replace(".", "_"), __config__=ConfigDict(extra="forbid"), **defs
    )
    return EventSpec(model=model, line=line)


def _status_line(d: dict[str, Any]) -> str:
    extra = f" — {d['error']}" if d.get("error") else ""
    return f"status → {d.get('status', '?')}{extra}"


def _tool_line(d: dict[str, Any]) -> str:
    useful = "useful" if d.get("is_useful") else "not useful"
    return f"{d.get('tool', '?')} (step {d.get('step', '?')}) → {d.get('file', '')} [{useful}]"


_CHANGES = dict[str, Any]  # plan.edited parts: {"added": [...], "removed": [...], "changed": [...]}
_SPECS: list[tuple[str, str | Callable[[dict[str, Any]], str], dict[str, Any]]] = [
    # run lifecycle
    ("run.created", "run created: {topic}", dict(topic=str, mode=str)),
    (
        "status",
        _status_line,
        dict(
            status=str,
            error=Opt(str),
            error_code=Opt(str),
            review_state=Opt(str),
            wall_s=Opt(float),
        ),
    ),
    (
        "run.resumed",
        "run resumed from {from} by {worker} ({turns_done} turns done)",
        {"from": str, "worker": str, "turns_done": int},
    ),
    ("run.interrupted", "run interrupted during {phase}: {reason}", dict(phase=str, reason=str)),
    ("resume.requested", "resume requested by {by} (was {from})", {"from": str, "by": str}),
    ("cancel.requested", "cancel requested by {by}", dict(by=Opt(str), during=Opt(str))),
    (
        "error.traceback",
        "error traceback recorded (see the CLI: research show --json)",
        dict(traceback=str),
    ),
    (
        "index.progress",
        "local index: {state} ({done}/{total} documents)",
        dict(state=str, done=int, total=int, corpus=str, eta_s=Opt(float)),
    ),
    # planning and plan review
    ("coordinator.routed", "coordinator routed to {to}", dict(to=str)),
    (
        "plan.ready",
        "plan ready: {plan_title} ({steps} steps)",
        dict(plan_title=str, steps=int, questions=list[str]),
    ),
    ("survey.done", "survey of related topics done ({queries} queries)", dict(queries=int)),
    (
        "syllabus.fitted",
        "questions fitted to the topic ({template} template): {labels}",
        dict(template=str, questions=list[str], labels=list[str]),
    ),
    (
        "syllabus.fallback",
        "kept the {template} template's questions: {reason}",
        dict(reason=str, template=str),
    ),
    ("perspectives.ready", "perspectives: {names}", dict(names=list[str])),
    ("review.awaiting", "waiting for the analyst's plan review", dict(by=str)),
    (
        "plan.edited",
        "plan edited by {by}",
        dict(questions=_CHANGES, perspectives=_CHANGES, steps=dict[str, Any], changed=bool, by=str),
    ),
    (
        "plan.approved",
        "plan approved by {by}: {perspectives}",
        dict(by=str, questions=list[str], perspectives=list[str]),
    ),
    # conversations and sources
    (
        "tool.called",
        _tool_line,
        dict(tool=str, step=int, file=str, is_useful=bool, perspective=Opt(str)),
    ),
    (
        "search.failed",
        "{backend} search failed ({reason}): {query}",
        dict(backend=str, query=str, reason=str, message=str, step=int, perspective=Opt(str)),
    ),
    (
        "search.empty",
        "{backend} found nothing for: {query}",
        dict(backend=str, query=str, reason=str, message=str, step=int, perspective=Opt(str)),
    ),
    ("scrape.failed", "could not fetch {url} ({reason})", dict(url=str, reason=str, message=str)),
    (
        "turn.finished",
        "{perspective} · turn {turn}: {question} ({sources} sources)",
        dict(perspective=str, turn=int, question=str, sources=int, intent=Opt(str)),
    ),
    (
        "conversation.completed",
        "conversation done: {perspective} ({turns} turns)",
        dict(perspective=str, turns=int, ended_by=str, working_memory_messages=int),
    ),
    (
        "coverage.checked",
        "coverage: {progress} (ready: {ready})",
        dict(
            ready=bool,
            progress=str,
            missing=dict[str, str],
            suggestion=str,
            databases=Opt(str),
            truncated=Opt(dict[str, int]),
        ),
    ),
    (
        "evidence.unsupported",
        "source #{source} not counted for {questions}: no passage answers them",
        dict(source=str, questions=list[str]),
    ),
    (
        "gap.round",
        "gap round {round}: searching for {questions}",
        dict(round=int, questions=list[str], queries=dict[str, list[str]]),
    ),
    (
        "gap.question",
        "{key}: {reason}",
        dict(key=str, met=bool, reason=str, gap_queries=int),
    ),
    # analysis and report
    (
        "analysis.done",
        "analysis done: {facts} facts, {cross_validated} cross-validated, {contradictions} "
        "contradictions",
        dict(facts=int, cross_validated=int, contradictions=int),
    ),
    ("outline.ready", "outline ready: {sections}", dict(sections=list[str])),
    (
        "outline.refine_failed",
        "outline refinement failed ({code}); kept the {fallback}",
        dict(error=str, code=str, fallback=str),
    ),
    ("section.written", "section written: {heading}", dict(heading=str, depth=Opt(int))),
    ("section.skipped", "section skipped: {heading} ({reason})", dict(heading=str, reason=str)),
    (
        "report.ready",
        "report ready: {sections} sections, {citations} citations",
        {"sections": int, "citations": int, "questions": Opt(dict[str, str]), "from": Opt(str)},
    ),
    # litellm engine
    ("llm.cassette", "LLM cassette: {mode} {file}", dict(mode=str, file=str)),
    (
        "llm.fallback",
        "{step}: the model failed ({code}); the extractive engine answered",
        dict(step=str, code=str, error=Opt(str)),
    ),
    (
        "llm.offline",
        "{step}: answered by the extractive engine by design ({reason})",
        dict(step=str, reason=str),
    ),
    ("budget.exhausted", "LLM budget exhausted: {reason}", dict(reason=str)),
    # Co-STORM round table
    (
        "costorm.resumed",
        "round table resumed ({turns} turns, {queries_used} queries used)",
        dict(turns=int, queries_used=int),
    ),
    (
        "costorm.warm_start",
        "warm start done: experts {experts} ({mind_map_items} mind-map items)",
        dict(experts=list[str], mind_map_items=int),
    ),
    (
        "costorm.stopped",
        "round table stopped: {reason} ({turns} turns, {queries_used} queries used)",
        dict(reason=str, turns=int, queries_used=int),
    ),
    ("costorm.experts_updated", "experts now: {experts}", dict(experts=list[str])),
    (
        "analyst.posted",
        "analyst posted ({chars} characters, {queued} queued)",
        dict(chars=int, queued=int),
    ),
    # follow-up questions and the citation audit
    ("followup.asked", "follow-up asked: {question}", dict(id=str, question=str, research=bool)),
    (
        "followup.failed",
        "follow-up failed ({code}): {question}",
        dict(id=str, question=str, code=str, message=str),
    ),
    ("followup.research.started", "researching more for: {question}", dict(id=str, question=str)),
    (
        "followup.research.finished",
        "follow-up research done: {sources_added} new sources from {results} results",
        dict(
            id=str,
            queries=list[str],
            results=int,
            sources_added=int,
            coverage_before=Opt(dict[str, int]),
            coverage_after=Opt(dict[str, int]),
            reused=Opt(bool),
        ),
    ),
    (
        "followup.answered",
        "follow-up answered: {question} ({citations} citations)",
        dict(
            id=str, question=str, citations=int, new_references=int, sources_added=int, found=bool
        ),
    ),
    (
        "followup.resumed",
        "follow-up resumed (attempt {attempt}, at {stage})",
        dict(id=str, attempt=int, stage=str),
    ),
    (
        "followup.resume.requested",
        "follow-up resume requested by {by} (at {stage})",
        dict(id=str, by=str, stage=str),
    ),
    (
        "audit.finished",
        "citation audit: {supported}/{total} supported, {weak} weak, {unsupported} unsupported",
        dict(total=int, supported=int, weak=int, unsupported=int),
    ),
    # the analyst's desk
    (
        "report.versioned",
        "report version {number} by {author}: {note}",
        dict(number=int, author=str, note=str, sections=list[str], restored_from=Opt(int)),
    ),
    (
        "comment.added",
        "comment by {author} on {section}",
        dict(id=str, author=str, section=str, version=int),
    ),
    ("comment.status", "comment {id} {status} by {by}", dict(id=str, status=str, by=str)),
    (
        "since.unsupported",
        "date window since {since}: not applied by {backends}",
        dict(since=str, backends=list[str], reasons=dict[str, str]),
    ),
    # notifications
    (
        "notification.sent",
        "notification {event} sent to {target} ({attempts} attempt(s))",
        dict(event=str, target=str, attempts=int, status_code=Opt(int)),
    ),
    (
        "notification.failed",
        "notification {event} to {target} failed after {attempts} attempt(s): {error}",
        dict(event=str, target=str, attempts=int, error=str, status_code=Opt(int)),
    ),
]
EVENTS: dict[str, EventSpec] = {name: _event(name, line, **fields) for name, line, fields in _SPECS}
EVENT_TYPES: tuple[str, ...] = get_args(EventType)

if set(EVENTS) != set(EVENT_TYPES) or len(EVENTS) != len(_SPECS):
    raise InvariantError(
        "research/events.py: EventType and EVENTS must declare the same event names once each: "
        f"only in EventType {sorted(set(EVENT_TYPES) - set(EVENTS))}, "
        f"only in EVENTS {sorted(set(EVENTS) - set(EVENT_TYPES))}"
    )


def check_event(type_: str, data: dict[str, Any]) -> None:
    """Raise :class:`InvariantError` unless ``type_`` is a declared event and ``data`` its
    payload: every required field present, no undeclared field, values of the declared types.

    The message names the event and each offending field, e.g. ``Event 'plan.ready': field
    'steps' missing; field 'stepz' is not declared``. Returns None; ``data`` is not modified.
    """
    spec = EVENTS.get(type_)
    if spec is None:
        raise InvariantError(
            f"Unknown event type {type_!r}: declare it in research/events.py "
            f"(EventType and EVENTS); declared: {', '.join(EVENT_TYPES)}"
        )
    try:
        spec.model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(map(str, err["loc"])) or "(payload)"
            if err["type"] == "missing":
                problems.append(f"field {field!r} missing")
            elif err["type"] == "extra_forbidden":
                problems.append(f"field {field!r} is not declared")
            else:
                problems.append(f"field {field!r}: {err['msg']}")
        raise InvariantError(
            f"Event {type_!r}: {'; '.join(problems)} (declared in research/events.py)"
        ) from None


class _Fields(dict[str, Any]):
    """Payload for ``str.format_map``: lists read as ``a, b``, a missing field reads as ``?``."""

    def __missing__(self, key: str) -> str:
        return "?"

    def __getitem__(self, key: str) -> Any:
        v = super().__getitem__(key)
        return ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else v


def event_line(type_: str, data: dict[str, Any]) -> str | None:
    """The human line of a declared event (unclipped plain text), or None for an undeclared type
    (an event of an older version, say)."""
    spec = EVENTS.get(type_)
    if spec is None:
        return None
    return spec.line(data) if callable(spec.line) else spec.line.format_map(_Fields(data))
