"""A run's JSON documents, dialogue turns and tool-call records (summary cards) in Redis:
``run:{id}:{name}``, ``run:{id}:turns``, ``run:{id}:cards`` (docs/design.md § State in Redis).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from research.events import EventType, check_event
from research.models import ArtifactRecord, DialogueTurn, now
from research.store import keys
from research.store.run_events import EVENT_STREAM_MAXLEN, RunEvents

M = TypeVar("M", bound=BaseModel)


class RunDocuments(RunEvents):
    """Store and read a run's documents, turns and cards (part of ``RunStore``)."""

    # ------------------------------------------------------------------ documents
    def put_doc(self, run_id: str, name: str, doc: BaseModel | Sequence[BaseModel]) -> None:
        """Store a JSON document (plan, syllabus, perspectives, outline, analysis, report...)."""
        if not isinstance(doc, BaseModel):
            payload = json.dumps([d.model_dump(mode="json") for d in doc])
        else:
            payload = doc.model_dump_json()
        self.r.set(keys.run_doc(run_id, name), payload)

    def get_doc(self, run_id: str, name: str, model: type[M]) -> M | None:
        raw = self.r.get(keys.run_doc(run_id, name))
        return model.model_validate_json(raw) if raw else None

    def get_doc_list(self, run_id: str, name: str, model: type[M]) -> list[M]:
        raw = self.r.get(keys.run_doc(run_id, name))
        return [model.model_validate(x) for x in json.loads(raw)] if raw else []

    # ------------------------------------------------------------------ turns & cards
    def append_turn(self, run_id: str, turn: DialogueTurn) -> None:
        """Store a finished dialogue turn and emit ``turn.finished``."""
        self.r.rpush(keys.run_turns(run_id), turn.model_dump_json())
        self.emit(
            run_id,
            "turn.finished",
            {
                "perspective": turn.perspective,
                "turn": turn.turn_number,
                "question": turn.question[:200],
                "sources": len(turn.sources),
            },
        )

    def get_turns(self, run_id: str) -> list[DialogueTurn]:
        return [
            DialogueTurn.model_validate_json(x)
            for x in self.r.lrange(keys.run_turns(run_id), 0, -1)
        ]

    def count_turns(self, run_id: str) -> int:
        return int(self.r.llen(keys.run_turns(run_id)))

    def count_cards(self, run_id: str) -> int:
        """How many tool-call records (summary cards) the run has stored."""
        return int(self.r.llen(keys.run_cards(run_id)))

    def append_card(self, run_id: str, record: ArtifactRecord) -> None:
        """Store the record of one tool call (raw file + summary card)."""
        self.r.rpush(keys.run_cards(run_id), record.model_dump_json())

    def append_cards(
        self,
        run_id: str,
        records: Sequence[ArtifactRecord],
        *,
        event: EventType | None = None,
        events: Sequence[dict[str, Any]] = (),
    ) -> None:
        """Store many tool-call records in one pipelined round trip, each with event ``event``
        carrying the matching ``events`` payload when given (bulk loaders, e.g. devtools/scale_run).
        Raises InvariantError (nothing written) for an undeclared event or payload."""
        if event:
            for i in range(len(records)):
                check_event(event, events[i] if i < len(events) else {})
        pipe = self.r.pipeline(transaction=False)
        for i, record in enumerate(records):
            pipe.rpush(keys.run_cards(run_id), record.model_dump_json())
            if event:
                pipe.xadd(
                    keys.run_events(run_id),
                    {
                        "ts": now(),
                        "type": event,
                        "data": json.dumps(events[i] if i < len(events) else {}),
                    },
                    maxlen=EVENT_STREAM_MAXLEN,
                    approximate=True,
                )
        pipe.execute()

    def get_cards(self, run_id: str) -> list[ArtifactRecord]:
        return [
            ArtifactRecord.model_validate_json(x)
            for x in self.r.lrange(keys.run_cards(run_id), 0, -1)
        ]
