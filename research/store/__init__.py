"""Redis state: connection and embedded server, key schema, runs and events, the source collector
(docs/design.md § Source collector).

Everything outside this package reaches Redis through ``open_store()`` → ``RunStore`` (and the
collector / lease it hands out); the raw client stays in here (``tests/test_boundaries.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from research.store.connection import get_redis
from research.store.runs import RunStore

if TYPE_CHECKING:
    from research.config import Settings


def open_store(settings: Settings | None = None) -> RunStore:
    """The ``RunStore`` on the configured Redis (``REDIS_URL`` or the embedded server).

    Raises:
        research.errors.StoreError: Redis cannot be reached.
    """

    return RunStore(get_redis(settings))
