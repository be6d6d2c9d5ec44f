"""The one place that builds Redis keys (docs/design.md § State in Redis).

Seed 000's collector schema is kept verbatim; everything else of a run lives under
``run:{run_id}``. Run ids are validated here so no key can be built from hostile text.
"""

from __future__ import annotations

import re

from research.errors import InputError

RUN_ID_RE = re.compile(r"^[a-f0-9]{16,32}$")
QUESTION_KEY_RE = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")
FOLLOWUP_ID_RE = re.compile(r"^[a-f0-9]{12}$")
TOKEN_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
BATCH_ID_RE = re.compile(r"^b[a-f0-9]{12}$")

RUNS_INDEX = "runs"  # sorted set: run_id scored by created_at (s)
BATCHES_INDEX = "batches"  # sorted set: batch_id scored by created_at (s)


def check_run_id(run_id: str) -> str:
    """Return ``run_id`` if it is a well-formed id (16–32 lowercase hex), else raise InputError."""
    if not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id):
        raise InputError(
            f"'{str(run_id)[:40]}' is not a run id: expected 16–32 lowercase hex characters."
        )
    return run_id


# -- source collector (docs/design.md § Source collector; verbatim schema)
def sources(run_id: str) -> str:
    """List of source JSON strings (docs/design.md § Source collector)."""
    return f"source_collection:{check_run_id(run_id)}:sources"


def question(run_id: str, question_key: str) -> str:
    """List of source_ids assigned to one syllabus question (docs/design.md § Source collector)."""
    if not QUESTION_KEY_RE.fullmatch(question_key or ""):
        raise InputError(
            f"'{question_key}' is not a valid question key (use e.g. 'clinical.efficacy')."
        )
    return f"source_collection:{check_run_id(run_id)}:question:{question_key}"


def collector_metadata(run_id: str) -> str:
    """JSON metadata string (docs/design.md § Question syllabus): syllabus, counters."""
    return f"source_collection:{check_run_id(run_id)}:metadata"


def source_index(run_id: str) -> str:
    """Hash dedup key → source_id (our addition for O(1) dedup across questions)."""
    return f"source_collection:{check_run_id(run_id)}:index"


def citations(run_id: str) -> str:
    """Hash citation_id → citation JSON (auto-registered citations, docs/design.md § Source collector)."""
    return f"source_collection:{check_run_id(run_id)}:citations"


# -- run state
def run(run_id: str) -> str:
    """Hash: status, topic, mode, timestamps, config JSON (no secrets)."""
    return f"run:{check_run_id(run_id)}"


def run_events(run_id: str) -> str:
    """Redis Stream of events."""
    return f"run:{check_run_id(run_id)}:events"


def run_doc(run_id: str, name: str) -> str:
    """JSON string for a named document: plan, syllabus, perspectives, outline, analysis, report."""
    if name not in RUN_DOCS:
        raise ValueError(f"unknown run document {name!r}; one of {sorted(RUN_DOCS)}")
    return f"run:{check_run_id(run_id)}:{name}"


RUN_DOCS = {
    "plan",
    "syllabus",
    "perspectives",
    "survey",
    "draft_outline",
    "outline",
    "analysis",
    "report",
    "draft_report",
    "audit",
    "gaps",
}


def run_turns(run_id: str) -> str:
    """List of DialogueTurn JSON, in finishing order."""
    return f"run:{check_run_id(run_id)}:turns"


def run_cards(run_id: str) -> str:
    """List of ArtifactRecord JSON (every tool call, useful or not)."""
    return f"run:{check_run_id(run_id)}:cards"


def run_usage(run_id: str) -> str:
    """Hash of LLM accounting totals (llm_calls, prompt_tokens, completion_tokens, cost_usd)."""
    return f"run:{check_run_id(run_id)}:usage"


def run_usage_by(run_id: str) -> str:
    """Hash of LLM accounting broken down: field ``{dim}|{value}|{metric}`` with dim in
    phase/role/model/step and metric in calls/prompt_tokens/completion_tokens/cost_usd/retries;
    ``fallback|{step}|calls`` counts the steps the offline engine answered."""
    return f"run:{check_run_id(run_id)}:usage_by"


