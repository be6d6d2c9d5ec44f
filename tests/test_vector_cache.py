"""The shared vector cache: one SQLite file beside the search indexes, read by every process;
vectors read back equal fresh ones bit for bit, and a broken file never fails an embedding."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from research.search.embeddings import get_embedder
from research.search.vector_cache import FILE_NAME, VectorCache, shared_cache, vector_key

TEXTS = [
    "Trastuzumab is a monoclonal antibody against HER2.",
    "Cardiotoxicity is the main safety concern of trastuzumab.",
    "The typhoon made landfall on the Korean peninsula.",
]


@pytest.fixture
def index_dir(tmp_path, monkeypatch):
    d = tmp_path / "indexes"
    monkeypatch.setenv("RESEARCH_INDEX_DIR", str(d))
    monkeypatch.setenv("RESEARCH_VECTOR_CACHE", "1")
    get_embedder()._memo.clear()  # the process memory would answer before the file
    return d


def test_store_round_trip_is_bit_identical_and_first_write_wins(tmp_path):
    cache = VectorCache(tmp_path / FILE_NAME, dim=4)
    a = np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32)
    key = vector_key("m", 256, "text")
    cache.put([(key, a)])
    cache.put([(key, a * 2)])  # INSERT OR IGNORE: the first vector stays
    got = cache.get([key, vector_key("m", 256, "other")])
    assert list(got) == [key] and np.array_equal(got[key], a)
    assert cache.count() == 1
    assert vector_key("m", 128, "text") != key  # the window is part of the key


def test_embedder_fills_the_file_and_reads_it_back(index_dir):
    emb = get_embedder()
    fresh = emb.encode(TEXTS)
    cache = shared_cache(index_dir, emb.dim)
    assert (index_dir / FILE_NAME).is_file() and cache.count() >= 3
    emb._memo.clear()
    again = emb.encode(TEXTS)  # from the file this time
    assert np.array_equal(fresh, again)


def test_another_process_reads_the_vectors_this_one_wrote(index_dir):
    emb = get_embedder()
    mine = emb.encode(TEXTS)
    code = (
        "import json,sys,numpy as np\n"
        "from research.search.vector_cache import shared_cache, vector_key\n"
        "from research.search.embeddings import MODEL_NAME\n"
        "c = shared_cache(sys.argv[1], 384)\n"
        "keys = [vector_key(MODEL_NAME + ':fp32', 256, t) for t in json.loads(sys.argv[2])]\n"
        "got = c.get(keys)\n"
        "print(json.dumps([got[k].tolist() if k in got else None for k in keys]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(index_dir), json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
        env=dict(os.environ),
    )
    theirs = np.array(json.loads(out.stdout), dtype=np.float32)
    assert np.array_equal(theirs, mine)


def test_cache_off_computes_the_same_vectors_and_writes_nothing(index_dir, monkeypatch):
    emb = get_embedder()
    on = emb.encode(TEXTS)
    monkeypatch.setenv("RESEARCH_VECTOR_CACHE", "0")
    off = emb.encode(TEXTS + ["a text only the uncached call saw"])
    assert np.array_equal(on, off[:3])
    monkeypatch.setenv("RESEARCH_VECTOR_CACHE", "1")
    emb._memo.clear()
    key = vector_key(f"{emb.name}:{emb.precision}", 256, "a text only the uncached call saw")
    assert shared_cache(index_dir, emb.dim).get([key]) == {}


def test_a_broken_file_turns_the_cache_off_without_failing(tmp_path, capsys):
    bad = tmp_path / FILE_NAME
    bad.write_bytes(b"this is not a database" * 100)
    cache = VectorCache(bad, dim=4)
    key = vector_key("m", 256, "t")
    assert cache.get([key]) == {}
    cache.put([(key, np.zeros(4, dtype=np.float32))])
    assert cache.disabled
    assert "unusable" in capsys.readouterr().err


def test_cached_vectors_need_no_model_and_a_miss_loads_it(index_dir):
    """A process whose texts are all in the shared file never imports torch; the first text
    the file lacks loads the model, and its vector equals this process's fresh one."""
    mine = get_embedder().encode(TEXTS)
    code = (
        "import json,sys\n"
        "from research.search.embeddings import get_embedder\n"
        "e = get_embedder()\n"
        "hit = e.encode(json.loads(sys.argv[1]))\n"
        "before = ['torch' in sys.modules, e.loaded]\n"
        "miss = e.encode(['A text no process embedded before: ' + sys.argv[2]])\n"
        "print(json.dumps([before, ['torch' in sys.modules, e.loaded], hit.tolist()]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(TEXTS), str(index_dir)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
        env=dict(os.environ),
    )
    before, after, hit = json.loads(out.stdout)
    assert before == [False, False]
    assert after == [True, True]
    assert np.array_equal(np.array(hit, dtype=np.float32), mine)
