"""Co-STORM round-table records in Redis (docs/design.md § Co-STORM round-table;
``research.costorm.state`` parses them).

Keys (``keys.costorm``): ``turns`` LIST of ``CoStormTurn`` JSON, ``mindmap`` / ``pool`` /
``state`` JSON strings, ``inbox`` LIST of analyst messages. Values cross this boundary as JSON
text; the models live with the Co-STORM code.
"""

from __future__ import annotations

from typing import cast

import redis

from research.store import keys
from research.store.connection import TextRedis


class CoStormRecords:
    """Raw Co-STORM records of runs on one Redis (``RunStore.costorm``).

    Args:
        r: a ``redis.Redis`` with ``decode_responses=True``.
    """

    def __init__(self, r: redis.Redis) -> None:
        self._r: TextRedis = r

    def load(self, run_id: str) -> tuple[list[str], str | None, str | None, str | None]:
        """``(turns, mindmap, pool, state)`` JSON texts in one round trip (None when absent)."""
        pipe = self._r.pipeline(transaction=False)
        pipe.lrange(keys.costorm(run_id, "turns"), 0, -1)
        for part in ("mindmap", "pool", "state"):
            pipe.get(keys.costorm(run_id, part))
        turns, mindmap, pool, state = pipe.execute()
        return turns, mindmap, pool, state

    def commit(
        self,
        run_id: str,
        *,
        mindmap: str,
        pool: str,
        state: str,
        turn: str | None = None,
        pop_inbox: bool = False,
    ) -> None:
        """Store map, pool and counters plus an appended ``turn`` and the removal of the first
        inbox message (``pop_inbox``) atomically (MULTI/EXEC)."""
        pipe = self._r.pipeline(transaction=True)
        if turn is not None:
            pipe.rpush(keys.costorm(run_id, "turns"), turn)
        if pop_inbox:
            pipe.lpop(keys.costorm(run_id, "inbox"))
        pipe.set(keys.costorm(run_id, "mindmap"), mindmap)
        pipe.set(keys.costorm(run_id, "pool"), pool)
        pipe.set(keys.costorm(run_id, "state"), state)
        pipe.execute()

    def turns(self, run_id: str) -> list[str]:
        """The committed turns' JSON texts, in order."""
        return cast(list[str], self._r.lrange(keys.costorm(run_id, "turns"), 0, -1))

    def part(self, run_id: str, name: str) -> str | None:
        """JSON text of ``mindmap``, ``pool`` or ``state`` (None when absent)."""
        return cast(str | None, self._r.get(keys.costorm(run_id, name)))

    def push_message(self, run_id: str, text: str) -> int:
        """Queue an analyst message; returns the number queued."""
        return int(self._r.rpush(keys.costorm(run_id, "inbox"), text))

    def messages(self, run_id: str) -> list[str]:
        """Queued analyst messages, oldest first."""
        return list(self._r.lrange(keys.costorm(run_id, "inbox"), 0, -1))

    def next_message(self, run_id: str) -> str | None:
        """The oldest queued message without removing it."""
        return cast(str | None, self._r.lindex(keys.costorm(run_id, "inbox"), 0))
