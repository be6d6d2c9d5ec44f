"""Shared fixtures: a real redis-server (started through the product's own launcher in a temp
dir), an isolated data dir, and the shared corpus path."""

from __future__ import annotations

import json
import os
import shutil
from contextlib import ExitStack
from pathlib import Path

import pytest
import redis
from filelock import FileLock
from fixture_server import FIXTURES, FixtureServer
from private_runs import private_env
from resilience_helpers import subprocess_env
from served_api import ServedApi, own_redis_env, serving

from research import jobs
from research.devtools.loopback_llm import LoopbackLLM
from research.followup.ask import audit_run
from research.search.index_progress import index_state
from research.search.local import get_local_search
from research.store.server import EmbeddedRedis
from tests.llm_fixtures import CANARY_KEY

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# pytest-xdist (``make test``: 2 workers on 2 cores) already keeps every core busy, so torch's
# OpenMP pool of one thread per core oversubscribes them: a warm 2×2 extractive run took 22 s with
# 2 threads and 8 s with 1 beside a busy core (a cold ``research run``: 26.8 vs 14.0 CPU-s). One
# thread per worker, inherited by the processes tests start (the shared corpus's index build,
# which the other workers wait for, uses every core: ``_index_once``).
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

SHARED_DATA = Path(
    os.environ.get("RESEARCH_SHARED_DATA")
    or Path(__file__).resolve().parents[2] / "shared" / "data"
)
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

    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    url = server.start()
    yield url
    server.stop()


@pytest.fixture()
def r(redis_server):
    """A clean redis-py client (db flushed before each test)."""

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
def corpus_path(shared_index_dir):
    """The shared 2,972-document corpus (skips when the shared data is absent).

    Under pytest-xdist (``make test`` runs 2 workers) the first worker to ask builds the corpus's
    search index while the others wait on a file lock, instead of each building it at once
    (minutes of CPU on a fresh clone); alone, a test builds it when it first needs it."""
    if not CORPUS.is_file():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _index_once(CORPUS, shared_index_dir)
    return CORPUS


def _index_once(corpus: Path, index_dir: Path) -> None:
    """Build (or find) ``corpus``'s index in ``index_dir``, one process at a time."""

    with FileLock(str(index_dir / ".build.lock"), timeout=1800):
        if index_state(corpus, index_dir)["state"] != "ready":
            import torch  # noqa: PLC0415 - torch loads in seconds; only when embedding

            threads = torch.get_num_threads()
            torch.set_num_threads(os.cpu_count() or 1)  # the other workers wait on this lock
            try:
                get_local_search(corpus, index_dir)
            finally:
                torch.set_num_threads(threads)


# ---------------------------------------------------------------- one finished run per session
FINISHED_TOPIC = "Trastuzumab in HER2-positive breast cancer"


