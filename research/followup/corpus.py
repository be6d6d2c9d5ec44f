"""A run's own evidence, searchable: its saved sources with the full text its raw artifacts hold
("answered from the run's saved sources and raw artifact files").

* Documents: one per collector source (docs/design.md § Source collector: ``SourceRecord``). Its text is the longest
  text any raw search or scrape artifact of the run holds for the source's URL (the full
  abstract / record / page the backend returned, docs/design.md § Artifact offload); else its ``key_excerpts`` and
  the dialogue-turn snippets that cited it.
* Index: the hybrid BM25 + MiniLM index of ``research.search.local`` (``LocalSearch``) over
  those documents, written as a JSONL corpus in ``{data_dir}/followups/{run_id}/evidence.jsonl``
  and cached beside it in ``index/``. The file is rewritten only when its content changes, so
  the cached index is reused until research-more adds a source (then the fingerprint changes).
* Passages: the documents' sentences (``research.text.split_sentences``)
  and each pair of adjacent sentences, embedded with MiniLM on demand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from research.config import Settings, load_settings
from research.models import SourceRecord
from research.search.embeddings import get_embedder
from research.search.local import LocalSearch
from research.store.keys import check_run_id
from research.store.runs import RunStore
from research.text import clean, split_sentences
from research.text.artifact_text import artifact_texts

MAX_SENTENCES = 120  # per source: enough for any abstract or trial record; bounds embedding cost


@dataclass
class EvidenceDoc:
    """One source of the run with its text (``text``: full text from artifacts when found)."""

    source: SourceRecord
    text: str
    from_artifact: bool

    def sentences(self) -> list[str]:
        """The text's sentences (title dropped when the text repeats it), at most MAX_SENTENCES."""
        sents = split_sentences(self.text)
        title = clean(self.source.title).rstrip(".").lower()
        if len(sents) > 1 and sents[0].rstrip(".").lower() == title:
            sents = sents[1:]
        return sents[:MAX_SENTENCES] or ([clean(self.source.title)] if self.source.title else [])


def followup_dir(run_id: str, settings: Settings | None = None) -> Path:
    """``{data_dir}/followups/{run_id}``: the run's evidence corpus and its search index."""
    return (settings or load_settings()).data_dir / "followups" / check_run_id(run_id)


def load_evidence(
    store: RunStore, run_id: str, settings: Settings | None = None
) -> list[EvidenceDoc]:
    """Every collector source of the run with its best text, in source-id order."""
    texts = artifact_texts(run_id, settings)
    snippets: dict[str, list[str]] = {}
    for turn in store.get_turns(run_id):
        for s in turn.sources:
            if s.snippet:
                snippets.setdefault(s.source_id, []).append(s.snippet)
    docs = []
    for src in store.collector(run_id).all_sources():
        full = texts.get(src.url, "")
        if full:
            docs.append(EvidenceDoc(src, full, True))
        else:
            parts = [src.key_excerpts, *snippets.get(src.source_id, [])]
            docs.append(
                EvidenceDoc(
                    src, "\n".join(dict.fromkeys(p for p in parts if p)) or src.title, False
                )
            )
    return docs


class EvidenceIndex:
    """Hybrid search over one run's evidence (see module docstring).

    Raises:
        CorpusError: the run has no source yet (nothing to search).
    """

    def __init__(self, store: RunStore, run_id: str, settings: Settings | None = None) -> None:

        self.docs = load_evidence(store, run_id, settings)
        self.by_id = {d.source.source_id: d for d in self.docs}
        folder = followup_dir(run_id, settings)
        folder.mkdir(parents=True, exist_ok=True)
        corpus = folder / "evidence.jsonl"
        body = "".join(
            json.dumps(
                {
                    "id": d.source.source_id,
                    "title": d.source.title,
                    "url": d.source.url,
                    "text": d.text,
                    "source": d.source.source_type,
                }
            )
            + "\n"
            for d in self.docs
        )
        if not corpus.is_file() or corpus.read_text(encoding="utf-8") != body:
            tmp = corpus.with_suffix(".tmp")
            tmp.write_text(body, encoding="utf-8")
            tmp.replace(corpus)
        self.search = LocalSearch(corpus, folder / "index")
        self.embedder = self.search.embedder

    def top_sources(self, question: str, k: int = 8) -> list[tuple[EvidenceDoc, float]]:
        """The ``k`` sources best matching ``question`` (fused score in [0, 1]), best first."""
        out = []
        for i, score in self.search.rank(" ".join(question.split()), k):
            doc = self.by_id.get(self.search.docs[i].id)
            if doc is not None:
                out.append((doc, score))
        return out


def passages(sentences: list[str]) -> list[tuple[str, int]]:
    """Candidate passages of a source: each sentence and each adjacent pair, as
    ``(text, index of the first sentence)``."""
    out = [(s, i) for i, s in enumerate(sentences)]
    out += [(f"{a} {b}", i) for i, (a, b) in enumerate(zip(sentences, sentences[1:], strict=False))]
    return out


def embed(texts: list[str]) -> np.ndarray:
    """MiniLM vectors ``(len(texts), 384)``, L2-normalised (``research.search.embeddings``)."""
    return get_embedder().encode(texts)
