"""The embedder: bundled all-MiniLM-L6-v2 loaded once, batched, normalised float32 vectors."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from research.search.embeddings import (
    DIM,
    _pick_precision,
    cosine,
    get_embedder,
    model_path,
    normalize,
)


@pytest.fixture(scope="session")
def embedder():
    return get_embedder()


def test_model_is_loaded_from_the_bundled_wheel(embedder):
    assert model_path().is_dir()
    assert (model_path() / "model.safetensors").is_file()
    assert embedder.path == model_path()
    assert embedder.dim == DIM == 384
    assert embedder.max_seq_length == 256


def test_singleton_is_shared_across_threads(embedder):
    barrier = threading.Barrier(4)

    def grab():
        barrier.wait()
        return get_embedder()

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: grab(), range(4)))
    assert all(e is embedder for e in got)


def test_encode_shapes_dtype_and_normalisation(embedder):
    vecs = embedder.encode(["Trastuzumab targets HER2.", "A typhoon hit Korea.", "x"])
    assert vecs.shape == (3, 384)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    empty = embedder.encode([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    assert embedder.encode_one("hello").shape == (384,)


def test_encode_rejects_a_bare_string(embedder):
    with pytest.raises(TypeError, match="list of strings"):
        embedder.encode("not a list")
    with pytest.raises(TypeError):
        embedder.encode(["ok", 3])


def test_batching_gives_the_same_vectors_as_one_by_one(embedder, monkeypatch):
    monkeypatch.setenv("RESEARCH_VECTOR_CACHE", "0")  # compute every vector, keep none
    texts = [
        f"Sentence number {i} about {topic}."
        for i, topic in enumerate(
            ["cancer", "storms", "drums", "vaccines", "rivers", "trains", "law"] * 3
        )
    ] + ["A much longer sentence about the cardiac safety of trastuzumab, " * 4]
    batched = embedder.encode(texts, batch_size=4)
    big = embedder.encode(texts, batch_size=64)
    backwards = embedder.encode(texts[::-1])[::-1]
    single = np.stack([embedder.encode_one(t) for t in texts])
    assert batched.shape == (22, 384)
    # a text's vector depends on the text alone, bit for bit: so a cached vector equals a
    # fresh one, and a report is the same with the shared vector cache and without it
    assert np.array_equal(batched, single)
    assert np.array_equal(big, single)
    assert np.array_equal(backwards, single)


def test_default_precision_is_float32(monkeypatch):

    monkeypatch.delenv("RESEARCH_EMBED_PRECISION", raising=False)
    assert _pick_precision() == "fp32"
    monkeypatch.setenv("RESEARCH_EMBED_PRECISION", "auto")
    assert _pick_precision() == "fp32"


def test_similarity_is_semantic(embedder):
    a, b, c = embedder.encode(["heart attack", "myocardial infarction", "filing a tax return"])
    assert float(a @ b) > float(a @ c) + 0.2


def test_concurrent_encodes_are_safe_and_consistent(embedder):
    texts = [f"query {i} on breast cancer trials" for i in range(40)]
    expected = embedder.encode(texts)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: embedder.encode(texts, batch_size=8), range(4)))
    for got in results:
        assert np.min(np.sum(got * expected, axis=1)) > 0.999


def test_cosine_and_normalize_helpers():
    a = np.array([3.0, 4.0])
    assert cosine(a, a) == pytest.approx(1.0)
    assert cosine(a, np.array([-4.0, 3.0])) == pytest.approx(0.0)
    m = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    assert cosine(a, m).shape == (3,)
    assert cosine(m, m).shape == (3, 3)
    np.testing.assert_allclose(np.diag(cosine(m, m)), 1.0, atol=1e-6)
    z = normalize(np.zeros((2, 3)))
    assert np.all(z == 0)
