"""Live progress of a run: phase stepper, progress bars, cost so far and the share link.

:func:`progress_info` reads everything from Redis in a few round trips and returns plain data
(testable without Streamlit); :func:`progress_panel` draws it. Run pages call it through
``context.run_header`` inside ``context.live``, whose ``st.fragment(run_every=POLL_S)`` redraws
only the page body from Redis while the run is active (no full-page reruns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit, urlunsplit

import streamlit as st

from research.costorm import get_meta, get_turns
from research.costorm.summary import stop_line
from research.engines.labels import fallback_line, planned_line
from research.errors import InputError
from research.jobs.progress import reached_phase
from research.models import PHASES, REVIEW_STATUS, Perspective, RunState, Syllabus, Usage
from research.store.runs import RunStore
from research.ui.citations import plain
from research.ui.history import duration_s, eta_text, format_duration, is_active

TERMINAL_MARKS = {"failed": "❌", "cancelled": "⏹️", "interrupted": "⚠️"}
_EVENT_SCAN = 200  # newest events searched for the index build a run waits on


@dataclass
class ProgressInfo:
    """What the progress panel shows.

    Attributes:
        steps: ``(phase, mark)`` for each of ``models.PHASES``; mark is ``done``, ``current``,
            ``todo`` or, for the phase a stopped run ended in, ``failed``/``cancelled``/``interrupted``.
        turns_done / turns_planned: dialogue turns stored vs planned (STORM: perspectives ×
            max_turns; Co-STORM: the round-table turn cap).
        questions: rows ``{key, label, sources, target}`` (docs/design.md § Question syllabus: ``min_sources``).
        usage: LLM calls, tokens and USD so far. elapsed_s: seconds since creation.
        costorm: Co-STORM runs only (else None): ``warm_start`` turns (not counted by the turn
            cap), ``queries_used`` / ``query_budget`` (search queries) and ``stop`` (the line
            from ``research.costorm.summary.stop_line``, '' while running).
        index: the newest ``index.progress`` event's data (``{state, done, total, corpus}``)
            while the run waits for its local corpus index; None when it is not waiting.
        queued: calls of the run's model waiting for a free slot while the run has one waiting
            (``RunState.llm_queued``): the model is the bottleneck.
        fallbacks: ``{step: n}`` steps the offline engine answered (``llm.fallback``).
        offline: ``{step: n}`` steps the offline engine answered by design for a local model
            (``llm.offline``).
    """

    steps: list[tuple[str, str]]
    turns_done: int
    turns_planned: int
    questions: list[dict] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    elapsed_s: float = 0.0
    costorm: dict | None = None
    index: dict | None = None
    queued: int = 0
    fallbacks: dict[str, int] = field(default_factory=dict)
    offline: dict[str, int] = field(default_factory=dict)


def phase_steps(status: str, reached: str) -> list[tuple[str, str]]:
    """``(phase, mark)`` per phase for a run with ``status`` that last entered ``reached``."""
    if status == "complete":
        return [(p, "done") for p in PHASES]
    if status == "pending":
        return [(p, "todo") for p in PHASES]
    if status == REVIEW_STATUS:  # planning done, waiting for the analyst before the conversations
        return [("planning", "done"), ("plan review", "review"), *[(p, "todo") for p in PHASES[1:]]]
    idx = PHASES.index(reached) if reached in PHASES else 0
    current = "current" if status in PHASES else status
    return [
        (p, "done" if i < idx else current if i == idx else "todo") for i, p in enumerate(PHASES)
    ]


def progress_info(store: RunStore, state: RunState) -> ProgressInfo:
    """Read the run's progress from Redis (turn count, per-question counts, usage, events)."""
    cfg = state.config
    costorm = None
    if cfg.mode == "costorm":
        planned = cfg.costorm.max_turns
        costorm = costorm_progress(store, state)
    else:
        n_persp = (
            len(store.get_doc_list(state.run_id, "perspectives", Perspective))
            or cfg.max_perspectives
        )
        planned = n_persp * cfg.max_turns
    questions: list[dict] = []
    syllabus = store.get_doc(state.run_id, "syllabus", Syllabus)
    if syllabus is not None:
        try:
            counts = store.collector(state.run_id).question_counts()
        except InputError:
            counts = {}
        questions = [
            {
                "key": q.key,
                "label": q.label,
                "sources": int(counts.get(q.key, 0)),
                "target": q.min_sources,
            }
            for q in syllabus.questions
        ]
    return ProgressInfo(
        steps=phase_steps(state.status, reached_phase(store, state)),
        index=index_wait(store, state),
        turns_done=costorm["turns"] if costorm else store.count_turns(state.run_id),
        turns_planned=max(1, planned),
        questions=questions,
        usage=store.get_usage(state.run_id),
        elapsed_s=duration_s(state),
        costorm=costorm,
        queued=state.llm_queued if is_active(state.status) else 0,
        fallbacks=store.fallbacks(state.run_id) if cfg.engine == "litellm" else {},
        offline=store.offline_steps(state.run_id) if cfg.engine == "litellm" else {},
    )


