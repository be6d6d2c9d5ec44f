"""Citation integrity (issue: every [n] resolves to exactly one reference, numbered 1..N by
first appearance; no out-of-range index survives; draft and final cannot disagree).

Three forms of a citation:
- local ``[n]``: what engines write, n indexing the numbered material they were given;
- draft ``[@src_012]``: a collector source id, what the stored draft report holds;
- final ``[n]``: 1..N by first appearance across lead then sections, into the references list.
The final form is derived from the draft by ``renumber`` and nothing else, so the two agree.
"""

from __future__ import annotations

import re

CITE_PATTERN = r"\[\d{1,4}\]"  # one citation marker [n]; the one pattern every module builds on
LOCAL_RE = re.compile(r"\[(\d{1,4})\]")  # [n], group 1 = n
CITE_RE = re.compile(CITE_PATTERN)  # [n], no group (sub / search)
CITES_WS_RE = re.compile(
    r"\s*" + CITE_PATTERN
)  # [n] with the space before it (stripping citations)
# [n] that is not part of a markdown link or a nested bracket ([[n]], [n](url), [n]]): for rendering
RENDER_RE = re.compile(r"(?<!\[)\[(\d{1,4})\](?![\(\]])")
DRAFT_RE = re.compile(r"\[@(src_\d+)\]")
CITED_SPAN_RE = re.compile(r"(.+?)((?:\s*\[\d{1,4}\])+)", re.S)


def local_to_draft(text: str, mapping: dict[int, str]) -> str:
    """Replace local ``[n]`` by ``[@source_id]``; markers with no mapping are dropped."""

    def sub(m: re.Match[str]) -> str:
        sid = mapping.get(int(m.group(1)))
        return f"[@{sid}]" if sid else ""

    return _tidy(LOCAL_RE.sub(sub, text))


def cited_spans(text: str) -> list[tuple[str, list[int]]]:
    """Split text into (span, [n, ...]) pairs: each run of text with the citations after it."""
    out = []
    for m in CITED_SPAN_RE.finditer(text):
        nums = [int(x) for x in LOCAL_RE.findall(m.group(2))]
        span = m.group(1).strip().lstrip(".;:,!? ").strip()
        if span:
            out.append((span, nums))
    return out


def renumber(texts: list[str], valid: set[str]) -> tuple[list[str], list[str]]:
    """Turn draft citations into final ones.

    Args:
        texts: draft texts in reading order (lead, then each section).
        valid: source ids that exist in this run; others are removed.

    Returns:
        (final_texts, order): ``order[i]`` is the source id of reference ``i + 1``.
    """
    order: list[str] = []
    index: dict[str, int] = {}

    def sub(m: re.Match[str]) -> str:
        sid = m.group(1)
        if sid not in valid:
            return ""
        if sid not in index:
            order.append(sid)
            index[sid] = len(order)
        return f"[{index[sid]}]"

    return [_tidy(DRAFT_RE.sub(sub, t)) for t in texts], order


def _tidy(text: str) -> str:
    """Collapse repeated identical adjacent markers ``[1][1]`` and stray spaces before markers."""
    text = re.sub(r"(\[@?[\w]+\])(?:\s*\1)+", r"\1", text)
    text = re.sub(r"[ \t]+(\[@?\w+\])", r" \1", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def check_integrity(markdown_body: str, n_references: int) -> list[str]:
    """Problems with final citations in ``markdown_body`` (empty list = sound).

    Checks: every [n] is within 1..N; every reference is cited; first appearances are 1, 2, 3...
    """
    problems = []
    seen: list[int] = []
    for m in LOCAL_RE.finditer(markdown_body):
        n = int(m.group(1))
        if not 1 <= n <= n_references:
            problems.append(f"[{n}] is out of range 1..{n_references}")
        elif n not in seen:
            seen.append(n)
    if seen != list(range(1, len(seen) + 1)):
        problems.append(f"first appearances are not 1..N in order: {seen[:20]}")
    missing = set(range(1, n_references + 1)) - set(seen)
    if missing:
        problems.append(f"references never cited: {sorted(missing)[:20]}")
    return problems
