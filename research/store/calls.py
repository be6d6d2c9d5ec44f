"""Idempotent tool-call records of a run (docs/design.md § Artifact offload: file numbering).

A resumed run repeats the tool calls it had not finished; each call has a run-unique id
(``conv0.t2.1``) so that a repeat reuses its artifact file name and never stores its card twice.
Keys (``research.store.keys``): ``run:{id}:calls`` HASH ``{call_id} → seq`` (the file number
reserved for the call) and ``{call_id}|rec → ArtifactRecord JSON`` (recorded);
``run:{id}:artseq`` HASH ``{file base name} → last seq``; the cards LIST ``run:{id}:cards``.
``research.artifacts.ArtifactStore`` calls these; the Redis commands live here only.
"""

from __future__ import annotations

import redis

from research.models import ArtifactRecord
from research.store import keys
from research.store.connection import TextRedis

# KEYS: calls hash, seq hash. ARGV: call id, base name. Returns the call's sequence number.
_RESERVE_LUA = """
local seq = redis.call('HGET', KEYS[1], ARGV[1])
if seq then return tonumber(seq) end
seq = redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
redis.call('HSET', KEYS[1], ARGV[1], seq)
return seq
"""


class ToolCalls:
    """The tool-call records of runs on one Redis (``RunStore.calls``).

    Args:
        r: a ``redis.Redis`` with ``decode_responses=True``.
    """

    def __init__(self, r: redis.Redis) -> None:
        self._r: TextRedis = r

    def reserve(self, run_id: str, call_id: str, base_name: str) -> int:
        """The file number (1, 2, ...) of call ``call_id`` among calls sharing ``base_name``: the
        number already reserved for this call, else the next one (atomic, one Lua script)."""
        return int(
            self._r.eval(
                _RESERVE_LUA, 2, keys.run_calls(run_id), keys.run_artseq(run_id), call_id, base_name
            )
        )

    def recorded(self, run_id: str, call_id: str) -> ArtifactRecord | None:
        """The stored record of call ``call_id``, or None when it was not recorded yet."""
        done = self._r.hget(keys.run_calls(run_id), f"{call_id}|rec")
        return ArtifactRecord.model_validate_json(done) if done else None

    def record(self, run_id: str, call_id: str, record: ArtifactRecord) -> None:
        """Append ``record`` to the run's cards and mark the call recorded, together (MULTI),
        so a crash between the two never stores a card twice."""
        data = record.model_dump_json()
        pipe = self._r.pipeline(transaction=True)
        pipe.rpush(keys.run_cards(run_id), data)
        pipe.hset(keys.run_calls(run_id), f"{call_id}|rec", data)
        pipe.execute()