def model_wait_line(queued: int) -> str:
    """``"Waiting for the model: 3 calls queued"`` (the model is the bottleneck); "" for 0."""
    if queued <= 0:
        return ""
    return f"Waiting for the model: {queued} call{'s' if queued != 1 else ''} queued."


def index_wait(store: RunStore, state: RunState) -> dict | None:
    """The newest ``index.progress`` data of a run still in ``planning`` whose index build has
    not finished (state not ``ready``), else None. Reads the last ``_EVENT_SCAN`` events."""
    if state.status not in ("pending", "planning"):
        return None
    for ev in reversed(store.tail_events(state.run_id, _EVENT_SCAN)):
        if ev.type == "index.progress":
            return None if ev.data.get("state") == "ready" else dict(ev.data)
    return None


def index_label(data: dict) -> tuple[float, str]:
    """``(fraction done, label)`` for an index wait: "Indexing corpus: 1,200 / 2,972 documents ·
    about 25 s left" (the estimate from the event's ``eta_s``, when the build has one)."""
    state, done, total = (
        data.get("state", ""),
        int(data.get("done") or 0),
        int(data.get("total") or 0),
    )
    if state == "loading_model":
        return 0.0, "Indexing corpus: loading the embedding model…"
    if state == "failed":
        return 0.0, "Indexing corpus failed"
    if state == "writing":
        return 1.0, f"Indexing corpus: writing the index ({total:,} documents)"
    return (
        (min(1.0, done / total) if total else 0.0),
        f"Indexing corpus: {done:,} / {total:,} documents{eta_text(data.get('eta_s'))}",
    )


def costorm_progress(store: RunStore, state: RunState) -> dict:
    """Co-STORM counters from ``research.costorm`` readers: ``turns`` (round-table turns, what
    the turn cap counts), ``warm_start``, ``queries_used``, ``query_budget`` and ``stop`` (why
    it ended, from ``RunState.stop_reason`` else the round-table's own record; '' while running)."""

    turns = get_turns(store, state.run_id)
    meta = get_meta(store, state.run_id)
    settings = state.config.costorm
    roundtable = sum(not t.warm_start for t in turns)
    reason = state.stop_reason or meta.stop_reason
    return {
        "turns": roundtable,
        "warm_start": len(turns) - roundtable,
        "queries_used": meta.queries_used,
        "query_budget": settings.query_budget,
        "stop": stop_line(
            reason,
            queries_used=meta.queries_used,
            query_budget=settings.query_budget,
            turns=roundtable,
            max_turns=settings.max_turns,
        ),
    }


def totals_caption(info: ProgressInfo) -> str:
    """The finished-run line: turns (Co-STORM: vs the cap, queries vs the budget and why it
    stopped), LLM calls, tokens and cost (``$`` escaped for Streamlit Markdown)."""
    tokens = info.usage.prompt_tokens + info.usage.completion_tokens
    bits = [f"{info.turns_done} turns"]
    if info.costorm:
        c = info.costorm
        bits = [
            f"{info.turns_done} / {info.turns_planned} round-table turns (+{c['warm_start']} warm start)",
            f"{c['queries_used']} / {c['query_budget']} search queries",
        ]
        if c["stop"]:
            bits.append(c["stop"])
    bits += [
        f"{info.usage.llm_calls} LLM calls",
        f"{tokens:,} tokens",
        f"\\${info.usage.cost_usd:.4f}",
    ]
    return " · ".join(bits)