def run_cancel(run_id: str) -> str:
    """String flag set when the analyst asks to cancel."""
    return f"run:{check_run_id(run_id)}:cancel"


# -- resilience (research.store.lease, research.pipeline.conversation, research.artifacts)
def run_lease(run_id: str) -> str:
    """String holding the random token of the job executing the run (SET NX PX; expires when
    the job dies)."""
    return f"run:{check_run_id(run_id)}:lease"


def run_queued(run_id: str) -> str:
    """String flag: the run waits in a job queue (so a lease-less ``pending`` run is not stale)."""
    return f"run:{check_run_id(run_id)}:queued"


def run_rounds(run_id: str) -> str:
    """Hash round number → JSON list of each conversation's focus question keys for that round
    (stored once, so a resumed round asks exactly what the interrupted one would have)."""
    return f"run:{check_run_id(run_id)}:rounds"


def run_evidence(run_id: str) -> str:
    """Hash source id (``src_012``) → JSON list of ``EvidencePassage``: the passages of that
    source that answer syllabus questions (``research.evidence``)."""
    return f"run:{check_run_id(run_id)}:evidence"


def run_calls(run_id: str) -> str:
    """Hash tool-call id → its reserved ``__n`` number and ``{id}|rec`` → ArtifactRecord JSON
    (recorded), so a resumed tool call reuses its file instead of writing ``__2``."""
    return f"run:{check_run_id(run_id)}:calls"


def run_artseq(run_id: str) -> str:
    """Hash artifact base name → last ``__n`` sequence number handed out."""
    return f"run:{check_run_id(run_id)}:artseq"


# -- follow-up questions (research.store.followups)
def run_followups(run_id: str) -> str:
    """List of Followup JSON (question, answer, citations, new references, audit), oldest first."""
    return f"run:{check_run_id(run_id)}:followups"


def run_followup_lock(run_id: str) -> str:
    """Lease (``research.store.lease.Lease``) serialising follow-ups of one run (reference
    numbering); it expires ``lease_ttl_ms`` after its holder died."""
    return f"run:{check_run_id(run_id)}:followups:lock"


def run_followups_pending(run_id: str) -> str:
    """Hash follow-up id → PendingFollowup JSON: asked, not yet answered or failed (resumable)."""
    return f"run:{check_run_id(run_id)}:followups:pending"


def check_followup_id(followup_id: str) -> str:
    """Return ``followup_id`` if it is 12 lowercase hex characters, else raise InputError."""
    if not isinstance(followup_id, str) or not FOLLOWUP_ID_RE.fullmatch(followup_id):
        raise InputError(
            f"'{str(followup_id)[:40]}' is not a follow-up id: expected 12 lowercase hex characters."
        )
    return followup_id


def followup_lease(run_id: str, followup_id: str) -> str:
    """String holding the token of the job answering one follow-up (SET NX PX, renewed)."""
    return f"run:{check_run_id(run_id)}:followup:{check_followup_id(followup_id)}:lease"


def followup_queued(run_id: str, followup_id: str) -> str:
    """String flag: the follow-up's job waits in a job queue (so it is not taken for a dead one)."""
    return f"run:{check_run_id(run_id)}:followup:{check_followup_id(followup_id)}:queued"


FOLLOWUP_PARTS = (run_followups, run_followup_lock, run_followups_pending)


# -- the analyst's desk (research.store.versions, research.store.comments)
def run_versions(run_id: str) -> str:
    """List of ReportVersion JSON, version 1 (the generated report, a frozen copy) first; empty
    until the report is first edited (then the ``report`` document is version 1 and current)."""
    return f"run:{check_run_id(run_id)}:versions"


def run_comments(run_id: str) -> str:
    """Hash comment id → Comment JSON (section comments, resolve/reopen)."""
    return f"run:{check_run_id(run_id)}:comments"


DESK_PARTS = (run_versions, run_comments)


# -- notifications (research.store.notifications)
def run_notify_targets(run_id: str) -> str:
    """String: the run's own notification target URLs, encrypted (a Fernet token made by
    ``research.notify.seal``; never the URLs in clear)."""
    return f"run:{check_run_id(run_id)}:notify:targets"


