"""Per-call accounting: tokens in/out, ``cost_usd`` (USD, ``models.cost_usd``:
litellm's price table or RESEARCH_MODEL_PRICES, never a silent 0), latency (s), retries; run
totals and the phase/role/model/step breakdown in Redis (``RunStore.record_llm_call``); one
line per call in ``{data_dir}/research_artifacts/{run_id}/llm_calls.jsonl`` with the prompt
messages and the reply (never a key or an api_base).

Phase = the run's status at call time; step, role and whether the prompt counts as context come
from the step's declaration (``research.llm.steps.StepSpec``, table ``research.engines.steps``):
out-of-band steps (the compressor) are not counted as context.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from research.llm.client import CallResult
from research.llm.models import cost_usd, free_local
from research.llm.steps import StepSpec

if TYPE_CHECKING:
    from research.store.runs import RunStore


class Accountant:
    """Accounts one run's calls. ``store``/``run_id`` None → in-memory totals only (standalone
    engine use). ``totals`` (thread-safe): calls, prompt_tokens, completion_tokens, cost_usd
    (USD), retries — for a run, starting from what the run's usage hash already holds (so its
    budget holds across resumes and follow-ups)."""

    def __init__(
        self,
        run_id: str | None = None,
        store: RunStore | None = None,
        artifacts_root: Path | None = None,
    ) -> None:
        self.run_id, self.store = run_id, store
        self.log_path = (
            (artifacts_root / run_id / "llm_calls.jsonl") if (run_id and artifacts_root) else None
        )
        self._lock = threading.Lock()
        self.totals = {
            "calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cached_prompt_tokens": 0,
            "cost_usd": 0.0,
            "retries": 0,
        }
        if store is not None and run_id:  # a run's budget counts what it spent before this session:
            spent = store.usage_totals(run_id)  # a resumed run or a follow-up starts from it
            self.totals.update(
                {
                    "calls": int(spent.get("llm_calls", 0)),
                    "cost_usd": float(spent.get("cost_usd", 0.0)),
                    **{
                        k: int(spent.get(k, 0))
                        for k in (
                            "prompt_tokens",
                            "completion_tokens",
                            "cached_prompt_tokens",
                            "retries",
                        )
                    },
                }
            )

    def phase(self) -> str:
        """The run's status now ("standalone" without a run)."""
        if not (self.store and self.run_id):
            return "standalone"
        return self.store.stored_status(self.run_id)

    def record(
        self,
        spec: StepSpec,
        *,
        model: str,
        messages: list[dict[str, Any]],
        result: CallResult | None,
        retries: int = 0,
        tool_tokens: int = 0,
        error: str = "",
        replayed: bool = False,
    ) -> float:
        """Account one call of the step ``spec`` (``result`` None for a call that failed after
        its retries: only its retries count). Returns the call's cost in USD."""
        step, role = spec.name, spec.role
        prompt = result.prompt_tokens if result else 0
        completion = result.completion_tokens if result else 0
        cached = min(prompt, getattr(result, "cached_prompt_tokens", 0) or 0) if result else 0
        cost = cost_usd(model, prompt, completion, cached) if result else 0.0
        phase = self.phase()
        with self._lock:
            t = self.totals
            t["calls"] += 1 if result else 0
            t["prompt_tokens"] += prompt
            t["completion_tokens"] += completion
            t["cached_prompt_tokens"] += cached
            t["cost_usd"] += cost
            t["retries"] += retries
        if self.store and self.run_id:
            if result:
                self.store.record_llm_call(
                    self.run_id,
                    phase=phase,
                    role=role,
                    model=model,
                    step=step,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    cached_prompt_tokens=cached,
                    cost_usd=cost,
                    retries=retries,
                    tool_tokens=tool_tokens,
                    context_tokens=prompt if spec.in_context else 0,
                    local=free_local(model),
                )
            elif retries:
                self.store.add_retries(self.run_id, retries)
        if self.log_path:
            line = {
                "ts": round(time.time(), 3),
                "step": step,
                "role": role,
                "model": model,
                "phase": phase,
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "cached_prompt_tokens": cached,
                "cost_usd": cost,
                "latency_s": result.latency_s if result else None,
                "queued_s": result.queued_s if result else None,
                "max_tokens": spec.max_tokens,
                "finish_reason": result.finish_reason if result else None,
                "retries": retries,
                "tool_tokens": tool_tokens,
                "replayed": replayed,
                "error": error,
                "messages": messages,
                "response": result.to_dict() if result else None,
            }
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock, self.log_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        return cost
