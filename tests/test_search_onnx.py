"""The search index's int8 ONNX Runtime MiniLM (issue 14): made locally from the bundled weights,
cached, close to the float32 PyTorch model, deterministic, and recorded in the index it built."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from research.embeddings import get_embedder
from research.search import LocalSearch
from research.search import onnx_minilm
from research.search.local import DOC_TOKENS, _dense_text
from research.search.corpus import read_corpus


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def encoder(model_dir):
    return onnx_minilm.get_onnx_embedder(model_dir)


def test_model_is_exported_once_and_quantised(model_dir, encoder):
    path = onnx_minilm.model_file(model_dir)
    assert path == encoder.path and path.is_file()
    assert [p.name for p in model_dir.iterdir()] == [path.name]  # no temp files left behind
    mtime = path.stat().st_mtime_ns
    assert onnx_minilm.model_file(model_dir).stat().st_mtime_ns == mtime  # cached, not re-exported
    graph = onnx.load(str(path)).graph
    ops = [n.op_type for n in graph.node]
    weights = {i.name for i in graph.initializer if len(i.dims) == 2}
    assert ops.count("MatMulInteger") == 36  # 6 layers x (Q, K, V, attention out, FFN in, FFN out)
    assert not [n for n in graph.node if n.op_type == "MatMul" and n.input[1] in weights]


def test_vectors_match_the_float32_model(encoder, corpus_path):
    docs = read_corpus(corpus_path).documents[:48]
    texts = [_dense_text(d) for d in docs]
    int8 = encoder.encode(texts, max_tokens=DOC_TOKENS)
    fp32 = get_embedder().encode(texts, max_tokens=DOC_TOKENS)
    assert int8.shape == (48, 384) and int8.dtype == np.float32
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    cos = (int8 * fp32).sum(axis=1)
    assert cos.min() > 0.98 and cos.mean() > 0.99
    assert np.array_equal(int8, encoder.encode(texts, max_tokens=DOC_TOKENS))  # deterministic
    q = "trastuzumab cardiotoxicity"
    assert float(encoder.encode_one(q) @ get_embedder().encode_one(q)) > 0.97
    with pytest.raises(TypeError, match="list of strings"):
        encoder.encode("a bare string")
    assert encoder.encode([]).shape == (0, 384)


def test_index_records_its_variant_and_rebuilds_for_another(tmp_path, corpus_path, model_dir):
    src = tmp_path / "small.jsonl"
    with corpus_path.open(encoding="utf-8") as fh:
        src.write_text("".join(next(fh) for _ in range(12)), encoding="utf-8")
    ls = LocalSearch(src, tmp_path / "idx", model_dir=model_dir)
    meta_file = ls.index_path / "meta.json"
    meta = json.loads(meta_file.read_text())
    assert ls.built and meta["embedding"] == onnx_minilm.VARIANT == ls.variant
    again = LocalSearch(src, tmp_path / "idx", model_dir=model_dir)
    assert not again.built and np.array_equal(again.embeddings, ls.embeddings)
    assert [i for i, _ in again.rank("HER2 breast cancer", 5)] == [i for i, _ in ls.rank("HER2 breast cancer", 5)]
    meta_file.write_text(json.dumps({**meta, "embedding": "another-model"}))
    assert LocalSearch(src, tmp_path / "idx", model_dir=model_dir).built  # never mixes variants
