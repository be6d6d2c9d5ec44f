"""Loopback replies for the Co-STORM steps (``costorm_*``) of the litellm engine
(``research/engines/litellm/costorm.py``): deterministic JSON built from each step's
``<material>`` alone, shaped like the step's reply schema, so a Co-STORM litellm run works
offline. Registered in ``loopback_responder.HANDLERS`` (``COSTORM_HANDLERS``).

The intent policy mirrors the offline engine (docs/design.md § Co-STORM round-table): a question is
answered; an answer gets further details or a new information request, alternating; details are followed by a request.
"""

from __future__ import annotations

import re

from research.citations import CITE_RE as _CITE_RE

SENT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
CITE_RE = _CITE_RE  # the one citation pattern (research/citations.py)
WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
LEAD_RE = re.compile(
    r"^\s*(?:what|how|which|why|when|who|can|could|does|do|is|are|as)\b.*?\b"
    r"(?:about|on|of|regarding|know)\s+",
    re.I,
)
STOP = {
    "the",
    "and",
    "for",
    "with",
    "that",
    "this",
    "from",
    "what",
    "which",
    "were",
    "was",
    "are",
    "is",
    "its",
    "their",
    "into",
    "about",
    "known",
    "sources",
    "report",
    "does",
    "have",
    "has",
    "been",
    "than",
    "more",
    "other",
    "also",
    "such",
    "these",
    "those",
    "there",
    "they",
    "over",
    "after",
    "between",
    "among",
    "point",
    "tell",
    "know",
    "should",
    "else",
    "say",
}
FALLBACK_EXPERTS = (
    "Clinical Evidence",
    "Safety",
    "Mechanism",
    "Health Economics",
    "Guidelines",
    "History",
)
QUESTIONS = ("original_question", "information_request")


def _first_sentence(text: str) -> str:
    parts = [s.strip() for s in SENT_RE.split(CITE_RE.sub("", text or "")) if len(s.strip()) > 25]
    s = parts[0] if parts else (text or "").strip()
    return s if not s or s[-1] in ".!?" else s + "."


def _content_words(text: str, exclude: set[str], n: int) -> list[str]:
    out: list[str] = []
    for w in WORD_RE.findall(text or ""):
        low = w.lower()
        if (
            len(low) > 3
            and low not in STOP
            and low not in exclude
            and low not in (x.lower() for x in out)
        ):
            out.append(w)
        if len(out) >= n:
            break
    return out


def _title(words: list[str]) -> str:
    return " ".join(w if w.isupper() else w.capitalize() for w in words)


def _topic_words(topic: str) -> set[str]:
    return {w.lower() for w in WORD_RE.findall(topic or "")}


def _experts(m: dict) -> dict:
    topic, n = m.get("topic", ""), int(m.get("n", 3))
    out = [
        {
            "name": "General Background Expert",
            "focus": f"Definitions, key facts and background of {topic}",
            "questions": [f"What is {topic}, and what are its defining facts?"],
        }
    ]
    phrases = [
        _title(_content_words(r.get("title", ""), _topic_words(topic), 2))
        for r in m.get("background", [])
    ]
    for phrase in [p for p in phrases if p] + list(FALLBACK_EXPERTS):
        name = f"{phrase} Expert"
        if len(out) < n and name.lower() not in {str(e["name"]).lower() for e in out}:
            out.append(
                {
                    "name": name,
                    "focus": f"{phrase} in relation to {topic}",
                    "questions": [f"What do sources report about {phrase.lower()} in {topic}?"],
                }
            )
    return {"perspectives": out[:n]}


def _intent(m: dict) -> dict:
    history, last = m.get("history", []), m.get("last_intent", "")
    if not last or last in QUESTIONS:
        return {"intent": "potential_answer"}
    if last == "potential_answer":
        details = sum(t.get("intent") == "further_details" for t in history)
        requests = sum(t.get("intent") == "information_request" for t in history)
        return {"intent": "further_details" if details <= requests else "information_request"}
    return {"intent": "information_request"}


def _question(m: dict) -> dict:
    topic, history = m.get("topic", ""), m.get("history", [])
    asked = {t.get("utterance", "").strip().lower() for t in history}
    turn = (history[-1].get("turn", 0) if history else 0) + 1
    cands = [
        f"What is known about {f.get('label', f.get('key', ''))} for {topic}?"
        for f in m.get("next_focus", [])
    ]
    cands += list(m.get("expert", {}).get("questions", []))
    for q in cands:
        if q.strip().lower() not in asked:
            return {"text": q}
    return {
        "text": f"What else should we know about {m.get('expert', {}).get('focus', topic)} (point {turn})?"
    }


