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


REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session", autouse=True)
def shared_index_dir():
    """One search-index cache shared by every test session (``.cache/test-indexes``, gitignored;
    entries are fingerprinted by corpus path, mtime and size, so a changed corpus gets a new one).
    The shared corpus index is built once per clone instead of once per pytest invocation."""
    d = Path(os.environ.get("RESEARCH_TEST_INDEX_DIR", REPO / ".cache" / "test-indexes"))
    d.mkdir(parents=True, exist_ok=True)
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
