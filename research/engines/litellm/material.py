"""Step material: the compact JSON each prompt carries (seed 001 §6–§7: tool outputs reach the
model only as short snippets and summary cards, never raw). Sizes in characters."""

from __future__ import annotations

from research.engines.base import AnswerInput, AskInput, AssignInput, RefineInput
from research.models import ArtifactRecord, SearchResult, Syllabus

SNIPPET_CHARS = 240      # per result in answer prompts
SHORT_CHARS = 110        # per result in assign / related prompts
RAW_CHARS = 12_000       # raw tool output given to the (out-of-band) compressor
ANSWER_CHARS = 500       # per conversation answer in the outline prompt


def results(res: list[SearchResult], chars: int) -> list[dict]:
    """Numbered results ``{n, title, snippet}`` (1-based, input order)."""
    return [{"n": i, "title": r.title[:150], "snippet": " … ".join(r.snippets)[:chars]}
            for i, r in enumerate(res, start=1)]


def syllabus(s: Syllabus, *, full: bool = True) -> list[dict]:
    return [{"key": q.key, "label": q.label, **({"description": q.description} if full else {})}
            for q in s.questions]


def ask(inp: AskInput) -> dict:
    return {"topic": inp.topic, "perspective": {"name": inp.perspective.name, "focus": inp.perspective.focus},
            "history": [{"question": t.question, "answer": t.answer[:400]} for t in inp.history],
            "next_focus": [{"key": q.key, "label": q.label, "description": q.description} for q in inp.next_focus[:3]],
            "turns_left": max(0, inp.max_turns - len(inp.history))}


def answer(inp: AnswerInput, cards: list[ArtifactRecord]) -> dict:
    """Numbered snippets + the working-memory cards (seed 001 §6.1 message fields) of the
    searches that produced them."""
    notes = [{"summary_title": c.card.summary_title, "summary": c.card.summary, "extraction": c.card.extraction[:5],
              "artifact_file": c.artifact_file.rsplit("/", 1)[-1]} for c in cards if c.card.is_useful][:2]
    return {"topic": inp.topic, "question": inp.question, "results": results(inp.results, SNIPPET_CHARS),
            "artifacts": notes}


def assign(inp: AssignInput) -> dict:
    return {"question": inp.question, "focus": inp.focus, "questions": syllabus(inp.syllabus, full=False),
            "results": results(inp.results, SHORT_CHARS)}


def refine(inp: RefineInput) -> dict:
    return {"topic": inp.topic, "draft": inp.draft.model_dump(),
            "conversations": [{"perspective": c.perspective.name,
                               "turns": [{"question": t.question, "answer": t.answer[:ANSWER_CHARS]} for t in c.turns]}
                              for c in inp.conversations]}