def run_notifications(run_id: str) -> str:
    """List of NotificationRecord JSON: one per delivery (event, redacted target, outcome)."""
    return f"run:{check_run_id(run_id)}:notifications"


NOTIFY_PARTS = (run_notify_targets, run_notifications)


RESILIENCE_PARTS = (run_lease, run_queued, run_rounds, run_calls, run_artseq)


# -- Co-STORM round-table state (docs/design.md § Co-STORM round-table; research.costorm.state)
def costorm(run_id: str, part: str) -> str:
    """Co-STORM state of a run: ``turns`` (LIST of CoStormTurn JSON), ``mindmap`` (JSON string),
    ``pool`` (JSON string: unused retrieved information), ``state`` (JSON string: experts and
    counters), ``inbox`` (LIST of queued analyst messages)."""
    if part not in COSTORM_PARTS:
        raise ValueError(f"unknown Co-STORM state part {part!r}; one of {sorted(COSTORM_PARTS)}")
    return f"run:{check_run_id(run_id)}:costorm:{part}"


COSTORM_PARTS = ("turns", "mindmap", "pool", "state", "inbox")


# -- HTTP API tokens (research.store.tokens): only a token's SHA-256 digest is ever stored
API_TOKENS = "api:tokens"  # hash token name → JSON {name, digest, created_at}
API_TOKEN_DIGESTS = "api:tokens:digests"  # hash SHA-256 hex digest → token name
API_TOKEN_USED = "api:tokens:used"  # hash token name → last use (Unix s)
API_RUN_OWNERS = "api:runs:owner"  # hash run id → name of the token that started it


def check_token_name(name: str) -> str:
    """Return ``name`` if it is a valid API token name (1–64 characters: letters, digits, ``.``,
    ``_`` and ``-``, starting with a letter or digit), else raise InputError."""
    if not isinstance(name, str) or not TOKEN_NAME_RE.fullmatch(name):
        raise InputError(
            f"'{str(name)[:40]}' is not a token name: use 1–64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (e.g. 'ci-bot').",
            code="invalid_token_name",
        )
    return name


# -- batches of runs (research.store.batches)
def check_batch_id(batch_id: str) -> str:
    """Return ``batch_id`` if it is ``b`` + 12 lowercase hex characters, else raise InputError."""
    if not isinstance(batch_id, str) or not BATCH_ID_RE.fullmatch(batch_id):
        raise InputError(
            f"'{str(batch_id)[:40]}' is not a batch id: expected 'b' and 12 lowercase hex "
            "characters (`research batch status` lists them)."
        )
    return batch_id


def batch(batch_id: str) -> str:
    """Hash: name, created_at (Unix s), run_ids (JSON list, in the batch file's order)."""
    return f"batch:{check_batch_id(batch_id)}"


def run_batch(run_id: str) -> str:
    """String: the id of the batch the run was queued in (no key for a run of its own)."""
    return f"run:{check_run_id(run_id)}:batch"


def batch_announced(batch_id: str) -> str:
    """String, set once (``SET NX``): the batch's end was announced (``batch.complete``)."""
    return f"batch:{check_batch_id(batch_id)}:announced"


def run_keys(run_id: str) -> list[str]:
    """Every key a run owns (for deletion)."""
    return [
        run(run_id),
        run_events(run_id),
        run_turns(run_id),
        run_cards(run_id),
        run_usage(run_id),
        run_usage_by(run_id),
        run_cancel(run_id),
        sources(run_id),
        collector_metadata(run_id),
        source_index(run_id),
        citations(run_id),
        *[run_doc(run_id, n) for n in sorted(RUN_DOCS)],
        *[costorm(run_id, p) for p in COSTORM_PARTS],
        *[part(run_id) for part in RESILIENCE_PARTS],
        *[part(run_id) for part in FOLLOWUP_PARTS],
        run_evidence(run_id),
        *[part(run_id) for part in DESK_PARTS],
        *[part(run_id) for part in NOTIFY_PARTS],
        run_batch(run_id),
    ]
