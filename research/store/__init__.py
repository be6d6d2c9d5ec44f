"""Redis state: connection and embedded server, key schema, runs and events, the seed 000
source collector.

Everything outside this package reaches Redis through ``open_store()`` → ``RunStore`` (and the
collector / lease it hands out); the raw client stays in here (``tests/test_boundaries.py``).
"""


def open_store(settings=None):  # noqa: ANN001, ANN201 - Settings → RunStore (lazy: keeps imports light)
    """The ``RunStore`` on the configured Redis (``REDIS_URL`` or the embedded server).

    Raises:
        research.errors.StoreError: Redis cannot be reached.
    """
    from research.store.connection import get_redis  # noqa: PLC0415
    from research.store.runs import RunStore  # noqa: PLC0415

    return RunStore(get_redis(settings))
