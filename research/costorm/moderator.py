"""The Co-STORM moderator (docs/design.md § Moderator; Co-STORM paper §3.3): when it speaks, how it
ranks the unused information, and its turn.

Rerank score (paper §3.3, docs/design.md § Moderator: ``similarity_score``)::

    score(i) = cos(i, t)^α · (1 − cos(i, q))^(1−α)

i: a piece of retrieved information not cited yet, t: the topic, q: the question i was
retrieved for; cosines of all-MiniLM-L6-v2 embeddings clipped to [0, 1]. High scores are on
topic but off the question that found them: new directions for the discussion.
"""

from __future__ import annotations

import numpy as np

from research.engines.costorm_steps import PoolItem
from research.models import ANSWER_INTENTS, CoStormTurn

MODERATOR = "Moderator"
TOP_ITEMS = 3


def rerank_score(cos_it: float, cos_iq: float, alpha: float) -> float:
    """``cos(i,t)^α · (1 − cos(i,q))^(1−α)`` with both cosines clipped to [0, 1] (α in [0, 1];
    ``0^0`` counts as 1, so α = 1 ranks by topic similarity alone and α = 0 by novelty alone)."""
    it = min(max(float(cos_it), 0.0), 1.0)
    iq = min(max(float(cos_iq), 0.0), 1.0)
    a = min(max(float(alpha), 0.0), 1.0)
    left = 1.0 if a == 0 else it**a
    right = 1.0 if a == 1 else (1.0 - iq) ** (1.0 - a)
    return left * right


def rerank(
    items: list[PoolItem], topic: str, alpha: float, vectors
) -> list[tuple[float, PoolItem]]:
    """``(score, item)`` best first (ties keep pool order). ``vectors.sim`` gives cosines."""
    if not items:
        return []
    texts = [i.text for i in items]
    cos_t = vectors.sim([topic], texts)[0]
    questions = list(dict.fromkeys(i.question for i in items))
    cos_q = vectors.sim(questions, texts)
    qi = {q: n for n, q in enumerate(questions)}
    scores = [
        rerank_score(cos_t[j], cos_q[qi[it.question], j], alpha) for j, it in enumerate(items)
    ]
    order = sorted(range(len(items)), key=lambda j: (-round(scores[j], 6), j))
    return [(round(float(scores[j]), 6), items[j]) for j in order]


def consecutive_answers(history: list[CoStormTurn]) -> int:
    """Answer turns (potential_answer / further_details) at the end of the history."""
    n = 0
    for t in reversed(history):
        if t.intent not in ANSWER_INTENTS:
            break
        n += 1
    return n


def should_speak(history: list[CoStormTurn], moderator_after: int) -> bool:
    """Seed 004: the moderator speaks after L = ``moderator_after`` consecutive answer turns."""
    return consecutive_answers(history) >= moderator_after


def since_last_moderator(pool: list[PoolItem], history: list[CoStormTurn]) -> list[PoolItem]:
    """Pool items retrieved after the moderator's last turn (all when it has not spoken)."""
    last = max((t.turn_number for t in history if t.kind == "moderator"), default=0)
    fresh = [p for p in pool if p.turn > last]
    return fresh or pool


def top_items(
    pool: list[PoolItem],
    history: list[CoStormTurn],
    topic: str,
    alpha: float,
    vectors,
    k: int = TOP_ITEMS,
) -> list[PoolItem]:
    """The ``k`` best unused items since the moderator's last turn, distinct sources first."""
    ranked = rerank(since_last_moderator(pool, history), topic, alpha, vectors)
    out: list[PoolItem] = []
    seen: set[str] = set()
    for _, item in ranked:
        key = item.result.url
        if key in seen:
            continue
        seen.add(key)
        out.append(item)
        if len(out) >= k:
            break
    return out


def as_array(scores: list[tuple[float, PoolItem]]) -> np.ndarray:
    """Scores of a ``rerank`` result as a float array (for tests and charts)."""
    return np.array([s for s, _ in scores], dtype=float)
