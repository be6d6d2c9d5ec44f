"""Extractive tool-result compression (docs/design.md § Tool-result compression) into a summary card
``{summary_title, summary, extraction, is_useful}``.

The raw output is read as JSON when it parses (any nesting of dicts/lists: the text fields of
each record are used, e.g. a search tool's ``{"query", "results": [{title, snippets, text}]}``),
else as plain text. Sentences are ranked by cosine similarity to the step (title + description);
the summary takes the best 3–10, the extraction the best remaining sentences that carry a number
or a named entity. ``is_useful`` is false for empty output, output with no records, or output
whose best sentence is below ``USEFUL_SIM``. The card is kept within ~8 % of the raw characters
(docs/design.md § Context reduction: context reduction > 80 %).
"""

from __future__ import annotations

import json
import re
from typing import Any

from research.engines.extractive.dialogue import relevance
from research.models import SummaryCard
from research.text import (
    clip,
    content_words,
    ensure_period,
    is_boilerplate,
    norm_key,
    numbers,
    ranked_phrases,
    split_sentences,
    title_case,
)
from research.text.vectors import Vectors, pick_diverse, rank

TEXT_FIELDS = (
    "title",
    "snippets",
    "snippet",
    "text",
    "content",
    "description",
    "abstract",
    "summary",
    "body",
    "answer",
    "raw_content",
    "brief_summary",
)
USEFUL_SIM = 0.30  # best sentence vs step title + description
MAX_SENTENCES = 400  # sentences ranked per call (first ones kept)
SENTENCE_CHARS = 220  # a summary sentence is clipped to this
BULLET_CHARS = 160
_NAME = re.compile(r"^[A-Z][A-Za-z0-9-]+$")


def _texts(node: Any, out: list[str], depth: int = 0) -> int:
    """Collect text fields from parsed JSON into ``out``; returns the number of records seen."""
    if depth > 8:
        return 0
    records = 0
    if isinstance(node, dict):
        found = False
        for key in TEXT_FIELDS:
            val = node.get(key)
            if isinstance(val, str) and val.strip():
                out.append(val)
                found = True
            elif isinstance(val, list):
                strs = [v for v in val if isinstance(v, str) and v.strip()]
                out.extend(strs)
                found = found or bool(strs)
        records += int(found)
        for key, val in node.items():
            if key not in TEXT_FIELDS and isinstance(val, (dict, list)):
                records += _texts(val, out, depth + 1)
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, str) and item.strip() and depth > 0:
                out.append(item)
                records += 1
            else:
                records += _texts(item, out, depth + 1)
    return records


def parse_raw(raw: str) -> list[str]:
    """Text pieces of a raw tool output: JSON text fields, or the whole string when not JSON.

    Returns [] for empty output and for JSON without any text-bearing record.
    """
    raw = (raw or "").strip()
    if not raw:
        return []
    if raw[0] in "[{":
        try:
            data = json.loads(raw)
        except ValueError:
            return [raw]
        pieces: list[str] = []
        _texts(data, pieces)
        return pieces
    return [raw]


def plan_topic(plan_title: str) -> str:
    """The topic inside a plan title ('Research plan: X' → 'X')."""
    return re.sub(r"^\s*research plan\s*:\s*", "", plan_title or "", flags=re.I).strip()


def _sentences(pieces: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for piece in pieces:
        for s in split_sentences(piece):
            key = norm_key(s)
            if len(s.split()) >= 4 and key not in seen and not is_boilerplate(s):
                seen.add(key)
                out.append(s)
            if len(out) >= MAX_SENTENCES:
                return out
    return out


def _is_fact(sentence: str) -> bool:
    """Carries a number (not only a year-like id) or a capitalised name/acronym mid-sentence."""
    if numbers(sentence):
        return True
    words = [w.strip("()[],;:\"'") for w in sentence.split()[1:]]
    return any(_NAME.match(w) for w in words)


def _title(step_text: str, step_title: str, chosen: list[str], n_records: int) -> str:
    """5–12 words: the chosen sentences' top key phrases (never the step title verbatim, whole
    phrases only) + where they came from, e.g. 'Maintenance Therapy and Progression-Free Survival
    in 4 Results'."""
    banned = step_title.strip().lower()
    phrases = [
        p
        for p in ranked_phrases([" ".join(chosen)], top=8)[0]
        if banned not in p.lower() and p.lower() not in banned
    ]
    phrases = phrases or [w for w in content_words(step_text) if w.lower() not in banned][:3]
    suffix = f"in {n_records} Results" if n_records > 1 else "in the Tool Output"
    picked: list[str] = []
    for p in phrases[:3]:
        if len(" ".join([*picked, p]).split()) + len(suffix.split()) + 1 <= 12:
            picked.append(p)
    head = ", ".join(picked[:-1]) + (f" and {picked[-1]}" if len(picked) > 1 else "".join(picked))
    title = title_case(f"{head} {suffix}") if head else ""
    if len(title.split()) < 5:
        title = (
            title_case(f"Key findings on {head} {suffix}")
            if head
            else "Key Findings in the Tool Output"
        )
    return " ".join(title.split()[:12])


def compress(
    vectors: Vectors, plan_title: str, step_title: str, step_description: str, raw_output: str
) -> SummaryCard:
    """Seed 001 §4.4 card for one tool call (deterministic for the same input).

    Relevance is ``dialogue.relevance`` to the step title + description, with the plan's topic
    (``plan_title`` minus a 'Research plan:' prefix) as the topic. Summary: 3–10 of the most
    step-relevant sentences (fewer when fewer are relevant), scaled
    with the output's size (one per ~15 raw sentences); extraction: up to half as many more
    sentences with numbers or named entities, as bullets. Both are clipped so the card stays
    ≤ max(700, 8 % of the raw characters).
    """
    pieces = parse_raw(raw_output)
    sents = _sentences(pieces)
    step_text = f"{step_title}: {step_description}".strip(": ")
    empty = SummaryCard(
        summary_title="No Usable Content in This Tool Output",
        summary="The tool returned nothing relevant to this research step.",
        extraction=[],
        is_useful=False,
    )
    if not sents:
        return empty
    score, direct = relevance(vectors, step_text, plan_topic(plan_title), sents)
    order = [i for i in rank(score) if direct[i] >= USEFUL_SIM]
    if not order:
        return empty
    vecs = vectors.encode(sents)
    budget = max(700, int(0.08 * len(raw_output)))
    n_summary = max(3, min(10, len(sents) // 15))
    summary_ids = pick_diverse(order, vecs, n_summary, 0.9)
    rest = [i for i in order if i not in summary_ids and _is_fact(sents[i])]
    bullet_ids = pick_diverse(
        summary_ids + rest, vecs, len(summary_ids) + max(1, n_summary // 2), 0.9
    )
    bullet_ids = [i for i in bullet_ids if i not in summary_ids]
    summary_parts = [ensure_period(clip(sents[i], SENTENCE_CHARS)) for i in summary_ids]
    bullets = [clip(sents[i], BULLET_CHARS) for i in bullet_ids]
    while bullets and len(" ".join(summary_parts + bullets)) > budget:
        bullets.pop()
    while len(summary_parts) > 1 and len(" ".join(summary_parts)) > budget:
        summary_parts.pop()
    title = _title(
        step_text, step_title, [sents[i] for i in summary_ids], _record_count(raw_output)
    )
    return SummaryCard(
        summary_title=title, summary=" ".join(summary_parts), extraction=bullets, is_useful=True
    )


def _record_count(raw: str) -> int:
    try:
        data = json.loads(raw)
    except ValueError:
        return 1
    return max(1, _texts(data, []))
