"""The loopback server's default responder: valid JSON for every litellm-engine step.

The engine marks each system prompt with its step's marker ``[step: NAME]``
(``StepSpec.marker``) and puts the step's material as JSON between ``<material>`` and
``</material>`` in the user prompt (see ``research/engines/litellm/prompts/``). This responder
reads both and builds a grounded, deterministic reply from the material alone (same request →
same reply), shaped like the step's declared reply model (``research.engines.steps.STEPS``;
``HANDLERS`` has one case per declared step, checked by ``tests/test_steps.py``). For ``answer_question`` with a
``read_artifact`` tool offered and an artifact listed, it first asks for the tool once per
question (a real function call), then answers after the tool result arrives.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from research.citations import CITE_RE as _CITE_RE
from research.citations import LOCAL_RE
from research.devtools.loopback_costorm import COSTORM_HANDLERS
from research.engines.steps import STEPS
from research.llm.steps import MARKER

STEP_RE = re.compile(re.escape(MARKER).replace(re.escape("{}"), "([a-z_]+)"))
MAT_RE = re.compile(r"<material>\s*(.*?)\s*</material>", re.S)
SENT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
CITE_RE = _CITE_RE  # the one citation pattern (research/citations.py)


@dataclass
class Reply:
    """One scripted reply: ``content`` text, or ``tool_calls`` as ``[{"name", "arguments"}]``
    (re-exported by ``research.devtools.loopback_llm``)."""

    content: str | None = None
    tool_calls: list[dict] | None = None
    finish_reason: str | None = None


def step_of(body: dict) -> str | None:
    """The step name from the system prompt marker, or None."""
    for msg in body.get("messages", []):
        m = STEP_RE.search(str(msg.get("content") or ""))
        if m:
            return m.group(1)
    return None


def material_of(body: dict) -> dict:
    """The JSON material of the (first) user message that has one; {} otherwise."""
    for msg in body.get("messages", []):
        if msg.get("role") == "user":
            m = MAT_RE.search(str(msg.get("content") or ""))
            if m:
                try:
                    return json.loads(m.group(1))
                except ValueError:
                    return {}
    return {}


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _sentences(text: str, k: int = 2) -> list[str]:
    out = [s.strip() for s in SENT_RE.split(CITE_RE.sub("", text or "")) if len(s.strip()) > 25]
    return [s if s[-1] in ".!?" else s + "." for s in out[:k]]


def _words(text: str, n: int = 4) -> str:
    return " ".join(re.findall(r"[A-Za-z0-9][\w-]*", text or "")[:n])


def _plan(m: dict) -> dict:
    qs = m.get("syllabus", [])
    qs = (
        [{"label": k, "description": v} for k, v in qs.items()] if isinstance(qs, dict) else qs
    )  # {label: description}
    steps = [
        {
            "step_id": 1,
            "title": "Survey the topic",
            "description": f"Search for overviews of {m.get('topic')}.",
        }
    ]
    steps += [
        {
            "step_id": i + 2,
            "title": q.get("label", q.get("key", "question")),
            "description": f"Find sources on {q.get('description', q.get('label', ''))}",
        }
        for i, q in enumerate(qs)
    ]
    steps.append(
        {
            "step_id": len(steps) + 1,
            "title": "Cross-check findings",
            "description": "Compare sources and flag contradictions.",
        }
    )
    return {"plan_title": f"Research plan: {m.get('topic', '')}"[:80], "steps": steps}


def _related(m: dict) -> dict:
    titles = m.get("titles") or [r.get("title", "") for r in m.get("results", [])]
    return {
        "topic": _words(m.get("query", ""), 6) or m.get("topic", ""),
        "sections": [t[:60] for t in titles[:4] if t] or ["Overview"],
    }


def _personas(m: dict) -> dict:
    names = [
        "Basic Fact Writer",
        "Clinical Researcher",
        "Policy Analyst",
        "Historian",
        "Economist",
        "Patient Advocate",
    ]
    n = int(m.get("max_perspectives", 3))
    return {
        "perspectives": [
            {
                "name": name,
                "focus": f"{name} view of {m.get('topic', '')}",
                "questions": [f"What should a {name.lower()} know about {m.get('topic', '')}?"],
            }
            for name in names[:n]
        ]
    }


def _fit_syllabus(m: dict) -> dict:
    """5 questions for the topic, one per distinct survey section (then per template
    question), keys ``area.name``."""
    topic = m.get("topic", "")
    names = [s for r in m.get("related", []) for s in r.get("sections", []) if s.strip()]
    names += [q.get("label", "") for q in m.get("template", [])]
    out, keys = [], set()
    for name in names:
        key = "focus." + ("_".join(re.findall(r"[a-z0-9]+", name.lower()))[:40] or "topic")
        if key in keys:
            continue
        keys.add(key)
        out.append(
            {
                "key": key,
                "label": name[:60],
                "description": f"What do sources say about {name} for {topic}?",
                "min_sources": 3,
            }
        )
        if len(out) == 5:
            break
    return {"questions": out}


def _ask(m: dict) -> dict:
    """Question + focus key + queries (one call); ``open`` is ``{key: label}``."""
    asked = m.get("asked", m.get("history", []))
    if m.get("turns_left", 1) <= 0:
        return {"question": "Thank you so much for your help!", "focus_question": "", "queries": []}
    focus = m.get("open", m.get("next_focus", []))
    focus = [{"key": k, "label": v} for k, v in focus.items()] if isinstance(focus, dict) else focus
    persona = m.get("perspective", "writer")
    persona = persona.get("name", "writer") if isinstance(persona, dict) else persona
    if focus:
        f = focus[len(asked) % len(focus)]
        q = f"As a {persona}, what is known about {f.get('label', f.get('key'))} for {m.get('topic')}?"
        return {"question": q, "focus_question": f.get("key", ""), "queries": [_words(q, 12)]}
    q = f"As a {persona}, what are the key facts about {m.get('topic')} (point {len(asked) + 1})?"
    return {"question": q, "focus_question": "", "queries": [_words(q, 12)]}


RESULT_LINE_RE = re.compile(
    r"^" + LOCAL_RE.pattern + r"\s*(.*?):\s(.*)$", re.S
)  # "[n] title: snippet"


def _results(m: dict) -> list[dict]:
    """``{n, title, snippet}`` per result: dicts as sent, or ``"[n] title: snippet"`` lines."""
    out = []
    for r in m.get("results", []):
        if isinstance(r, dict):
            out.append(r)
            continue
        hit = RESULT_LINE_RE.match(str(r))
        if hit:
            out.append({"n": int(hit.group(1)), "title": hit.group(2), "snippet": hit.group(3)})
    return out


def _answer(m: dict) -> dict:
    parts, cited = [], []
    for r in _results(m)[:5]:
        for s in _sentences(r.get("snippet", ""), 1):
            parts.append(f"{s.rstrip('.!?…')} [{r['n']}].")
            cited.append(r["n"])
    if not parts:
        return {"answer": "The search returned nothing relevant to this question.", "cited": []}
    return {"answer": " ".join(parts), "cited": cited}


def _assign(m: dict) -> dict:
    qs = m.get("keys", m.get("questions", []))
    qs = [k.strip() for k in qs.split(",")] if isinstance(qs, str) else qs  # "key, key, …"
    keys = list(qs) if isinstance(qs, dict) else [q if isinstance(q, str) else q["key"] for q in qs]
    focus = m.get("focus", [])
    focus = [
        k
        for k in ([x.strip() for x in focus.split(",")] if isinstance(focus, str) else focus)
        if k in keys
    ]
    rel, exc = [], []
    for r in _results(m):
        chosen = focus or ([keys[_h(r.get("title", "")) % len(keys)]] if keys else [])
        rel.append(chosen)
        exc.append((_sentences(r.get("snippet", ""), 1) or [r.get("title", "")])[0][:300])
    return {"relevant_questions": rel, "key_excerpts": exc}


def _compress(m: dict) -> dict:
    """A card from the compressor's material: a search view (``query`` + ``results`` with
    ``passages``; results in ``carded`` are covered by earlier cards) or a ``raw_output``
    string."""
    if isinstance(m.get("results"), list):
        fresh = [r for r in m["results"] if isinstance(r, dict)]
        titles = [str(r.get("title", "")) for r in fresh if len(str(r.get("title", ""))) >= 3]
        raw = json.dumps({"query": m.get("query", "")})
    else:
        raw = m.get("raw_output", "")
        titles = re.findall(r'"title":\s*"([^"]{3,120})"', raw)
    if not titles:
        return {
            "summary_title": "No relevant results returned by this search",
            "summary": "The tool returned nothing usable.",
            "extraction": [],
            "is_useful": False,
        }
    q = re.search(r'"query":\s*"([^"]*)"', raw)
    query = q.group(1) if q else m.get("step_title", "")
    return {
        "summary_title": f"Search results on {_words(query, 6)}"[:90],
        "summary": (
            f"The search for '{query}' returned {len(titles)} documents relevant to "
            f"{m.get('step_title', 'the step')}."
        ),
        "extraction": [t[:100] for t in titles[:3]],
        "is_useful": True,
    }


FACT_LINE_RE = re.compile(r"^(F\d+) (S\d+): (.*)$", re.S)


def _analyze(m: dict) -> dict:
    facts = []
    for f in m.get("facts", []):
        hit = None if isinstance(f, dict) else FACT_LINE_RE.match(str(f))
        facts.append(
            {"id": hit.group(1), "source": hit.group(2), "text": hit.group(3)} if hit else f
        )
    by_src: dict[str, list[dict]] = {}
    for f in facts:
        if isinstance(f, dict) and "source" in f:
            by_src.setdefault(f["source"], []).append(f)
    claims = []
    srcs = list(by_src)
    for a, b in zip(srcs[::2], srcs[1::2], strict=False):
        claims.append(
            {"text": by_src[a][0]["text"], "fact_ids": [by_src[a][0]["id"], by_src[b][0]["id"]]}
        )
    return {"cross_validated": claims[:5], "contradictions": []}


def _outline(m: dict) -> dict:
    """Draft: four generic sections; refine: the draft (dicts, or ``"heading > sub"`` lines) plus
    one perspectives section."""
    topic = m.get("topic", "")
    if "draft" not in m:
        return {
            "sections": [
                {"heading": h, "subsections": []}
                for h in ("Background", "Evidence", "Safety and limitations", "Outlook")
            ]
        }
    draft = m["draft"]["sections"] if isinstance(m["draft"], dict) else m["draft"]
    secs = [
        {"heading": d["heading"], "subsections": d.get("subsections", [])}
        if isinstance(d, dict)
        else {"heading": d.split(" > ")[0], "subsections": d.split(" > ")[1:]}
        for d in draft
    ]
    return {
        "sections": secs + [{"heading": f"Perspectives on {_words(topic, 3)}", "subsections": []}]
    }


def _section(m: dict) -> dict:
    parts = [
        f"{(_sentences(s.get('text', ''), 1) or [s.get('text', '')])[0].rstrip('.!?')} [{s['n']}]."
        for s in m.get("snippets", [])[:5]
        if s.get("text")
    ]
    return {
        "text": " ".join(parts)
        or f"Little evidence was found on {m.get('heading', 'this section')}."
    }


def _regenerate(m: dict) -> dict:
    """At most ``max_sentences`` of the snippets' first sentences, each cited, after a sentence
    that names the instruction (so the new text always differs from the old)."""
    k = int(m.get("max_sentences") or 3)
    parts = [
        f"{(_sentences(s.get('text', ''), 1) or [s.get('text', '')])[0].rstrip('.!?')} [{s['n']}]."
        for s in m.get("snippets", [])[: max(1, k - 1)]
        if s.get("text")
    ]
    lead = f"As instructed ({_words(m.get('instruction', ''), 8)}), the evidence shows:"
    return {"text": " ".join([lead, *parts]) if parts else m.get("current_text", "")}


def _lead(m: dict) -> dict:
    firsts = []
    for s in m.get("sections", [])[:3]:
        first = re.split(r"(?<=\.)\s+", s.get("text", ""))[0]
        if first:
            firsts.append(first)
    return {"text": " ".join(firsts) or f"This report covers {m.get('topic', '')}."}


HANDLERS = {
    "plan": _plan,
    "survey_queries": lambda m: {
        "queries": [
            f"{m.get('topic', '')} overview",
            f"{m.get('topic', '')} evidence",
            f"{m.get('topic', '')} safety",
        ]
    },
    "related_outline": _related,
    "personas": _personas,
    "fit_syllabus": _fit_syllabus,
    "ask_question": _ask,
    "question_to_queries": lambda m: {"queries": [_words(m.get("question", ""), 12)]},
    "answer_question": _answer,
    "assign_questions": _assign,
    "answer_and_assign": lambda m: {**_answer(m), **_assign(m)},
    "compress": _compress,
    "analyze": _analyze,
    "draft_outline": _outline,
    "refine_outline": _outline,
    "write_section": _section,
    "write_lead": _lead,
    "regenerate_section": _regenerate,
}
HANDLERS.update(COSTORM_HANDLERS)  # Co-STORM steps of the litellm engine (loopback_costorm.py)


def default_responder(body: dict) -> Reply:
    """Reply for one request (module doc); a step that is not declared in
    ``research.engines.steps`` (or has no case here) gets ``{"text": "ok"}``."""
    step = step_of(body)
    m = material_of(body)
    msgs = body.get("messages", [])
    files = [
        {"artifact_file": x.get("artifact_file") or x.get("file")}
        for x in m.get("artifacts", m.get("notes", []))
        if isinstance(x, dict) and (x.get("artifact_file") or x.get("file"))
    ]
    if (
        step in ("answer_question", "answer_and_assign", "costorm_answer")
        and body.get("tools")
        and files
        and not any(x.get("role") == "tool" for x in msgs)
        and _h(m.get("question", "")) % 3 == 0
    ):
        art = files[0]
        return Reply(
            tool_calls=[
                {
                    "name": "read_artifact",
                    "arguments": {
                        "file": art.get("artifact_file", ""),
                        "pattern": _words(m.get("question", ""), 1),
                    },
                }
            ]
        )
    handler = HANDLERS.get(step or "") if step in STEPS else None
    return Reply(
        content=json.dumps(handler(m) if handler else {"text": "ok"}), finish_reason="stop"
    )