def shared_tmp(tmp_path_factory) -> Path:
    """A temp dir shared by every pytest-xdist worker of this ``pytest`` invocation (the
    controller's basetemp, parent of each worker's ``popen-gwN``); alone, the session's basetemp.
    Use with a ``FileLock`` to build something once per ``make test`` for all workers."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def finished_corpus(tmp_path_factory, corpus_path) -> Path:
    """60 real documents of the shared corpus: 45 about trastuzumab/HER2, 8 other PubMed
    abstracts, 4 trials, 3 Wikipedia pages (JSONL in ``shared_tmp``, written once for all
    xdist workers, so they share one path, one mtime and hence one cached search index)."""

    out = shared_tmp(tmp_path_factory) / "tiny_corpus" / "tiny.jsonl"
    with FileLock(str(shared_tmp(tmp_path_factory) / "tiny_corpus.lock"), timeout=600):
        if not out.is_file():
            out.parent.mkdir(exist_ok=True)
            tmp = out.with_suffix(".tmp")
            tmp.write_text(_pick_finished_docs(corpus_path), encoding="utf-8")
            tmp.replace(out)
    return out


def _pick_finished_docs(corpus_path: Path) -> str:
    """The JSONL text of ``finished_corpus``: the first documents of each quota, in corpus order."""

    quota = {"her2": 45, "pubmed": 8, "clinicaltrials.gov": 4, "wikipedia": 3}
    picks: dict[str, list[dict]] = {k: [] for k in quota}
    with corpus_path.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            text = doc["text"].lower()
            bucket = "her2" if ("trastuzumab" in text or "her2" in text) else doc["source"]
            if bucket in picks and len(picks[bucket]) < quota[bucket]:
                picks[bucket].append(doc)
    return "".join(json.dumps(d) + "\n" for docs in picks.values() for d in docs)


class FinishedRun:
    """A finished extractive trastuzumab run in its own redis-server and data dir.

    Attributes: ``redis_url``, ``data_dir`` (Path), ``run_id``, ``corpus`` (Path), ``topic``.
    ``env()`` gives the ``RESEARCH_DATA_DIR``/``REDIS_URL`` pair to point the app at it.
    """

    def __init__(self, redis_url: str, data_dir: Path, run_id: str, corpus: Path) -> None:
        self.redis_url, self.data_dir, self.run_id, self.corpus = (
            redis_url,
            data_dir,
            run_id,
            corpus,
        )
        self.topic = FINISHED_TOPIC

    def env(self) -> dict[str, str]:
        return {"RESEARCH_DATA_DIR": str(self.data_dir), "REDIS_URL": self.redis_url}


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory, finished_corpus):
    """The trastuzumab topic run once per ``make test`` (drug template, 3 perspectives × 2
    turns, extractive) and served to each worker from its own copy.

    The first xdist worker to ask runs it under a file lock into ``shared_tmp``/finished_build
    (a private redis-server, stopped cleanly so its AOF is complete, plus the data dir); then
    every worker — the builder too — copies the AOF and the data dir into its own temp dir and
    starts its own redis-server on the copy (never two servers on one AOF). So the modules on one
    worker share one mutable run, as when each worker ran it itself, and no worker's follow-ups
    or deletions reach another's. The run's citation audit is stored, as after its report page was
    first shown. The stored ``report_path`` (absolute) names the build's copy of the same report
    file. The ``r`` fixture's flushes never touch it. Tests that render
    pages set ``finished_run.env()`` themselves (module-scoped) and must not flush its Redis."""

    build = shared_tmp(tmp_path_factory) / "finished_build"
    with FileLock(str(build.with_suffix(".lock")), timeout=1800):
        if not (build / "run_id").is_file():
            _build_finished_run(build, finished_corpus)
    run_id = (build / "run_id").read_text().strip()
    mine = tmp_path_factory.mktemp("finished")
    shutil.copytree(
        build / "redis", mine / "redis", ignore=shutil.ignore_patterns("*.sock", "redis.log")
    )
    shutil.copytree(build / "data", mine / "data")
    server = EmbeddedRedis(mine / "redis")
    url = server.start()
    yield FinishedRun(url, mine / "data", run_id, finished_corpus)
    server.stop()


@pytest.fixture(scope="module")
def finished_env(finished_run):
    """Settings pointed at the finished run's Redis and data dir for one module (no model:
    ``RESEARCH_LLM_MODEL`` unset); yields the ``FinishedRun``."""
    mp = pytest.MonkeyPatch()
    for k, v in finished_run.env().items():
        mp.setenv(k, v)
    mp.delenv("RESEARCH_LLM_MODEL", raising=False)
    yield finished_run
    mp.undo()


def _build_finished_run(build: Path, corpus: Path) -> None:
    """Run ``FINISHED_TOPIC`` into ``build/redis`` + ``build/data`` and store its citation audit
    (computed once here instead of by each worker's first report render, snapshot and page test;
    ``test_followup`` recomputes it with ``refresh=True``), stop the server (AOF flushed) and write
    ``build/run_id`` last, as the sign that the build is whole."""

    shutil.rmtree(build, ignore_errors=True)  # a half-built leftover of a crashed builder
    server, _url, _data, mp = private_env(
        None, "", redis_dir=build / "redis", data_dir=build / "data"
    )
    try:
        state = jobs.run_foreground(
            jobs.make_config(
                FINISHED_TOPIC, corpus=str(corpus), template="drug", max_perspectives=3, max_turns=2
            )
        )
        if state.status == "complete":
            audit_run(state.run_id)  # as when the report is first shown (stored; one MiniLM pass)
    finally:
        mp.undo()
        server.stop()
    assert state.status == "complete", f"{state.error_code}: {state.error}"
    (build / "run_id").write_text(state.run_id)


@pytest.fixture(scope="module")
def serve_api(tmp_path_factory):
    """Start ``research serve`` over real HTTP: ``serve_api(prefix, **env) -> ServedApi``
    (``tests/served_api.py``); every server it started, and its Redis, stops at the end of the
    module.

    By default the server runs on a private redis-server and data dir (``private_env``), and
    this process's ``RESEARCH_DATA_DIR``/``REDIS_URL`` (and ``env``) point at them for the
    module, so a test can read the store the server writes. ``own_redis=True``: a fresh data
    dir with no ``REDIS_URL``, so the server starts the embedded Redis of that data dir itself
    (as ``make run`` does); this process's environment is left alone. ``env``: settings for the
    server (``RESEARCH_JOB_BACKEND``, ``RESEARCH_CORPUS_ROOTS``...)."""

    with ExitStack() as stack:

        def start(prefix: str, *, own_redis: bool = False, **env: str) -> ServedApi:
            if own_redis:
                data = tmp_path_factory.mktemp(f"{prefix}_served") / "data"
                return stack.enter_context(serving(own_redis_env(data, **env), data, None))
            server, url, data, mp = private_env(tmp_path_factory, prefix, **env)
            stack.callback(server.stop)
            stack.callback(mp.undo)
            return stack.enter_context(serving(subprocess_env(data, url, **env), data, url))

        yield start


@pytest.fixture(scope="session")
def fixture_server():
    """A loopback HTTP server replaying the recorded search-API payloads (tests/fixture_server.py)."""

    if not FIXTURES.is_dir():
        pytest.skip(f"shared API fixtures not found at {FIXTURES} (set RESEARCH_SHARED_DATA)")
    server = FixtureServer()
    yield server
    server.close()


@pytest.fixture()
def backends_env(fixture_server, monkeypatch):
    """Every search backend pointed at the fixture server, fast retries, all modes reset to ok."""
    for name in ("pubmed", "clinicaltrials", "wikipedia", "brave", "tavily", "serper"):
        monkeypatch.setenv(f"RESEARCH_{name.upper()}_URL", fixture_server.url(name))
    monkeypatch.setenv("RESEARCH_HTTP_RETRIES", "2")
    monkeypatch.setenv("RESEARCH_HTTP_TIMEOUT", "1")
    fixture_server.modes.clear()
    fixture_server.hits.clear()
    yield fixture_server
    fixture_server.modes.clear()


@pytest.fixture(scope="session")
def loopback_llm():
    """One loopback server for the session (default responder, no faults); counts reset per test."""
    srv = LoopbackLLM().start()
    yield srv
    srv.stop()


@pytest.fixture()
def llm_env(loopback_llm, monkeypatch, data_dir):
    """Env for a litellm run against the loopback server: key = the canary, fast retries.
    The loopback server stands in for a hosted API, although its address is local: 4 slots,
    2 gap rounds and model-made cards, as a hosted model gets by default."""
    loopback_llm.reset_counts()
    for name, value in {
        "OPENAI_API_KEY": CANARY_KEY,
        "OPENAI_API_BASE": loopback_llm.url,
        "RESEARCH_LLM_BACKOFF_S": "0.01",
        "RESEARCH_LLM_TIMEOUT_S": "1.5",
        "RESEARCH_LLM_MAX_ATTEMPTS": "8",
        "RESEARCH_LLM_CONCURRENCY": "4",
        "RESEARCH_LOCAL_GAP_TURNS": "2",
        "RESEARCH_LOCAL_COMPRESS": "model",
    }.items():
        monkeypatch.setenv(name, value)
    for name in (
        "RESEARCH_LLM_RECORD",
        "RESEARCH_LLM_REPLAY",
        "RESEARCH_LLM_MODEL",
        "RESEARCH_MODEL_PRICES",
    ):
        monkeypatch.setenv(
            name, ""
        )  # empty = unset; the CLI may set them and monkeypatch restores them
    return loopback_llm
