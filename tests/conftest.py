"""Shared fixtures: a real redis-server (started through the product's own launcher in a temp
dir), an isolated data dir, and the shared corpus path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CORPUS = SHARED_DATA / "corpus" / "docs.jsonl"


@pytest.fixture(scope="session", autouse=True)
def shared_index_dir(tmp_path_factory):
    """One search-index cache for the whole session (the corpus index is built once)."""
    d = tmp_path_factory.mktemp("indexes")
    old = os.environ.get("RESEARCH_INDEX_DIR")
    os.environ["RESEARCH_INDEX_DIR"] = str(d)
    yield d
    if old is None:
        os.environ.pop("RESEARCH_INDEX_DIR", None)
    else:
        os.environ["RESEARCH_INDEX_DIR"] = old


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A private redis-server on a unix socket; yields its URL."""
    from research.store.server import EmbeddedRedis

    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    url = server.start()
    yield url
    server.stop()


@pytest.fixture()
def r(redis_server):
    """A clean redis-py client (db flushed before each test)."""
    import redis

    client = redis.Redis.from_url(redis_server, decode_responses=True)
    client.flushall()
    yield client
    client.close()


@pytest.fixture()
def data_dir(tmp_path, monkeypatch, redis_server):
    """An isolated RESEARCH_DATA_DIR wired to the test Redis via REDIS_URL."""
    d = tmp_path / "data"
    d.mkdir()
    monkeypatch.setenv("RESEARCH_DATA_DIR", str(d))
    monkeypatch.setenv("REDIS_URL", redis_server)
    return d


@pytest.fixture(scope="session")
def corpus_path():
    """The shared 2,972-document corpus (skips when the shared data is absent)."""
    if not CORPUS.is_file():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS
