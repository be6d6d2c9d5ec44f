"""``GET /runs/{id}/events``: a run's event stream as server-sent events.

The events are the run's Redis stream as every other reader sees it (``RunStore.events``, which
the CLI's progress and the dashboard's event table read): each SSE message has ``id:`` the
stream id, ``event:`` the event type (``status``, ``turn.finished``… — ``research/events.py``)
and ``data:`` the JSON ``{"ts", "type", "data", "line"}`` (``line``: the human sentence the
dashboard shows). The stream ends with an ``end`` event ``{"status", "error"}`` once the run
stopped — it is no longer pending or working (complete, failed, cancelled, interrupted, or
awaiting plan review) and no job holds its lease, so every event its job wrote has been sent.
A client that reconnects sends ``Last-Event-ID`` (or ``?after=``) and gets only what followed.
A stream open for ``RESEARCH_API_STREAM_MAX_S`` seconds (default an hour) ends with a
``reconnect`` event ``{"status", "after"}`` instead: the client reconnects with that ``after``
(browsers' ``EventSource`` reconnects by itself with ``Last-Event-ID``), so no connection lives
for ever on a run that waits long (queued behind others, or for plan review).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Header, Query
from sse_starlette import EventSourceResponse

from research.api.runs import READ, RunId, checked_run_id
from research.api.schemas import error_responses
from research.config import load_settings
from research.errors import InputError, RunNotFoundError
from research.events import event_line
from research.models import ACTIVE_STATUSES, Event, RunState
from research.store import open_store
from research.store.runs import RunStore

router = APIRouter(tags=["runs"])
POLL_S = 0.25  # s between reads of the run's stream (the CLI's progress polls as often)
PING_S = 15  # s between SSE comments that keep idle proxies from closing the stream
EVENT_ID = r"^\d{1,19}(-\d{1,19})?$"  # a Redis stream id (1700000000000-0), or its ms part
_STREAM_ID = re.compile(EVENT_ID)


def _position(after: str | None, last_event_id: str | None) -> str:
    """Where to start: after the stream id the client last saw, or from the first event.

    Raises:
        InputError: not a Redis stream id (``1700000000000-0``).
    """
    for given in (after, last_event_id):  # each one given must be an id, even if unused
        if given is not None and not _STREAM_ID.fullmatch(given):
            raise InputError(
                f"'{given[:40]}' is not an event id: use the id: of an event this stream sent "
                "(e.g. 1700000000000-0), or leave it out to start from the first event."
            )
    start = last_event_id if last_event_id is not None else after
    return "-" if start is None else start


def message(ev: Event) -> dict[str, str]:
    """The SSE message of one stored event: ``{id, event, data}`` (``data`` JSON text)."""
    body = {"ts": ev.ts, "type": ev.type, "data": ev.data, "line": event_line(ev.type, ev.data)}
    return {"id": ev.id, "event": ev.type, "data": json.dumps(body, ensure_ascii=False)}


def _read(store: RunStore, run_id: str, after: str) -> tuple[RunState | None, bool, list[Event]]:
    """``(state or None when deleted, lease held, events after `after`)``: the state first, so
    that a stopped run's last events are read after it was seen stopped."""
    try:
        state = store.get_run(run_id)
    except RunNotFoundError:
        return None, False, []
    return state, store.is_held(run_id), store.events(run_id, after=after)


async def follow(run_id: str, after: str) -> AsyncIterator[dict[str, str]]:
    """SSE messages of the run's events after ``after`` until the run stopped, then ``end``
    (or, past ``RESEARCH_API_STREAM_MAX_S``, ``reconnect``)."""
    store = await anyio.to_thread.run_sync(open_store)
    deadline = time.monotonic() + load_settings().api_stream_max_s
    while True:
        state, held, events = await anyio.to_thread.run_sync(_read, store, run_id, after)
        for ev in events:
            after = ev.id
            yield message(ev)
        if state is None:
            yield _end({"status": "deleted", "error": None})
            return
        if state.status not in ACTIVE_STATUSES and not held:
            yield _end({"status": state.status, "error": state.error or None})
            return
        if time.monotonic() >= deadline:
            data = {"status": state.status, "after": after if after != "-" else None}
            yield {"event": "reconnect", "data": json.dumps(data)}
            return
        await anyio.sleep(POLL_S)


def _end(data: dict[str, Any]) -> dict[str, str]:
    return {"event": "end", "data": json.dumps(data, ensure_ascii=False)}


@router.get(
    "/runs/{run_id}/events",
    summary="Follow the run's events (server-sent events)",
    response_class=EventSourceResponse,
    dependencies=[READ],
    responses={
        200: {"content": {"text/event-stream": {}}},
        **error_responses(401, 403, 404, 422, 429, 503),
    },
)
async def events(
    run_id: RunId,
    after: Annotated[
        str | None,
        Query(description="start after this event id", json_schema_extra={"pattern": EVENT_ID}),
    ] = None,
    last_event_id: Annotated[
        str | None,
        Header(
            description="as `after`, sent on reconnect", json_schema_extra={"pattern": EVENT_ID}
        ),
    ] = None,
) -> EventSourceResponse:
    """Every event of the run, oldest first, live until the run stops; then an ``end`` event
    with its status. An unknown run is a 404 before the stream starts."""
    run_id = checked_run_id(run_id)
    start = _position(after, last_event_id)
    await anyio.to_thread.run_sync(open_store().get_run, run_id)
    return EventSourceResponse(follow(run_id, start), ping=PING_S)
