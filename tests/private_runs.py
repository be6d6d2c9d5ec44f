"""A private redis-server + data dir for a module's or session's own finished run (tests/ is on
sys.path, as for ``fixture_server``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from research.store.server import EmbeddedRedis


def private_env(
    tmp_path_factory,
    prefix: str,
    *,
    redis_dir: Path | None = None,
    data_dir: Path | None = None,
    **env: str,
):
    """Start an ``EmbeddedRedis`` and point ``RESEARCH_DATA_DIR``/``REDIS_URL`` (and ``env``) at
    it, with no LLM model configured (runs are extractive). Its files go in ``redis_dir`` and the
    data dir is ``data_dir`` when given, else fresh temp dirs named ``{prefix}_redis`` and
    ``{prefix}_data``. Returns ``(server, url, data_dir, monkeypatch)``; the caller undoes the
    monkeypatch and stops the server."""

    server = EmbeddedRedis(redis_dir or tmp_path_factory.mktemp(f"{prefix}_redis"))
    url = server.start()
    data: Path = data_dir or tmp_path_factory.mktemp(f"{prefix}_data")
    data.mkdir(parents=True, exist_ok=True)
    mp = pytest.MonkeyPatch()
    mp.setenv("RESEARCH_DATA_DIR", str(data))
    mp.setenv("REDIS_URL", url)
    for k, v in env.items():
        mp.setenv(k, v)
    mp.delenv("RESEARCH_LLM_MODEL", raising=False)
    return server, url, data, mp
