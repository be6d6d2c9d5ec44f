"""Items 1, 2, 6 — LLM runs against the loopback OpenAI-compatible server (engineer A's
``research.devtools.loopback_llm.LoopbackLLM``) with a fixed latency per call (300 ms).

Real litellm client, real HTTP, the litellm engine (``engine="litellm"``, model
``openai/gpt-4o-mini`` for every role, a dummy key), the shared corpus, a private Redis and a
temp data dir. ``RESEARCH_LLM_RPM=0`` (the per-model requests-per-minute limiter is for real
providers; on a loopback it would only measure the limiter). Per-run concurrency: the product
default (``RESEARCH_LLM_CONCURRENCY``, 4).

1. Parallelism: one STORM run (perspectives × turns), wall time (``RunState.wall_s``) ÷ its
   critical path (``critical_path_from_log`` on the run's own ``llm_calls.jsonl``), first with
   the fixed latency, then with lognormal latency (median ``latency_ms``, σ =
   ``LOGNORMAL_SIGMA``, seeded per call by ``LoopbackLLM.delay_s``). For the lognormal run the
   baseline is the critical path *without* round barriers (each perspective's whole
   conversation one lane): the time conversations that never wait for each other would take.
2. Context: prompt tokens sent (in-context calls) ÷ prompt tokens had the raw tool outputs been
   injected (``research.llm.usage.usage_report`` → ``context``); target ratio ≤ 0.15 (≥ 85 % reduction, stretch 0.10).
6. Concurrency: ``n`` runs started at once through ``research.jobs.start_run`` (the dashboard's
   path), wall time until all end ÷ one run's wall time measured the same way.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from bench.common import Figure, scoped_env
from bench.metrics import critical_path_s
from bench.redis_env import private_redis
from research.devtools.loopback_llm import LoopbackLLM
from research.jobs import make_config, start_run
from research.llm.usage import usage_report
from research.models import ACTIVE_STATUSES
from research.store.connection import get_redis
from research.store.runs import RunStore

MODEL = "openai/gpt-4o-mini"
TOPIC = "Trastuzumab in HER2-positive breast cancer"
CONV_STEPS = (
    "ask_question",
    "question_to_queries",
    "answer_and_assign",
    "answer_question",
    "assign_questions",
)
LOGNORMAL_SIGMA = 0.8
LOGNORMAL_SEED = 14


def call_log(data_dir: Path, run_id: str) -> list[dict]:
    """The run's ``llm_calls.jsonl`` as dicts with ``start``/``end`` (s) added
    (``end = ts``, ``start = ts − latency_s``)."""
    path = data_dir / "research_artifacts" / run_id / "llm_calls.jsonl"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        c = json.loads(line)
        if c.get("latency_s") is None:
            continue
        c["end"] = float(c["ts"])
        c["start"] = c["end"] - float(c["latency_s"])
        out.append(c)
    return sorted(out, key=lambda c: c["start"])


def _material(c: dict) -> dict:
    """The ``<material>`` JSON of a logged call's user message ({} when absent)."""
    for m in c.get("messages") or []:
        text = m.get("content") if isinstance(m.get("content"), str) else ""
        if "<material>" in text:
            body = text.split("<material>", 1)[1].split("</material>", 1)[0]
            try:
                return json.loads(body)
            except ValueError:
                return {}
    return {}


def annotate_lanes(calls: list[dict], rounds: bool = True) -> list[dict]:
    """Give each call a ``phase`` segment and a ``lane`` for ``critical_path_s``.

    Rule: every phase is a sequential segment, except conversations, where round r (every
    perspective's turn r; rounds are separated by a barrier in ``research.pipeline.conversation``)
    is its own segment, and inside a round each perspective's chain ask → queries → answer →
    assign (plus the compressions its searches trigger) is one lane. The perspective of a call is
    read from its material (``perspective``); a call that names none joins the lane that ended
    last before it started (its predecessor in the same thread). The round of a perspective's
    call is the number of ``ask_question`` calls that perspective has made so far.
    ``rounds=False``: no barriers; the whole conversations phase is one segment whose lanes are
    the perspectives' whole conversations.
    """
    asks: dict[str, int] = {}
    lanes_end: dict[str, float] = {}
    for c in calls:
        if c.get("phase") != "conversations":
            c["segment"], c["lane"] = str(c.get("phase")), ""
            continue
        p = _material(c).get("perspective")
        name = p.get("name") if isinstance(p, dict) else p
        if not name:  # predecessor in time among lanes still open
            ended = [(e, ln) for ln, e in lanes_end.items() if e <= c["start"] + 1e-3]
            name = max(ended)[1] if ended else "?"
        if c.get("step") == "ask_question":
            asks[name] = asks.get(name, 0) + 1
        c["lane"] = name
        c["segment"] = f"conversations.round{asks.get(name, 1)}" if rounds else "conversations"
        lanes_end[name] = c["end"]
    return calls


