"""Evidence passages of a run, per saved source (docs/design.md § Terms: evidence).

Key ``run:{id}:evidence`` (``keys.run_evidence``): a HASH source id (``src_012``) → JSON list of
``EvidencePassage``. A source found again by a later search of the run merges its new passages
into the stored list (the best of each question kept, ``PER_QUESTION`` unless the caller gives
another limit, by its rank then text order), so the stored evidence is the same whatever the order
the searches found it in.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import redis

from research.models import EvidencePassage
from research.store import keys

PER_QUESTION = 3
Rank = Callable[[EvidencePassage], float]
Limit = Callable[[str], int]


def by_score(p: EvidencePassage) -> float:
    """The default order of a question's passages: the evidence score."""
    return p.score


def _per_question(_key: str) -> int:
    return PER_QUESTION


def merge(
    old: list[EvidencePassage],
    new: list[EvidencePassage],
    rank: Rank = by_score,
    limit: Limit = _per_question,
) -> list[EvidencePassage]:
    """``old`` ∪ ``new`` without repeats, the best ``limit(question key)`` per question
    (``rank``, then offset; ``PER_QUESTION`` by default); questions in first-seen order. The
    caller that chose the new passages gives the order and the limit it chose them by, so a
    source found again keeps the same best ones."""
    by_q: dict[str, dict[tuple[int, str], EvidencePassage]] = {}
    for p in [*old, *new]:
        by_q.setdefault(p.question, {})[(p.start, p.passage)] = p
    out: list[EvidencePassage] = []
    for passages in by_q.values():
        best = sorted(passages.values(), key=lambda p: (-rank(p), p.start, p.passage))
        out += best[: limit(best[0].question)]
    return out


class EvidenceStore:
    """The evidence of one run. ``r``: ``redis.Redis`` with ``decode_responses=True``."""

    def __init__(self, r: redis.Redis, run_id: str) -> None:
        self.r = r
        self.key = keys.run_evidence(run_id)

    def add(
        self,
        source_id: str,
        passages: list[EvidencePassage],
        rank: Rank = by_score,
        limit: Limit = _per_question,
    ) -> list[EvidencePassage]:
        """Merge ``passages`` into the source's stored evidence (``merge`` by ``rank`` and
        ``limit``); returns the stored list. Called by the one committing thread of a run, so
        read-merge-write is safe."""
        merged = merge(self.get(source_id), passages, rank, limit)
        self.r.hset(self.key, source_id, json.dumps([p.model_dump(mode="json") for p in merged]))
        return merged

    def get(self, source_id: str) -> list[EvidencePassage]:
        """The source's passages ([] when it has none)."""
        raw = self.r.hget(self.key, source_id)
        return [EvidencePassage.model_validate(x) for x in json.loads(raw)] if raw else []

    def all(self) -> dict[str, list[EvidencePassage]]:
        """``source id → passages`` for every source with evidence (one round trip)."""
        return {
            str(sid): [EvidencePassage.model_validate(x) for x in json.loads(raw)]
            for sid, raw in sorted(self.r.hgetall(self.key).items())
        }

    def for_question(self, key: str) -> list[EvidencePassage]:
        """Every passage that counts for question ``key``, best first (score, source, offset)."""
        out = [p for ps in self.all().values() for p in ps if p.question == key]
        return sorted(out, key=lambda p: (-p.score, p.source_id, p.start))
