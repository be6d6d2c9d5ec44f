"""Step material: the compact JSON each prompt carries (seed 001 §6–§7: tool outputs reach the
model only as short snippets and summary cards, never raw). Sizes in characters.

Working memory (seed 001 §6): the asker sees its conversation as the last turn verbatim
(answer clipped to ``LAST_ANSWER_CHARS``, citation markers removed) and earlier turns as their
questions only; the answerer gets a search's card clipped to its title, summary
(≤ ``CARD_SUMMARY_CHARS``) and ≤ ``CARD_FACTS`` facts (``read_artifact`` fetches more)."""

from __future__ import annotations

import re

from research.engines.base import AnswerAssignInput, AnswerInput, AskInput, AssignInput, LeadInput, RefineInput, SectionInput
from research.models import ArtifactRecord, SearchResult, Syllabus
from research.pipeline.citations import CITES_WS_RE

SNIPPET_CHARS = 240      # per result in answer prompts
SHORT_CHARS = 110        # per result in assign / related prompts
TITLE_CHARS = 80         # per result title
RAW_CHARS = 12_000       # raw tool output given to the (out-of-band) compressor
ANSWER_CHARS = 200       # per conversation answer in the outline prompt
LAST_ANSWER_CHARS = 240  # the asker's view of the previous answer
CARD_FACTS = 3           # extraction bullets per card in answer prompts
CARD_SUMMARY_CHARS = 400
MAX_NOTES = 3            # cards per answer prompt
FACT_CHARS = 160         # per fact in the analysis prompt
MAX_FACTS = 48           # facts in the analysis prompt
SECTION_SNIPPET_CHARS = 450  # per snippet in a section-writing prompt
LEAD_SECTION_CHARS = 800     # per section in the lead prompt
_CITES = CITES_WS_RE


def uncite(text: str) -> str:
    """``text`` without ``[n]`` citation markers."""
    return _CITES.sub("", text or "")


def results(res: list[SearchResult], chars: int) -> list[dict]:
    """Numbered results ``{n, title, snippet}`` (1-based, input order)."""
    return [{"n": i, "title": r.title[:TITLE_CHARS], "snippet": " … ".join(r.snippets)[:chars]}
            for i, r in enumerate(res, start=1)]


def syllabus(s: Syllabus, *, full: bool = True) -> list[dict]:
    return [{"key": q.key, "label": q.label, **({"description": q.description} if full else {})}
            for q in s.questions]


def ask(inp: AskInput) -> dict:
    return {"topic": inp.topic, "perspective": {"name": inp.perspective.name, "focus": inp.perspective.focus},
            "history": [{"question": t.question} for t in inp.history[:-1]]
            + [{"question": t.question, "answer": uncite(t.answer)[:LAST_ANSWER_CHARS]} for t in inp.history[-1:]],
            "next_focus": [{"key": q.key, "label": q.label, "description": q.description} for q in inp.next_focus[:3]],
            "turns_left": max(0, inp.max_turns - len(inp.history))}


def answer(inp: AnswerInput, cards: list[ArtifactRecord]) -> dict:
    """Numbered snippets + the working-memory cards (seed 001 §6.1 message fields) of the
    searches that produced them."""
    notes = [{"summary_title": c.card.summary_title, "summary": c.card.summary[:CARD_SUMMARY_CHARS],
              "extraction": c.card.extraction[:CARD_FACTS],
              "artifact_file": c.artifact_file.rsplit("/", 1)[-1]} for c in cards if c.card.is_useful][:2]
    return {"topic": inp.topic, "question": inp.question, "results": results(inp.results, SNIPPET_CHARS),
            "artifacts": notes}


def _note(card, artifact_file: str | None = None) -> dict:
    note = {"summary_title": card.summary_title, "summary": card.summary[:CARD_SUMMARY_CHARS],
            "extraction": card.extraction[:CARD_FACTS]}
    return {**note, "artifact_file": artifact_file} if artifact_file else note


def answer_assign(inp: AnswerAssignInput, cards: list[ArtifactRecord]) -> dict:
    """Issue 14, one prompt for answer + assignment over one copy of the numbered results. A
    result whose search has a useful card in ``turn_cards`` carries a short snippet
    (``SHORT_CHARS``) and the card stands in for the rest (seed 001 §6: cards instead of raw
    text); other results keep ``SNIPPET_CHARS``. Notes: the turn's cards, then the stored cards
    of the same searches (with their ``artifact_file`` for ``read_artifact``), at most
    ``MAX_NOTES``."""
    a = inp.answer
    carded = {t.query for t in a.turn_cards if t.card.is_useful}
    res = [{"n": i, "title": r.title[:TITLE_CHARS],
            "snippet": " … ".join(r.snippets)[:SHORT_CHARS if r.query in carded else SNIPPET_CHARS]}
           for i, r in enumerate(a.results, start=1)]
    notes = [_note(t.card) for t in a.turn_cards if t.card.is_useful]
    notes += [_note(c.card, c.artifact_file.rsplit("/", 1)[-1]) for c in cards if c.card.is_useful]
    return {"topic": a.topic, "question": a.question, "focus": inp.focus,
            "questions": {q.key: q.label for q in inp.syllabus.questions}, "results": res,
            "artifacts": notes[:MAX_NOTES]}


def assign(inp: AssignInput) -> dict:
    return {"question": inp.question, "focus": inp.focus, "questions": syllabus(inp.syllabus, full=False),
            "results": results(inp.results, SHORT_CHARS)}


def refine(inp: RefineInput) -> dict:
    return {"topic": inp.topic, "draft": inp.draft.model_dump(),
            "conversations": [{"perspective": c.perspective.name,
                               "turns": [{"question": t.question, "answer": uncite(t.answer)[:ANSWER_CHARS]} for t in c.turns]}
                              for c in inp.conversations]}


def section(inp: SectionInput) -> dict:
    """Section material (issue 12): the heading, the syllabus question it answers (``null`` for
    an outline section the syllabus lacks) and one numbered snippet per source assigned to it
    (title + whole sentences, ≤ ``SECTION_SNIPPET_CHARS``); only these numbers may be cited."""
    q = inp.question
    return {"topic": inp.topic, "heading": inp.section.heading, "subsections": inp.section.subsections,
            "question": {"key": q.key, "label": q.label, "description": q.description} if q else None,
            "snippets": [{"n": s.n, "title": s.title[:TITLE_CHARS], "text": s.text[:SECTION_SNIPPET_CHARS]}
                         for s in inp.snippets],
            "allowed_citations": [s.n for s in inp.snippets]}


def lead(inp: LeadInput) -> dict:
    """Lead material: the sections (≤ ``LEAD_SECTION_CHARS`` each) and the syllabus questions
    with the heading that answers each and its status (issue 12)."""
    return {"topic": inp.topic,
            "sections": [{"heading": s.heading, "text": s.text[:LEAD_SECTION_CHARS]} for s in inp.sections],
            "questions": [{"label": q.label, "heading": q.heading, "status": q.status,
                           "sources_found": q.sources_found, "min_sources": q.min_sources} for q in inp.questions]}