def _queries(m: dict) -> dict:
    q = " ".join(_content_words(m.get("question", ""), set(), 10)) or m.get("topic", "")
    if m.get("intent") == "further_details":
        focus = " ".join(_content_words(m.get("expert", {}).get("focus", ""), set(), 6))
        return {"queries": [x for x in (focus, q) if x]}
    return {"queries": [q]}


def _answer(m: dict) -> dict:
    parts, cited = [], []
    for r in m.get("results", [])[:4]:
        s = _first_sentence(r.get("snippet", ""))
        if len(s) > 25:
            parts.append(f"{s.rstrip('.!?')} [{r['n']}].")
            cited.append(r["n"])
    if not parts:
        return {"answer": "The sources I found do not address this question.", "cited": []}
    return {"answer": " ".join(parts), "cited": cited}


def _moderator(m: dict) -> dict:
    topic, items = m.get("topic", ""), m.get("items", [])
    if not items:
        q = f"What have we not yet discussed about {topic}?"
        return {"question": q, "question_only": q, "cited": []}
    sentence = _first_sentence(items[0].get("text", ""))
    words = _content_words(sentence, _topic_words(topic), 4)
    q = f"What do the sources say about {' '.join(words).lower() or 'this'} for {topic}?"
    return {
        "question": f"One source we have not used notes: {sentence.rstrip('.!?')} [1]. {q}",
        "question_only": q,
        "cited": [1],
    }


def _update(m: dict) -> dict:
    n = int(m.get("n", 3))
    return {
        "perspectives": [
            {
                "name": e.get("name", ""),
                "focus": e.get("focus", ""),
                "questions": e.get("questions", []),
            }
            for e in m.get("experts", [])[:n]
        ]
    }


def concept_of(question: str, topic: str, text: str = "") -> str:
    """A 1–3 word concept name from a question ('What is known about Efficacy for X?' →
    'Efficacy'); from the item's text when the question is only the topic."""
    core = LEAD_RE.sub("", question or "", count=1)
    core = re.split(r"\b(?:for|in|of|with)\b|[:?(]", core, maxsplit=1)[0]
    exclude = _topic_words(topic)
    words = (
        _content_words(core, exclude, 3)
        or _content_words(question, exclude, 3)
        or _content_words(_first_sentence(text), exclude, 2)
    )
    return _title(words) or "Other Findings"


def _placement(m: dict) -> dict:
    cands = m.get("candidates", [])
    if not cands or not m.get("allow_new", True):
        return {"choice": 1, "new_node": ""}
    root = min(cands, key=lambda c: len(c["path"]))
    best = next((c for c in cands if c is not root), None)
    if best and best["similarity"] >= 0.45:
        return {"choice": best["n"], "new_node": ""}
    parent = best if best and best["similarity"] >= 0.3 else root
    return {
        "choice": parent["n"],
        "new_node": concept_of(m.get("question", ""), m.get("topic", ""), m.get("text", "")),
    }


def _subtopics(m: dict) -> dict:
    items, k = m.get("items", []), int(m.get("max_subtopics", 4))
    k = max(2, min(k, len(items) // 5))
    exclude = _topic_words(m.get("topic", "")) | {
        w.lower() for w in WORD_RE.findall(m.get("path", ""))
    }
    names: list[str] = []
    for i in range(k):
        item = items[(i * len(items)) // k] if items else {}
        name = (
            _title(_content_words(_first_sentence(item.get("text", "")), exclude, 2))
            or f"Aspect {i + 1}"
        )
        names.append(
            name if name.lower() not in (x.lower() for x in names) else f"{name} ({i + 1})"
        )
    # each item to the name sharing most of its words (1-based), else to its slice's name
    name_words = [set(WORD_RE.findall(n.lower())) for n in names]
    assignment = []
    for j, item in enumerate(items):
        words = set(WORD_RE.findall(str(item.get("text", "")).lower()))
        overlap = [len(words & w) for w in name_words]
        best = max(range(k), key=lambda x: (overlap[x], -x))
        assignment.append(best + 1 if overlap[best] else (j * k) // len(items) + 1)
    return {"names": names, "assignment": assignment}


COSTORM_HANDLERS = {
    "costorm_experts": _experts,
    "costorm_intent": _intent,
    "costorm_question": _question,
    "costorm_queries": _queries,
    "costorm_answer": _answer,
    "costorm_polish": lambda m: {"text": m.get("utterance", "")},
    "costorm_moderator": _moderator,
    "costorm_update_experts": _update,
    "costorm_placement": _placement,
    "costorm_subtopics": _subtopics,
}