def critical_path_from_log(calls: list[dict], rounds: bool = True) -> float:
    """Critical path (s) of a logged run: ``annotate_lanes`` then ``critical_path_s``."""
    return critical_path_s(annotate_lanes(calls, rounds), phase_key="segment", lane_key="lane")


def _wait(store, run_ids: list[str], timeout_s: float = 900, poll_s: float = 0.5) -> list:
    """Block until no run of ``run_ids`` is pending or active; returns their ``RunState``s.

    Polls every ``poll_s`` (0.5 s): walls are read from the runs' own ``finished_at``
    (``_wall_since``), so the poll interval costs no resolution, and a 50 ms poll of 8 runs
    took ~10 % of the CPU samples of item 6 (py-spy, 2 cores) away from the runs it timed."""

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        states = [store.get_run(r) for r in run_ids]
        if not any(s.status in ACTIVE_STATUSES or s.status == "pending" for s in states):
            return states
        time.sleep(poll_s)
    raise TimeoutError(f"runs still active after {timeout_s:.0f} s")


def _wall_since(t0: float, states: list) -> float:
    """Seconds (wall clock, ``time.time()`` epoch) from ``t0`` to the last run's ``finished_at``
    (its ``updated_at`` when a run has none)."""
    return max((s.finished_at or s.updated_at) for s in states) - t0


def _timed_run(store, cfg, data: Path, rounds: bool) -> tuple:
    """Start one run of ``cfg`` and wait for it; ``(RunState, logged calls, critical path s)``."""

    state = _wait(store, [start_run(cfg)])[0]
    calls = call_log(data / "data", state.run_id)
    return state, calls, critical_path_from_log([dict(c) for c in calls], rounds=rounds)


def _ratios(runs: list[tuple]) -> list[float]:
    return [round(st.wall_s / crit, 3) if crit else None for st, _, crit in runs]


