"""Co-STORM round-table state in Redis (docs/design.md § State in Redis; docs/design.md § Co-STORM
round-table) and the analyst's message queue.

Redis access goes through ``RunStore.costorm`` (``research.store.costorm``); keys
(``research.store.keys.costorm``): ``turns`` LIST of ``CoStormTurn`` JSON, ``mindmap``
JSON ``MindMap``, ``pool`` JSON list of ``PoolItem`` (unused retrieved information), ``state``
JSON ``Meta`` (experts, counters, stop reason), ``inbox`` LIST of analyst messages.

Every finished turn is committed in one MULTI/EXEC with the mind map, pool and counters it
changed (and, for an analyst turn, the removal of its message from the inbox), so a run that
is restarted (``load``) continues after its last committed turn: no turn is lost or repeated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from research.costorm.mindmap import MindMap
from research.engines.costorm_steps import PoolItem
from research.errors import InputError
from research.models import ACTIVE_STATUSES, CoStormTurn, Perspective
from research.store.costorm import CoStormRecords
from research.store.runs import RunStore

POOL_MAX = 300  # unused items kept (oldest dropped first)
MESSAGE_MAX_CHARS = 1000  # analyst message length limit


class Meta(BaseModel):
    """Counters of the round-table. ``queries_used``: search queries so far (the query budget
    counts them); ``background_done``: the warm start's background search and initial mind map
    are committed."""

    experts: list[Perspective] = Field(default_factory=list)
    queries_used: int = 0
    background_done: bool = False
    stop_reason: str = ""


@dataclass
class Session:
    """The whole round-table state of one run, as loaded from Redis."""

    turns: list[CoStormTurn]
    mindmap: MindMap
    pool: list[PoolItem]
    meta: Meta
    cited_urls: set[str] = field(default_factory=set)

    def roundtable_turns(self) -> int:
        """Turns after the warm start (what the turn cap counts)."""
        return sum(1 for t in self.turns if not t.warm_start)


def _records(store) -> CoStormRecords:
    """The Co-STORM records of ``store`` (a ``RunStore``; a raw client is wrapped in one)."""
    return (store if isinstance(store, RunStore) else RunStore(store)).costorm


def load(store, run_id: str, topic: str) -> Session:
    """The stored state (a fresh one for a new run: empty map named after ``topic``)."""
    turns_raw, mm, pool, meta = _records(store).load(run_id)
    turns = [CoStormTurn.model_validate_json(x) for x in turns_raw]
    session = Session(
        turns=turns,
        mindmap=MindMap.model_validate_json(mm) if mm else MindMap.new(topic),
        pool=[PoolItem.model_validate(x) for x in json.loads(pool)] if pool else [],
        meta=Meta.model_validate_json(meta) if meta else Meta(),
    )
    session.cited_urls = {s.url for t in turns for s in t.sources}
    return session


def commit(
    store,
    run_id: str,
    session: Session,
    turn: CoStormTurn | None = None,
    pop_inbox: bool = False,
) -> None:
    """Atomically store the map, pool and counters, plus ``turn`` (appended to ``session`` and
    to the turns list) and the removal of the first inbox message when ``pop_inbox``."""
    session.pool = session.pool[-POOL_MAX:]
    _records(store).commit(
        run_id,
        mindmap=session.mindmap.model_dump_json(),
        pool=json.dumps([p.model_dump(mode="json") for p in session.pool]),
        state=session.meta.model_dump_json(),
        turn=turn.model_dump_json() if turn is not None else None,
        pop_inbox=pop_inbox,
    )
    if turn is not None:
        session.turns.append(turn)
        session.cited_urls |= {s.url for s in turn.sources}


# ---------------------------------------------------------------------- readers (pages, CLI)
def get_turns(store, run_id: str) -> list[CoStormTurn]:
    """The run's committed round-table turns, in order ([] for none)."""
    return [CoStormTurn.model_validate_json(x) for x in _records(store).turns(run_id)]


def get_mindmap(store, run_id: str) -> MindMap | None:
    """The run's mind map, or None before the warm start stored one."""
    raw = _records(store).part(run_id, "mindmap")
    return MindMap.model_validate_json(raw) if raw else None


def get_meta(store, run_id: str) -> Meta:
    """The round-table counters (a fresh ``Meta`` before the first commit)."""
    raw = _records(store).part(run_id, "state")
    return Meta.model_validate_json(raw) if raw else Meta()


# ---------------------------------------------------------------------- analyst messages
def post_analyst_message(store: RunStore, run_id: str, text: str) -> int:
    """Queue an analyst message for an active Co-STORM run (docs/design.md § Experts and intents).
    It enters the discourse at the next turn boundary as an ``original_question`` turn from
    "Analyst". Returns the number of queued messages.

    Raises:
        InputError: empty or over-long text, a run that is not Co-STORM, or a run that is not
            active (nothing is queued in any of these cases).
        RunNotFoundError: no such run.
    """
    text = " ".join(str(text or "").split())
    if not text:
        raise InputError("The message is empty: type a question or a direction for the experts.")
    if len(text) > MESSAGE_MAX_CHARS:
        raise InputError(
            f"The message has {len(text)} characters; keep it under {MESSAGE_MAX_CHARS}."
        )
    state = store.get_run(run_id)
    if state.mode != "costorm":
        raise InputError(
            "Only Co-STORM runs take analyst messages; this run is in STORM mode.",
            code="not_costorm",
        )
    if state.status not in ACTIVE_STATUSES:
        raise InputError(
            f"The run is {state.status}; messages can only join an active round-table.",
            code="run_not_active",
        )
    n = _records(store).push_message(run_id, text)
    store.emit(run_id, "analyst.posted", {"chars": len(text), "queued": n})
    return n


def pending_messages(store, run_id: str) -> list[str]:
    """Analyst messages not yet in the discourse, oldest first."""
    return _records(store).messages(run_id)


def next_message(store, run_id: str) -> str | None:
    """The oldest queued analyst message without removing it (``commit(pop_inbox=True)`` does)."""
    return _records(store).next_message(run_id)
