"""Step material: the compact JSON each prompt carries (docs/design.md § Tool-result compression:
tool outputs reach the model only as short snippets and summary cards, never raw). Sizes in characters.

Working memory (docs/design.md § Working memory; context economy): the asker sees the questions
already asked and the last answer only (≤ ``ASK_ANSWER_CHARS``, citation markers removed); the
answerer gets each result once as one line and a search's card clipped to its summary and
≤ ``NOTE_FACTS`` facts (``read_artifact`` fetches more). Every clip is word-bounded (``clip``)."""

from __future__ import annotations

import json
import re

from research.citations import CITES_WS_RE, LOCAL_RE
from research.engines.base import (
    AnswerAssignInput,
    AnswerInput,
    AskInput,
    AssignInput,
    CompressInput,
    LeadInput,
    PersonaInput,
    RefineInput,
    RegenerateInput,
    SectionInput,
)
from research.models import ArtifactRecord, SearchResult, Syllabus

SNIPPET_CHARS = 240  # per result in answer prompts
SHORT_CHARS = 110  # per result in assign prompts
TITLE_CHARS = 80  # per result title
RELATED_TITLE_CHARS = 60  # per title in related-topic and section prompts (word-bounded)
REFINE_QUESTION_CHARS = 80  # per conversation question in the outline prompt
RESULT_TITLE_CHARS = 50  # per result title in the answer+assign prompt (word-bounded)
CARDED_CHARS = 60  # per result snippet when a card of its search is in the same prompt
UNCARDED_CHARS = 95  # per result snippet otherwise (word-bounded)
NOTE_SUMMARY_CHARS = 160  # per card summary in the answer+assign prompt
NOTE_FACT_CHARS = 90  # per card fact in the answer+assign prompt
NOTE_FACTS = 2  # card facts in the answer+assign prompt
ASK_ANSWER_CHARS = 120  # the asker's view of the previous answer
ASKED_CHARS = 100  # per earlier question in the asker's view (word-bounded)
REFINE_ANSWER_CHARS = 100  # per conversation answer in the outline prompt
RAW_CHARS = 12_000  # raw tool output given to the (out-of-band) compressor (non-search tools)
PASSAGE_CHARS = 300  # per search result given to the compressor: passages around the query terms
CARD_FACTS = 3  # extraction bullets per card in answer prompts
CARD_SUMMARY_CHARS = 400
MAX_NOTES = 3  # cards per answer prompt
EVIDENCE_CHARS = 120  # per candidate evidence sentence in the answer+assign prompt (word-bounded)
MAX_EVIDENCE = 8  # candidate evidence sentences per answer+assign prompt (the turn's focus first)
FACT_CHARS = 90  # per fact in the analysis prompt (word-bounded)
MAX_FACTS = 40  # facts in the analysis prompt
SECTION_SNIPPET_CHARS = 450  # per snippet in a section-writing prompt
LEAD_SECTION_CHARS = 500  # per answered section in the lead prompt (word-bounded)
REGEN_TEXT_CHARS = 4000  # the section's current text in the regenerate prompt (word-bounded)
_CITES = CITES_WS_RE


def uncite(text: str) -> str:
    """``text`` without ``[n]`` citation markers."""
    return _CITES.sub("", text or "")


def results(res: list[SearchResult], chars: int) -> list[dict]:
    """Numbered results ``{n, title, snippet}`` (1-based, input order)."""
    return [
        {"n": i, "title": r.title[:TITLE_CHARS], "snippet": " … ".join(r.snippets)[:chars]}
        for i, r in enumerate(res, start=1)
    ]


def plan_syllabus(s: Syllabus) -> dict:
    """Planner material: the syllabus as ``{label: description}`` (keys are not needed to plan)."""
    return {q.label: q.description for q in s.questions}


def syllabus(s: Syllabus, *, full: bool = True) -> list[dict]:
    return [
        {"key": q.key, "label": q.label, **({"description": q.description} if full else {})}
        for q in s.questions
    ]


