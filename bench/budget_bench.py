"""Item 16 — a run's budget: LLM calls, tokens and waiting for one STORM run, as an analyst runs it.

``python -m research.cli run "Trastuzumab in HER2-positive breast cancer" --corpus <shared
corpus> --template drug --engine litellm --model openai/gpt-4o-mini --max-perspectives 4
--max-turns 3 --json`` as a subprocess (exactly as typed, a warm index in ``RESEARCH_INDEX_DIR``),
against the project's loopback OpenAI-compatible server (``research.devtools.loopback_llm``,
started in this process) at 0 s and at 0.3 s per call, and a private Redis.

Per run:

* **calls and prompt/completion tokens per step**, from the run's own accounting
  (``research.llm.usage.usage_report`` → ``by_step``), cross-checked against what the server
  received (its request bodies: calls per step, cl100k tokens of the messages, and separately
  of the JSON schemas sent as ``response_format`` and of the ``tools``);
* **cached prompt tokens** as the run recorded them (the server reports prompt-cache hits when
  ``cache_min_tokens`` is set; default: OpenAI's rule, prefixes of ≥ 1024 tokens);
* **in-run wall** (``RunState.wall_s``: ``run.created`` → finished), **process wall** (process
  start → exit), **start-up** (process start → the ``run.created`` event's timestamp) and
  **CPU-seconds** of the process (user + system, ``os.wait4``'s rusage, all threads).

The measured runs follow a warm-up run that builds the index and, since the loopback server
answers every run alike, leaves all their sentence vectors in the shared vector cache; one more
run at 0.3 s per call with ``RESEARCH_VECTOR_CACHE=0`` shows a topic new to the machine.

``reps`` runs per latency; figures are medians (per-run rows in ``extra``). The item's figures
carry no target unless ``targets`` (the lean-run goals: prompt tokens ≤ 1/3 of a baseline,
≤ 55 calls, in-run wall at 0.3 s ≤ 10 s, start-up ≤ 3 s) is set.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Figure
from bench.redis_env import private_redis

ITEM = 16  # the run budget
# STORM's run has no gap rounds (searches after the planned turns for unmet syllabus questions):
# the targets compare the same 4×3 conversations; the defaults' figures are reported beside them.
LIKE_FOR_LIKE = ("--gap-turns", "0")

TOPIC = "Trastuzumab in HER2-positive breast cancer"
MODEL = "openai/gpt-4o-mini"
REPO = Path(__file__).resolve().parents[1]


def _tok(text: str) -> int:
    from research.llm.tokens import count_tokens  # noqa: PLC0415 - bench modules load what their item needs, when it runs

    return count_tokens(text)


def server_tally(bodies: list[dict]) -> dict:
    """What the loopback server received, per step: ``{step: {calls, prompt_tokens,
    schema_tokens, tools_tokens}}`` (cl100k; ``prompt_tokens`` over the messages as the server
    reports them in ``usage``)."""
    from research.devtools.loopback_llm import prompt_text  # noqa: PLC0415 - bench modules load what their item needs, when it runs
    from research.devtools.loopback_responder import step_of  # noqa: PLC0415 - bench modules load what their item needs, when it runs

    out: dict[str, dict] = {}
    for body in bodies:
        row = out.setdefault(
            step_of(body) or "unknown",
            {"calls": 0, "prompt_tokens": 0, "schema_tokens": 0, "tools_tokens": 0},
        )
        row["calls"] += 1
        row["prompt_tokens"] += max(1, _tok(prompt_text(body)))
        if body.get("response_format"):
            row["schema_tokens"] += _tok(json.dumps(body["response_format"]))
        if body.get("tools"):
            row["tools_tokens"] += _tok(json.dumps(body["tools"]))
    return out


def cli_run(
    srv,
    redis_url: str,
    data_dir: Path,
    index_dir: Path,
    corpus: Path,
    args: tuple[str, ...] = (),
    **kw,
) -> dict:
    """One ``research run`` subprocess against ``srv`` (``args``: more CLI options, e.g.
    ``("--gap-turns", "0")``); returns its measured row (module doc).

    Raises:
        RuntimeError: the process printed no JSON.
    """
    from research.llm.usage import usage_report  # noqa: PLC0415 - bench modules load what their item needs, when it runs
    from research.store.connection import make_client  # noqa: PLC0415 - bench modules load what their item needs, when it runs
    from research.store.runs import RunStore  # noqa: PLC0415 - bench modules load what their item needs, when it runs

    env = dict(
        os.environ,
        RESEARCH_DATA_DIR=str(data_dir),
        RESEARCH_INDEX_DIR=str(index_dir),
        REDIS_URL=redis_url,
        OPENAI_API_KEY="sk-bench-loopback",
        OPENAI_API_BASE=srv.url,
        RESEARCH_LLM_RPM="0",
        RESEARCH_LLM_RECORD="",
        RESEARCH_LLM_REPLAY="",
        RESEARCH_LLM_MODEL="",
        PYTHONPATH=str(REPO),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        **kw,
    )
    profile = os.environ.get("BENCH_PROFILE")  # whole process, all threads (profile_threads)
    cmd = [
        sys.executable,
        *(["-m", "bench.profile_threads", profile] if profile else []),
        "-m",
        "research.cli",
        "run",
        TOPIC,
        "--corpus",
        str(corpus),
        "--template",
        "drug",
        "--engine",
        "litellm",
        "--model",
        MODEL,
        "--max-perspectives",
        "4",
        "--max-turns",
        "3",
        *args,
        "--json",
    ]
    srv.reset_counts()
    load = os.getloadavg()[0]
    out_path = data_dir.parent / f"{data_dir.name}.out"
    data_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with out_path.open("wb") as out, open(os.devnull, "wb") as devnull:
        proc = subprocess.Popen(cmd, stdout=out, stderr=devnull, env=env, cwd=str(REPO))
        _, status, rusage = os.wait4(proc.pid, 0)
    wall = time.time() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    try:
        doc = json.loads(out_path.read_text())
    except ValueError:
        raise RuntimeError(f"run printed no JSON (exit {proc.returncode})") from None
    store = RunStore(make_client(redis_url))
    run_id = doc["run_id"]
    created = next((ev.ts for ev in store.events(run_id) if ev.type == "run.created"), None)
    usage = usage_report(store, run_id)
    bodies = list(srv.bodies)
    tally = server_tally(bodies)
    by_step = {
        step: {
            "calls": int(row.get("calls", 0)),
            "prompt_tokens": int(row.get("prompt_tokens", 0)),
            "completion_tokens": int(row.get("completion_tokens", 0)),
            "cached_prompt_tokens": int(row.get("cached_prompt_tokens", 0)),
            "model": None,
        }
        for step, row in usage["by_step"].items()
    }
    mismatch = {
        step: {"run": by_step.get(step, {}).get("calls", 0), "server": t["calls"]}
        for step, t in tally.items()
        if by_step.get(step, {}).get("calls", 0) != t["calls"]
        or by_step.get(step, {}).get("prompt_tokens", 0) != t["prompt_tokens"]
    }
    report = Path(doc["report_path"]) if doc.get("report_path") else None
    return {
        "run_id": run_id,
        "status": doc.get("status"),
        "exit": proc.returncode,
        "load_1m": round(load, 2),
        "process_wall_s": round(wall, 2),
        "in_run_wall_s": doc.get("wall_s"),
        "startup_s": round(created - t0, 2) if created else None,
        "cpu_s": round(rusage.ru_utime + rusage.ru_stime, 2),
        "llm_calls": usage["llm_calls"],
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "cached_prompt_tokens": int(usage.get("cached_prompt_tokens", 0) or 0),
        "schema_tokens": sum(t["schema_tokens"] for t in tally.values()),
        "tools_tokens": sum(t["tools_tokens"] for t in tally.values()),
        "server_requests": len(bodies),
        "server_prompt_tokens": sum(t["prompt_tokens"] for t in tally.values()),
        "by_step": by_step,
        "server_by_step": tally,
        "accounting_mismatch": mismatch,
        "context_reduction_pct": usage["context"]["context_reduction_pct"],
        "overall_reduction_pct": usage["context"]["overall_reduction_pct"],
        "tool_calls": usage["context"]["tool_calls"],
        "sources": doc.get("sources"),
        "citations": doc.get("citations"),
        "report_bytes": report.stat().st_size if report and report.is_file() else None,
    }


def _index_dir() -> Path:
    """The shared test index cache (built once per clone; the first run here builds it;
    ``BENCH_INDEX_DIR`` overrides it, e.g. to share one index between two checkouts)."""
    return Path(os.environ.get("BENCH_INDEX_DIR") or REPO / ".cache" / "test-indexes")


def measure(
    corpus: Path,
    latencies_ms: tuple[int, ...] = (0, 300),
    reps: int = 2,
    args: tuple[str, ...] = LIKE_FOR_LIKE,
    **env,
) -> dict[int, list[dict]]:
    """``reps`` runs per latency (ms); ``{latency_ms: [row, …]}`` (``cli_run`` rows)."""
    from research.devtools.loopback_llm import LoopbackLLM  # noqa: PLC0415 - bench modules load what their item needs, when it runs

    rows: dict[int, list[dict]] = {}
    srv = LoopbackLLM().start()
    try:
        with private_redis() as (url, d):
            warm = tempfile.mkdtemp(prefix="bench-budget-warm-", dir=d)
            cli_run(srv, url, Path(warm) / "data", _index_dir(), corpus, **env)  # index, caches
            for lat in latencies_ms:
                srv.latency_ms = lat
                for i in range(reps):
                    row = cli_run(
                        srv, url, d / f"data-{lat}-{i}", _index_dir(), corpus, args, **env
                    )
                    row["latency_ms"] = lat
                    print(
                        f"[bench] budget {lat} ms run {i + 1}: "
                        + json.dumps({k: v for k, v in row.items() if "by_step" not in k}),
                        file=sys.stderr,
                        flush=True,
                    )
                    rows.setdefault(lat, []).append(row)
    finally:
        srv.stop()
    return rows


def _med(rows: list[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(vals), 2) if vals else None


def summary(rows: dict[int, list[dict]]) -> dict:
    """Medians per latency: ``{latency_ms: {figure: median}}`` plus the per-step table of the
    first run at the first latency (calls and tokens do not depend on latency)."""
    keys = (
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "cached_prompt_tokens",
        "schema_tokens",
        "in_run_wall_s",
        "process_wall_s",
        "startup_s",
        "cpu_s",
        "context_reduction_pct",
        "overall_reduction_pct",
        "report_bytes",
        "citations",
        "load_1m",
    )
    return {lat: {k: _med(rs, k) for k in keys} for lat, rs in rows.items()}


def run(
    corpus: Path,
    reps: int = 2,
    baseline: dict | None = None,
    targets: bool = False,
) -> list[Figure]:
    """Measure the run budget (module doc); ``baseline``: a saved ``summary`` (e.g. the
    ``lean_before.json`` of today's main) to compare against."""
    rows = measure(corpus, reps=reps)
    defaults = summary(measure(corpus, latencies_ms=(0,), reps=1, args=()))[0]
    # a new topic: no vector cached, every sentence embedded (the loopback server answers the
    # same each run, so the runs above find their vectors cached by the warm-up run)
    uncached = summary(measure(corpus, latencies_ms=(300,), reps=1, RESEARCH_VECTOR_CACHE="0"))[300]
    med = summary(rows)
    fast, slow = med.get(0, {}), med.get(300, {})
    base0 = (baseline or {}).get("0") or (baseline or {}).get(0) or {}
    base3 = (baseline or {}).get("300") or (baseline or {}).get(300) or {}
    extra = {"runs": rows, "medians": med, "with_gap_rounds": defaults, "uncached": uncached}
    figs = [
        Figure(
            ITEM,
            "run budget: prompt tokens per run (drug 4×3, litellm)",
            fast.get("prompt_tokens"),
            "tok",
            baseline=base0.get("prompt_tokens"),
            baseline_label="today's main",
            target="<= 0.3334" if targets and base0 else "",
            note=f"completion {fast.get('completion_tokens')} tok; JSON schemas sent "
            f"{fast.get('schema_tokens')} tok; cached {fast.get('cached_prompt_tokens')} tok; "
            f"median of {reps} runs per latency",
            extra=extra,
        ),
        Figure(
            ITEM,
            "run budget: LLM calls per run",
            fast.get("llm_calls"),
            "calls",
            baseline=base0.get("llm_calls"),
            baseline_label="today's main",
            target="<= 55" if targets else "",
            target_on="value",
            note=f"--gap-turns 0, like STORM; with the default gap rounds "
            f"{defaults.get('llm_calls')} calls, {defaults.get('prompt_tokens')} prompt tokens, "
            f"CPU {defaults.get('cpu_s')} s",
        ),
        Figure(
            ITEM,
            "run budget: in-run wall at 0.3 s per call",
            slow.get("in_run_wall_s"),
            "s",
            baseline=base3.get("in_run_wall_s"),
            baseline_label="today's main",
            target="<= 10" if targets else "",
            target_on="value",
            note=f"process wall {slow.get('process_wall_s')} s; at 0 s per call: in-run "
            f"{fast.get('in_run_wall_s')} s, process {fast.get('process_wall_s')} s, CPU "
            f"{fast.get('cpu_s')} s",
        ),
        Figure(
            ITEM,
            "run budget: in-run wall at 0.3 s per call, no vector cached",
            uncached.get("in_run_wall_s"),
            "s",
            note=f"RESEARCH_VECTOR_CACHE=0, as a topic new to the machine: process wall "
            f"{uncached.get('process_wall_s')} s, CPU {uncached.get('cpu_s')} s",
        ),
        Figure(
            ITEM,
            "run budget: start-up (process start → run.created)",
            fast.get("startup_s"),
            "s",
            baseline=base0.get("startup_s"),
            baseline_label="today's main",
            target="<= 3" if targets else "",
            target_on="value",
        ),
        Figure(
            ITEM,
            "run budget: context reduction (tool outputs)",
            fast.get("context_reduction_pct"),
            "%",
            baseline=base0.get("context_reduction_pct"),
            baseline_label="today's main",
            target="> 80" if targets else "",
            target_on="value",
        ),
    ]
    return figs


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.budget_bench [--reps N] [--out FILE] [--label TEXT]``: measure and write
    ``{"label", "commit", "machine", "medians", "runs"}`` to ``FILE`` (medians keyed by latency
    in ms, as ``--budget-baseline`` of ``python -m bench`` reads them)."""
    import argparse  # noqa: PLC0415 - bench modules load what their item needs, when it runs

    from bench.common import machine  # noqa: PLC0415 - bench modules load what their item needs, when it runs

    ap = argparse.ArgumentParser(prog="python -m bench.budget_bench")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--out", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument(
        "--corpus", default=str(REPO.parent / "shared" / "data" / "corpus" / "docs.jsonl")
    )
    args = ap.parse_args(argv)
    for k, v in (
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
    ):
        os.environ.setdefault(k, v)
    info = machine()
    rows = measure(Path(args.corpus), reps=args.reps)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    doc = {
        "label": args.label,
        "commit": commit,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {**info, "loadavg_at_end": [round(x, 2) for x in os.getloadavg()]},
        "medians": summary(rows),
        "runs": rows,
    }
    Path(args.out).write_text(json.dumps(doc, indent=2))
    print(json.dumps(doc["medians"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