_MARKS = {"done": "✅", "current": "🔵", "todo": "⚪", "review": "📝", **TERMINAL_MARKS}


def stepper_markdown(steps: list[tuple[str, str]]) -> str:
    """One Markdown line: ``✅ planning → 🔵 **conversations** → ⚪ analyzing …``."""
    parts = []
    for phase, mark in steps:
        label = f"**{phase}**" if mark not in ("done", "todo") else phase
        if mark in TERMINAL_MARKS:
            label += f" ({mark})"
        parts.append(f"{_MARKS.get(mark, '')} {label}")
    return " → ".join(parts)


def share_url(page_path: str, run_id: str, **extra: str) -> str:
    """Absolute share link ``{app base}/{page_path}?run=<id>`` (plus ``extra`` query params),
    from the browser's URL (``st.context.url``); relative when unknown (AppTest)."""
    query = urlencode({"run": run_id, **extra})
    base = ""
    try:
        base = st.context.url or ""
    except Exception:
        base = ""
    if base:
        parts = urlsplit(base)
        root = parts.path.rstrip("/")
        for suffix in ("/" + page_path,):
            if root.endswith(suffix):
                root = root[: -len(suffix)]
        return urlunsplit((parts.scheme, parts.netloc, f"{root}/{page_path}", query, ""))
    return f"{page_path}?{query}"


def progress_panel(store: RunStore, state: RunState) -> None:
    """Stepper, turn and per-question bars, elapsed/cost metrics, event tail and Cancel button.

    Active runs get everything; finished runs only the stepper and the totals line.
    """
    info = progress_info(store, state)
    st.markdown(stepper_markdown(info.steps))
    tokens = info.usage.prompt_tokens + info.usage.completion_tokens
    if info.fallbacks:
        st.info(fallback_line(info.fallbacks), icon=":material/model_training:")
    if info.offline:
        st.info(planned_line(info.offline), icon=":material/model_training:")
    if not is_active(state.status):
        st.caption(totals_caption(info))
        return
    if info.queued:
        st.caption(
            f":material/hourglass_top: {model_wait_line(info.queued)} The model server answers "
            "one request at a time per slot (RESEARCH_LLM_CONCURRENCY); the others wait, they "
            "do not time out."
        )
    if info.index:
        frac, label = index_label(info.index)
        st.progress(frac, text=label)
        st.caption(
            "The local corpus is indexed once (first run on a fresh data dir); later runs reuse it."
        )
    cols = st.columns([3, 1, 1, 1])
    cols[0].progress(
        min(1.0, info.turns_done / info.turns_planned),
        text=f"{'round-table ' if info.costorm else ''}turns {info.turns_done} / {info.turns_planned}",
    )
    if info.costorm:
        c = info.costorm
        cols[0].progress(
            min(1.0, c["queries_used"] / max(1, c["query_budget"])),
            text=f"search queries {c['queries_used']} / {c['query_budget']}",
        )
        if c["stop"]:
            cols[0].caption(
                f"Round-table {plain(c['stop'])}; writing the report from the mind map."
            )
    cols[1].metric("Elapsed", format_duration(info.elapsed_s))
    cols[2].metric(
        "Cost so far",
        f"${info.usage.cost_usd:.4f}",
        help=f"{tokens:,} tokens, {info.usage.llm_calls} LLM calls",
    )
    if cols[3].button(
        "Cancel run",
        key=f"cancel_{state.run_id}",
        icon=":material/stop_circle:",
        disabled=store.cancel_requested(state.run_id),
    ):
        store.request_cancel(state.run_id)
        st.toast("Cancel requested; the run stops at its next step and keeps everything so far.")
    if info.questions:
        st.dataframe(
            info.questions,
            hide_index=True,
            width="stretch",
            height=min(300, 38 + 35 * len(info.questions)),
            column_config={
                "key": st.column_config.TextColumn("Question"),
                "label": st.column_config.TextColumn("Label", width="medium"),
                "sources": st.column_config.ProgressColumn(
                    "Sources vs target",
                    format="%d",
                    min_value=0,
                    max_value=max(q["target"] for q in info.questions),
                ),
                "target": st.column_config.NumberColumn("Target"),
            },
        )
    if store.cancel_requested(state.run_id):
        st.caption(
            f"Cancel requested for {plain(state.topic)}: the run stops at its next step boundary."
        )