def clip(text: str, chars: int) -> str:
    """``text`` (whitespace collapsed) cut to at most ``chars`` characters at a word boundary,
    with "…" when cut (a clipped snippet never ends mid-word)."""
    text = " ".join((text or "").split())
    if len(text) <= chars:
        return text
    cut = text[: chars - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:") + "…"


def ask(inp: AskInput) -> dict:
    """Asker material (bounded history): the perspective's name and focus, the
    questions already asked (not to repeat; each ≤ ``ASKED_CHARS``), the last answer only (≤ ``ASK_ANSWER_CHARS``, no
    citation markers), the open syllabus questions it may pick as ``{key: label}`` (≤ 3) and
    the turns left. The asker also writes the turn's search queries (one call, not two)."""
    last = inp.history[-1:]
    return {
        "topic": inp.topic,
        "perspective": inp.perspective.name,
        "focus": inp.perspective.focus,
        "asked": [clip(t.question, ASKED_CHARS) for t in inp.history],
        **({"last_answer": clip(uncite(last[0].answer), ASK_ANSWER_CHARS)} if last else {}),
        "open": {q.key: q.label for q in inp.next_focus[:3]},
        "turns_left": max(0, inp.max_turns - len(inp.history)),
    }


def related(res: list[SearchResult]) -> list[str]:
    """Related-topic material: the results' titles (≤ ``TITLE_CHARS``, word-bounded); the
    step names a topic and its section headings, which titles carry."""
    return [clip(r.title, RELATED_TITLE_CHARS) for r in res]


def answer(inp: AnswerInput, cards: list[ArtifactRecord]) -> dict:
    """Numbered snippets + the working-memory cards (docs/design.md § Working memory: message fields) of the
    searches that produced them."""
    notes = [
        {
            "summary_title": c.card.summary_title,
            "summary": c.card.summary[:CARD_SUMMARY_CHARS],
            "extraction": c.card.extraction[:CARD_FACTS],
            "artifact_file": c.artifact_file.rsplit("/", 1)[-1],
        }
        for c in cards
        if c.card.is_useful
    ][:2]
    return {
        "topic": inp.topic,
        "question": inp.question,
        "results": results(inp.results, SNIPPET_CHARS),
        "artifacts": notes,
    }


def _note(card, artifact_file: str | None = None) -> dict:
    note = {
        "summary": clip(card.summary, NOTE_SUMMARY_CHARS),
        "facts": [clip(f, NOTE_FACT_CHARS) for f in card.extraction[:NOTE_FACTS]],
    }
    return {**note, "file": artifact_file} if artifact_file else note


def answer_assign(inp: AnswerAssignInput, cards: list[ArtifactRecord]) -> dict:
    """One prompt for answer + assignment over one copy of the numbered results, each
    result once as one line ``"[n] title: snippet"`` (title ≤ ``RESULT_TITLE_CHARS``; snippet
    word-bounded, ≤ ``CARDED_CHARS`` when a useful card of its search is among the notes (the
    card stands in for the rest, docs/design.md § Working memory), else ≤ ``UNCARDED_CHARS``). Notes: the turn's
    cards, then the stored cards of the same searches (with their ``file`` for
    ``read_artifact``), at most ``MAX_NOTES``, each its summary (≤ ``NOTE_SUMMARY_CHARS``) and
    ≤ ``NOTE_FACTS`` facts (a fact repeating a result's text is dropped). The syllabus goes as its
    keys, comma-separated (``area.name``, self-describing); the
    topic is left out (the question names it)."""
    a = inp.answer
    notes = [(t.query, _note(t.card)) for t in a.turn_cards if t.card.is_useful]
    notes += [
        (c.tool_input, _note(c.card, c.artifact_file.rsplit("/", 1)[-1]))
        for c in cards
        if c.card.is_useful
    ]
    notes = notes[:MAX_NOTES]
    carded = {q for q, _ in notes}
    res = [
        f"[{i}] {clip(r.title, RESULT_TITLE_CHARS)}: "
        f"{clip(' … '.join(r.snippets), CARDED_CHARS if r.query in carded else UNCARDED_CHARS)}"
        for i, r in enumerate(a.results, start=1)
    ]
    sent = " ".join(_norm(f"{r.title} {' '.join(r.snippets)}") for r in a.results)
    for (
        _,
        n,
    ) in notes:  # a card fact that only repeats a result's title or snippet is not sent twice
        n["facts"] = [f for f in n["facts"] if _norm(f.rstrip("…")) not in sent]
        if not n["facts"]:
            del n["facts"]
    out = {
        "question": a.question,
        "focus": ", ".join(inp.focus),
        "keys": ", ".join(inp.syllabus.keys()),
        "results": res,
        "notes": [n for _, n in notes],
    }
    evidence = candidate_lines(inp)
    if evidence:
        out["evidence"] = evidence
    return out


def candidate_lines(inp: AnswerAssignInput) -> list[str]:
    """The judgement's candidates as ``"[n] key: sentence"`` lines (sentence word-bounded to
    ``EVIDENCE_CHARS``), at most ``MAX_EVIDENCE``: the turn's focus keys first, then syllabus
    order; results in order within a key. The model reads them to decide which keys a result
    answers (docs/evidence.md); [] when the judgement put nothing forward."""
    keys = list(dict.fromkeys([*inp.focus, *inp.syllabus.keys()]))
    order = {k: i for i, k in enumerate(keys)}
    rows = [
        (order.get(k, len(keys)), n, k, text)
        for n, ev in enumerate(inp.evidence[: len(inp.answer.results)], start=1)
        for k, text in ev.items()
        if text.strip()
    ]
    return [f"[{n}] {k}: {clip(text, EVIDENCE_CHARS)}" for _, n, k, text in sorted(rows)][
        :MAX_EVIDENCE
    ]


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", (text or "").lower()))


def assign(inp: AssignInput) -> dict:
    return {
        "question": inp.question,
        "focus": inp.focus,
        "questions": syllabus(inp.syllabus, full=False),
        "results": results(inp.results, SHORT_CHARS),
    }


def refine(inp: RefineInput) -> dict:
    """Outline-refinement material: the draft's headings (subsections after ``" > "``) and per
    perspective its turns as ``"question → answer"`` (≤ ``REFINE_QUESTION_CHARS`` /
    ``REFINE_ANSWER_CHARS``, no
    citation markers)."""
    return {
        "topic": inp.topic,
        "draft": [" > ".join([s.heading, *s.subsections]) for s in inp.draft.sections],
        "conversations": {
            c.perspective.name: [
                f"{clip(t.question, REFINE_QUESTION_CHARS)} → "
                f"{clip(uncite(t.answer), REFINE_ANSWER_CHARS)}"
                for t in c.turns
            ]
            for c in inp.conversations
        },
    }


def section(inp: SectionInput) -> dict:
    """Section material: the heading, the syllabus question it answers (``null`` for
    an outline section the syllabus lacks) and one numbered snippet per source assigned to it
    (title ≤ ``RELATED_TITLE_CHARS`` word-bounded + whole sentences, ≤ ``SECTION_SNIPPET_CHARS``);
    only these numbers may be cited."""
    q = inp.question
    return {
        "topic": inp.topic,
        "heading": inp.section.heading,
        "subsections": inp.section.subsections,
        "question": {"key": q.key, "label": q.label, "description": q.description} if q else None,
        "snippets": [
            {
                "n": s.n,
                "title": clip(s.title, RELATED_TITLE_CHARS),
                "text": s.text[:SECTION_SNIPPET_CHARS],
            }
            for s in inp.snippets
        ],
        "allowed_citations": [s.n for s in inp.snippets],
    }


def regenerate(inp: RegenerateInput) -> dict:
    """Regenerate-section material: the heading, the syllabus question (``null`` without one),
    the analyst's instruction, the current text (≤ ``REGEN_TEXT_CHARS``, word-bounded) and
    the snippets numbered by the run's reference numbers (title ≤ ``RELATED_TITLE_CHARS``,
    text ≤ ``SECTION_SNIPPET_CHARS``); only the allowed numbers may be cited."""
    q = inp.question
    allowed = sorted({s.n for s in inp.snippets} | {int(n) for n in LOCAL_RE.findall(inp.text)})
    return {
        "topic": inp.topic,
        "heading": inp.heading,
        "question": {"key": q.key, "label": q.label, "description": q.description} if q else None,
        "instruction": inp.instruction,
        "max_sentences": inp.max_sentences,
        "current_text": clip(inp.text, REGEN_TEXT_CHARS),
        "snippets": [
            {
                "n": s.n,
                "title": clip(s.title, RELATED_TITLE_CHARS),
                "text": s.text[:SECTION_SNIPPET_CHARS],
            }
            for s in inp.snippets
        ],
        "allowed_citations": allowed,
    }


def lead(inp: LeadInput) -> dict:
    """Lead material: the sections that answer a question (or all, with no syllabus), each
    ≤ ``LEAD_SECTION_CHARS`` (word-bounded), and one line per syllabus question: its label, the
    heading that answers it (when it differs), its status and source counts, e.g.
    ``"Market Status: insufficient (1 of 3 sources)"``. An "insufficient" question's section
    text is left out: the lead only names it with its source counts."""
    open_headings = {q.heading for q in inp.questions if q.status != "answered"}
    answered = {q.heading for q in inp.questions if q.status == "answered"}
    return {
        "topic": inp.topic,
        "sections": [
            {"heading": s.heading, "text": clip(s.text, LEAD_SECTION_CHARS)}
            for s in inp.sections
            if not inp.questions or s.heading in answered or s.heading not in open_headings
        ],
        "questions": [
            f"{q.label}{'' if q.heading == q.label else f' (under “{q.heading}”)'}: {q.status} "
            f"({q.sources_found} of {q.min_sources} sources)"
            for q in inp.questions
        ],
    }


def personas(inp: PersonaInput) -> dict:
    """GenPersona material: related topics as ``{topic: [section, …]}`` where a section heading
    already listed under an earlier related topic is not repeated; the syllabus as ``{key: label}``."""
    seen: set[str] = set()
    related = {}
    for r in inp.related:
        related[r.topic] = [s for s in r.sections if _first_time(s, seen)]
    return {
        "topic": inp.topic,
        "related": related,
        "syllabus": {q.key: q.label for q in inp.syllabus.questions},
        "max_perspectives": inp.max_perspectives,
    }


def _first_time(key: str, seen: set[str]) -> bool:
    """True the first time ``key`` is seen (and remembers it in ``seen``)."""
    if key in seen:
        return False
    seen.add(key)
    return True


_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_TERM = re.compile(r"[a-z0-9][a-z0-9-]{2,}")
_QUERY_STOP = frozenset(
    "the and for with what are how does did was were from that this which who whom into "
    "about when where why can its their there than then also have has had not but all any "
    "per via vs versus known key facts".split()
)


def query_terms(query: str) -> set[str]:
    """The query's content words (lowercase, ≥ 3 characters, a short stop list removed)."""
    return {t for t in _TERM.findall((query or "").lower()) if t not in _QUERY_STOP}


def passages(text: str, terms: set[str], chars: int = PASSAGE_CHARS) -> str:
    """The sentences of ``text`` that carry the most query ``terms`` (ties: earlier first), up to
    ``chars`` characters, in document order, joined with " … "; the text's opening when no
    sentence carries a term. What a card can use of a result, instead of a fixed prefix."""
    sents = [x.strip() for x in _SENT_SPLIT.split(" ".join((text or "").split())) if x.strip()]
    scored = sorted(
        ((len(terms & set(_TERM.findall(x.lower()))), -i, i) for i, x in enumerate(sents)),
        reverse=True,
    )
    picked: list[int] = []
    used = 0
    for score, _, i in scored:
        if score == 0:
            break
        if used + len(sents[i]) > chars and picked:
            continue
        picked.append(i)
        used += len(sents[i]) + 3
        if used >= chars:
            break
    if not picked:
        return clip(" ".join(sents), chars)
    return " … ".join(clip(sents[i], chars) for i in sorted(picked))


def compress(inp: CompressInput) -> dict:
    """Compressor material. A search's raw output (``{"query", "results": [...]}``) goes as the
    query, the results not carded before as ``{n, title, passages}`` (``passages``: ≤
    ``PASSAGE_CHARS`` around the query's terms) and the results an earlier card of the run
    already covers as ``carded``: ``{reference to that card: [n, …]}``
    (``CompressInput.carded``), never their text again. Any other tool output: its first
    ``RAW_CHARS`` characters."""
    head = {
        "plan_title": inp.plan_title,
        "step_title": inp.step_title,
        "step_description": inp.step_description,
        "tool_name": inp.tool_name,
    }
    try:
        raw = json.loads(inp.raw_output)
    except ValueError:
        raw = None
    results = raw.get("results") if isinstance(raw, dict) else None
    if not isinstance(results, list):
        return {**head, "raw_output": inp.raw_output[:RAW_CHARS]}
    query = str(raw.get("query") or inp.query)
    terms = query_terms(query)
    out: list[dict] = []
    carded: dict[str, list[int]] = {}
    for n, r in enumerate((r for r in results if isinstance(r, dict)), start=1):
        key = str(r.get("doc_id") or r.get("url") or "")
        if key and key in inp.carded:
            carded.setdefault(inp.carded[key], []).append(n)
            continue
        body = str(r.get("text") or "") or " … ".join(map(str, r.get("snippets") or []))
        out.append(
            {
                "n": n,
                "title": clip(str(r.get("title", "")), TITLE_CHARS),
                "passages": passages(body, terms),
            }
        )
    return {**head, "query": query, "results": out, **({"carded": carded} if carded else {})}
