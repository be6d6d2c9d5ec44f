"""The dashboard's Redis health line, and its hold on the embedded server.

The dashboard takes a lease on the data dir's embedded Redis as ``dashboard`` (``set_role``;
``research.store.holders``), so a ``research`` command that ends while the dashboard runs leaves
the server up, and ``research redis stop`` refuses without ``--force``. Every page load asks for
the server (``redis_url``), which starts it again if it was stopped by hand; the dashboard stops it
when it exits, unless another process still uses it.
"""

from __future__ import annotations

from research.config import Settings, load_settings
from research.errors import StoreError
from research.store.connection import redis_url, set_role
from research.store.server import EmbeddedRedis


def redis_health(settings: Settings | None = None) -> str:
    """One Markdown line for the sidebar, e.g. ``**Redis:** embedded · pid 123 · kept running by
    this dashboard``; starts the embedded server when it is not running. Never raises: a server
    that cannot start is reported on the line (the pages show the error in full)."""
    settings = settings or load_settings()
    if settings.redis_url:
        return "**Redis:** external (REDIS_URL)"
    set_role("dashboard")
    try:
        redis_url(settings)
    except StoreError as exc:
        return f"**Redis:** embedded · not running ({exc.message[:120]})"
    pid = EmbeddedRedis(settings.data_dir / "redis").server_pid()
    where = f"pid {pid}" if pid is not None else "starting"
    return f"**Redis:** embedded · {where} · kept running by this dashboard"
