"""A run's LLM usage accounting in Redis: totals in ``run:{id}:usage`` and the breakdown by
phase, role, model and step in ``run:{id}:usage_by``, with the steps the offline engine answered
for the model (``fallback|{step}|calls``).
"""

from __future__ import annotations

from research.models import Usage
from research.store import keys
from research.store.connection import TextRedis


class RunUsage:
    """Account a run's LLM calls and read them back (part of ``RunStore``)."""

    r: TextRedis

    # ------------------------------------------------------------------ usage
    def add_usage(
        self,
        run_id: str,
        *,
        calls: int = 1,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost_usd: float = 0.0,
    ) -> None:
        pipe = self.r.pipeline()
        k = keys.run_usage(run_id)
        pipe.hincrby(k, "llm_calls", calls)
        pipe.hincrby(k, "prompt_tokens", prompt_tokens)
        pipe.hincrby(k, "completion_tokens", completion_tokens)
        pipe.hincrbyfloat(k, "cost_usd", cost_usd)
        pipe.execute()

    def get_usage(self, run_id: str) -> Usage:
        data = self.r.hgetall(keys.run_usage(run_id))
        return Usage(
            **{
                k: (float(v) if k == "cost_usd" else int(float(v)))
                for k, v in data.items()
                if k in Usage.model_fields
            }
        )

    def record_llm_call(
        self,
        run_id: str,
        *,
        phase: str,
        role: str,
        model: str,
        step: str,
        prompt_tokens: int,
        completion_tokens: int,
        cost_usd: float,
        retries: int = 0,
        tool_tokens: int = 0,
        context_tokens: int = 0,
        cached_prompt_tokens: int = 0,
        local: bool = False,
    ) -> None:
        """Account one LLM call: run totals in ``run:{id}:usage`` (llm_calls,
        prompt_tokens, completion_tokens, cost_usd USD, retries, tool_tokens = tokens of tool
        output placed in prompts, context_tokens = prompt tokens of in-context (non-compressor)
        calls, cached_prompt_tokens = prompt tokens served from the provider's prompt cache)
        and the breakdown by phase, role, model, step and ``role:model`` (which model answered
        each role, e.g. which one made the cards) in ``run:{id}:usage_by``; ``local``: the model
        is served locally at no charge (``model|{model}|local`` = 1, the Cost page's note)."""
        pipe = self.r.pipeline()
        k, kb = keys.run_usage(run_id), keys.run_usage_by(run_id)
        for field, n in (
            ("llm_calls", 1),
            ("prompt_tokens", prompt_tokens),
            ("completion_tokens", completion_tokens),
            ("retries", retries),
            ("tool_tokens", tool_tokens),
            ("context_tokens", context_tokens),
            ("cached_prompt_tokens", cached_prompt_tokens),
        ):
            pipe.hincrby(k, field, int(n))
        pipe.hincrbyfloat(k, "cost_usd", cost_usd)
        for dim, value in (
            ("phase", phase),
            ("role", role),
            ("model", model),
            ("step", step),
            ("role_model", f"{role}:{model}"),
        ):
            for field, n in (
                ("calls", 1),
                ("prompt_tokens", prompt_tokens),
                ("completion_tokens", completion_tokens),
                ("cached_prompt_tokens", cached_prompt_tokens),
                ("retries", retries),
            ):
                pipe.hincrby(kb, f"{dim}|{value}|{field}", int(n))
            pipe.hincrbyfloat(kb, f"{dim}|{value}|cost_usd", cost_usd)
        if local:
            pipe.hset(kb, f"model|{model}|local", 1)
        pipe.execute()

    def usage_totals(self, run_id: str) -> dict[str, float]:
        """Raw totals hash of ``run:{id}:usage`` as numbers (ints, ``cost_usd`` float)."""
        return {
            f: (float(v) if f == "cost_usd" else int(float(v)))
            for f, v in self.r.hgetall(keys.run_usage(run_id)).items()
        }

    def add_fallback(self, run_id: str, step: str) -> None:
        """Count one step the offline engine answered for the model (``fallback|{step}|calls``
        in ``run:{id}:usage_by``; the ``llm.fallback`` event says why)."""
        self.r.hincrby(keys.run_usage_by(run_id), f"fallback|{step}|calls", 1)

    def fallbacks(self, run_id: str) -> dict[str, int]:
        """``{step: n}``: how many times each step was answered offline (``add_fallback``)."""
        rows = self.usage_breakdown(run_id).get("fallback", {})
        return {step: int(row.get("calls", 0)) for step, row in rows.items()}

    def add_offline(self, run_id: str, step: str) -> None:
        """Count one step answered by the offline engine by design, not for a failed reply
        (``offline|{step}|calls`` in ``run:{id}:usage_by``; the ``llm.offline`` event says why:
        e.g. the summary cards of a local model, ``RESEARCH_LOCAL_COMPRESS``)."""
        self.r.hincrby(keys.run_usage_by(run_id), f"offline|{step}|calls", 1)

    def offline_steps(self, run_id: str) -> dict[str, int]:
        """``{step: n}``: how many times each step was answered offline by design
        (``add_offline``)."""
        rows = self.usage_breakdown(run_id).get("offline", {})
        return {step: int(row.get("calls", 0)) for step, row in rows.items()}

    def usage_breakdown(self, run_id: str) -> dict[str, dict[str, dict[str, float]]]:
        """``{dim: {value: {calls, prompt_tokens, completion_tokens, cost_usd, retries}}}`` for dim
        in phase/role/model/step/role_model, plus ``{"fallback": {step: {"calls": n}}}`` and
        ``{"offline": {step: {"calls": n}}}``."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for field, v in self.r.hgetall(keys.run_usage_by(run_id)).items():
            dim, rest = field.split("|", 1)
            value, metric = rest.rsplit("|", 1)
            out.setdefault(dim, {}).setdefault(value, {})[metric] = (
                float(v) if metric == "cost_usd" else int(float(v))
            )
        return out
