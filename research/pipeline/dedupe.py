"""No sentence twice in a report (docs/design.md § Coordinator and planner): the lead and the
sections are read in order and a sentence that repeats an earlier one is dropped
(``dedupe_report``), by the STORM and the Co-STORM report writers alike."""

from __future__ import annotations

import re

from research import citations
from research.models import ReportSection
from research.pipeline import sections, statements
from research.text import norm_key, split_sentences, strip_citations
from research.text.vectors import Vectors


def dedupe_report(
    vectors: Vectors,
    lead: str,
    draft_sections: list[ReportSection],
    threshold: float = sections.DUPLICATE_SIM,
) -> tuple[str, list[ReportSection]]:
    """No sentence twice in a report: a sentence that repeats an earlier one (same
    words, or cosine ≥ ``threshold`` without citations) is removed, reading lead first, then the
    sections in order. A lead sentence that repeats the only sentence of a section is removed
    from the lead instead, so no section loses its text, unless the lead has no other sentence
    (the section then reads ``statements.QUOTED_ABOVE``); an open question's section left with its
    statement alone says that the lead quotes what its sources report
    (``statements.quoted_in_lead``). Paragraphs and citations are kept."""
    sec_paras = [
        [_units(p) for p in re.split(r"\n\s*\n", s.text) if p.strip()] for s in draft_sections
    ]
    lead_units = _units(lead)

    def plain(u):
        return strip_citations(citations.DRAFT_RE.sub("", u))

    all_units = [u for paras in sec_paras for p in paras for u in p]
    if not all_units and not lead_units:
        return lead, draft_sections
    vec = {
        t: v
        for t, v in zip(
            all_units + lead_units,
            vectors.encode([plain(u) for u in all_units + lead_units]),
            strict=True,
        )
    }

    def same(a: str, b: str) -> bool:
        return norm_key(plain(a)) == norm_key(plain(b)) or float(vec[a] @ vec[b]) >= threshold

    singles = [p[0][0] for p in sec_paras if sum(len(x) for x in p) == 1]
    trimmed = [u for u in lead_units if not any(same(u, s) for s in singles)]
    # ... unless the lead is nothing else: the answer stays on top, and its section says so
    lead_units = trimmed or lead_units
    kept: list[str] = list(lead_units)
    out_sections = []
    for sec, paras in zip(draft_sections, sec_paras, strict=True):
        new_paras = []
        for para in paras:
            mine = []
            for u in para:
                if not any(same(u, k) for k in kept):
                    kept.append(u)
                    mine.append(u)
            if mine:
                new_paras.append(" ".join(mine))
        text = "\n\n".join(new_paras)
        if citations.DRAFT_RE.search(sec.text) and not citations.DRAFT_RE.search(text):
            # what the section's sources report went to the lead: its statement says so, or a
            # sentence does when the section had no other (the lead is nothing but its answer)
            text = (
                statements.quoted_in_lead(text)
                if text
                else (statements.QUOTED_ABOVE if not trimmed else "")
            )
        out_sections.append(ReportSection(heading=sec.heading, text=text, level=sec.level))
    return " ".join(lead_units), out_sections


def _units(text: str) -> list[str]:
    """Sentences of a draft text with their ``[@src_…]`` markers attached (split as local
    ``[n]`` markers, which the sentence splitter knows, then mapped back)."""
    local = citations.DRAFT_RE.sub(lambda m: f"[{int(m.group(1)[4:])}]", text)
    return [
        citations.LOCAL_RE.sub(lambda m: f"[@src_{int(m.group(1)):03d}]", u)
        for u in split_sentences(local, min_words=1)
    ]