def _median_pair(runs: list[tuple]) -> tuple:
    """The run whose wall ÷ critical path is the median of ``runs`` (the lower middle one for
    an even count): its own wall and critical path, so the figure's parts stay one run's."""
    order = sorted(runs, key=lambda r: r[0].wall_s / r[2] if r[2] else float("inf"))
    return order[(len(order) - 1) // 2]


def run(
    corpus: Path,
    perspectives: int = 4,
    turns: int = 3,
    concurrency: int = 8,
    latency_ms: int = 300,
    reps: int = 3,
) -> list[Figure]:
    """Measure items 1, 2 and 6; returns their figures. Item 1's figures are the median of
    ``reps`` runs each (one run's ratio moves by ±0.02 between back-to-back runs on 2 cores:
    1.092 / 1.106 / 1.071 at idle)."""
    srv = LoopbackLLM(latency_ms=latency_ms).start()
    figs: list[Figure] = []
    try:
        with (
            private_redis() as (url, d),
            scoped_env(
                RESEARCH_DATA_DIR=str(d / "data"),
                REDIS_URL=url,
                RESEARCH_INDEX_DIR=str(_index_dir()),
                OPENAI_API_KEY="sk-bench-loopback",
                OPENAI_API_BASE=srv.url,
                RESEARCH_LLM_RPM="0",
                RESEARCH_JOB_BACKEND="thread",
                RESEARCH_LLM_RECORD="",
                RESEARCH_LLM_REPLAY="",
                RESEARCH_LLM_MODEL="",
            ),
        ):
            store = RunStore(get_redis())
            cfg = make_config(
                TOPIC,
                corpus=str(corpus),
                template="drug",
                engine="litellm",
                models={"*": MODEL},
                max_perspectives=perspectives,
                max_turns=turns,
            )
            # warm-up (index, embedder, litellm import) so the timed runs measure the steady state
            warm = make_config(
                TOPIC,
                corpus=str(corpus),
                template="drug",
                engine="litellm",
                models={"*": MODEL},
                max_perspectives=1,
                max_turns=1,
            )
            _wait(store, [start_run(warm)])

            fixed = [_timed_run(store, cfg, d, rounds=False) for _ in range(reps)]
            state, calls, crit = _median_pair(fixed)
            one = state.run_id
            single_s = (
                state.finished_at or state.updated_at
            ) - state.created_at  # as item 6 times 8 runs
            t_first = calls[0]["start"] if calls else 0.0
            timeline = [
                {
                    "step": c.get("step"),
                    "segment": c.get("segment"),
                    "lane": c.get("lane"),
                    "start_s": round(c["start"] - t_first, 3),
                    "dur_s": round(c["end"] - c["start"], 3),
                }
                for c in calls
            ]
            figs.append(
                Figure(
                    1,
                    f"parallelism: run wall ÷ critical path ({perspectives}×{turns})",
                    state.wall_s,
                    "s",
                    baseline=crit,
                    baseline_label="critical path without round barriers",
                    target="<= 1.1",
                    note=f"median of {reps} runs, ratios {_ratios(fixed)}; status {state.status}; "
                    f"{len(calls)} LLM calls at {latency_ms} ms; all calls in sequence would take "
                    f"{sum(c['end'] - c['start'] for c in calls):.1f} s",
                    extra={
                        "timeline": timeline,
                        "run_created_to_first_call_s": round(t_first - state.created_at, 3)
                        if calls
                        else None,
                    },
                )
            )
            srv.latency_sigma, srv.latency_seed = LOGNORMAL_SIGMA, LOGNORMAL_SEED
            lognormal = [_timed_run(store, cfg, d, rounds=False) for _ in range(reps)]
            srv.latency_sigma = 0.0
            ln_state, ln_calls, free = _median_pair(lognormal)
            barred = critical_path_from_log([dict(c) for c in ln_calls], rounds=True)
            figs.append(
                Figure(
                    1,
                    f"parallelism: run wall ÷ critical path ({perspectives}×{turns}, lognormal)",
                    ln_state.wall_s,
                    "s",
                    baseline=free,
                    baseline_label="critical path without round barriers",
                    target="<= 1.15",
                    note=f"median of {reps} runs, ratios {_ratios(lognormal)}; status {ln_state.status}; "
                    f"{len(ln_calls)} LLM calls, lognormal latency median "
                    f"{latency_ms} ms σ {LOGNORMAL_SIGMA} (seed {LOGNORMAL_SEED}); with round "
                    f"barriers the critical path is {barred:.1f} s",
                )
            )
            ctx = usage_report(store, one)["context"]
            sent, without = ctx["prompt_tokens_sent"], ctx["prompt_tokens_without_offload"]
            figs.append(
                Figure(
                    2,
                    "context: prompt tokens sent ÷ with raw tool outputs",
                    sent,
                    "tok",
                    baseline=without,
                    baseline_label="raw outputs injected",
                    target="<= 0.15",
                    note=f"reduction {ctx['overall_reduction_pct']}% (≥ 85 %, stretch 90 %); tool outputs alone: "
                    f"{ctx['tool_tokens_sent']:,} of {ctx['raw_tool_tokens']:,} tokens sent "
                    f"({ctx['context_reduction_pct']}% reduction)",
                )
            )

            t0 = time.time()  # item 6's baseline: the median fixed-latency run's wall (single_s)
            ids = [start_run(cfg) for _ in range(concurrency)]
            many_s = _wall_since(t0, _wait(store, ids))
            statuses = [store.get_run(i).status for i in ids]
            figs.append(
                Figure(
                    6,
                    f"concurrency: {concurrency} runs at once ÷ 1 run (wall)",
                    many_s,
                    "s",
                    baseline=single_s,
                    baseline_label="1 run, same path",
                    target="<= 1.3",
                    note=f"statuses {sorted(set(statuses))}; jobs.start_run thread backend",
                )
            )
    finally:
        srv.stop()
    return figs


def _index_dir() -> Path:
    """The shared test index cache (the corpus index is built once per clone)."""
    return Path(__file__).resolve().parents[1] / ".cache" / "test-indexes"
