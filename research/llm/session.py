"""``LLMSession``: one run's gateway to the LLM — model per role, per-run concurrency limit,
budget, accounting, and record/replay — around ``client.complete``.

Record/replay: the run's ``RunConfig.cassette`` (``research run --record/--replay``), else the
process-wide ``Settings.cassette`` (``RESEARCH_LLM_RECORD=PATH`` appends every call to a
cassette; ``RESEARCH_LLM_REPLAY=PATH`` answers every call from one, with no network and no key).
Concurrency: the model's process-wide slots (``research.llm.slots``: ``RESEARCH_LLM_CONCURRENCY``
per model, 1 for a local endpoint, else 4), shared with every other run of the process; while
the run's calls wait for one, the run's ``llm_queued`` field says how many calls of the model
are queued (the run page's "waiting for the model"). Reply bound: each call sends its step's
``max_tokens`` (``StepSpec.max_tokens``) and is read no further (``client.complete``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from research.config import load_settings
from research.llm import client
from research.llm.accounting import Accountant
from research.llm.budget import Budget
from research.llm.cassette import Cassette
from research.llm.errors import BudgetExhausted, LLMError
from research.llm.language import context_lines
from research.llm.models import api_key_for, resolve_models
from research.llm.steps import StepSpec
from research.models import RunConfig

if TYPE_CHECKING:
    from collections.abc import Callable

    from research.config import Settings
    from research.store.runs import RunStore


def _schema(fmt: Any) -> Any:
    if isinstance(fmt, type) and issubclass(fmt, BaseModel):
        return {"name": fmt.__name__, "schema": fmt.model_json_schema()}
    return fmt


class LLMSession:
    """Args: ``config`` (models, budgets), ``run_id``/``store``/``settings`` (None → standalone,
    in-memory accounting). ``on_budget(reason)`` is called once when a cap is reached."""

    def __init__(
        self,
        config: RunConfig,
        run_id: str | None = None,
        store: RunStore | None = None,
        settings: Settings | None = None,
        on_budget: Callable[[str], object] | None = None,
    ) -> None:
        self.models = resolve_models(config.models)
        self.accountant = Accountant(run_id, store, settings.artifacts_root if settings else None)
        self.budget = Budget(self.accountant, config.budget_usd, config.budget_tokens, on_budget)
        settings = settings or load_settings()
        self.store, self.run_id = store, run_id
        self._queued = 0  # the run's calls waiting for a slot of their model
        self._queue_lock = threading.Lock()
        cassette = config.cassette or settings.cassette  # the run's own, else the process-wide one
        self.cassette = Cassette(cassette[1], cassette[0]) if cassette else None
        self.language = config.language

    def with_context(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` with today's date (and the run's language) appended to the system
        message (``research.llm.language.context_lines``); one is added when there is none."""
        lines = context_lines(self.language)
        out = [dict(m) for m in messages]
        for m in out:
            if m.get("role") == "system" and isinstance(m.get("content"), str):
                m["content"] = f"{m['content']}\n\n{lines}"
                return out
        return [{"role": "system", "content": lines}, *out]

    def _on_wait(self, waiting: int, change: int) -> None:
        """Publish the model's queue on the run (``llm_queued``: calls of the model waiting
        for a slot while this run has one waiting, else 0)."""
        with self._queue_lock:
            self._queued += change
            shown = waiting if self._queued > 0 else 0
            if self.store is not None and self.run_id:
                self.store.set_fields(self.run_id, llm_queued=shown)

    @property
    def replaying(self) -> bool:
        return bool(self.cassette and self.cassette.mode == "replay")

    def call(
        self,
        spec: StepSpec,
        *,
        messages: list[dict[str, Any]],
        response_format: Any = None,
        tools: list[dict[str, Any]] | None = None,
        semantic: str = "",
        tool_tokens: int = 0,
        max_tokens: int | None = None,
    ) -> client.CallResult:
        """One accounted call of the step ``spec`` (``research.engines.steps``) to its role's
        model, its reply bounded by ``max_tokens`` (tokens; default the step's
        ``spec.max_tokens``). ``semantic``: the cassette key (``spec.cassette_key``; default the
        step name).

        Raises:
            BudgetExhausted: a cap is reached (no request was sent).
            LLMError: the call failed after retries (its retries are still counted).
        """
        reason = self.budget.exhausted()
        if reason:
            raise BudgetExhausted(f"LLM budget exhausted: {reason}")
        model, step = self.models[spec.role], spec.name
        messages = self.with_context(messages)
        request = {
            "model": model,
            "messages": messages,
            "response_format": _schema(response_format),
            "tools": tools or None,
        }
        if self.cassette is not None and self.replaying:
            result = self.cassette.replay(request, semantic or step)
            self.accountant.record(
                spec,
                model=model,
                messages=messages,
                result=result,
                tool_tokens=tool_tokens,
                replayed=True,
            )
            return result
        try:
            result = client.complete(
                model,
                messages,
                response_format=response_format,
                tools=tools,
                max_tokens=max_tokens or spec.max_tokens,
                on_wait=self._on_wait,
                api_key=api_key_for(model),
            )
        except LLMError as exc:
            self.accountant.record(
                spec,
                model=model,
                messages=messages,
                result=None,
                retries=getattr(exc, "retries", 0),
                error=exc.code,
            )
            raise
        self.accountant.record(
            spec,
            model=model,
            messages=messages,
            result=result,
            retries=result.retries,
            tool_tokens=tool_tokens,
        )
        if self.cassette:
            self.cassette.record(request, semantic or step, result)
        return result
