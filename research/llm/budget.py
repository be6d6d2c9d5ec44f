"""Per-run LLM budgets: ``RunConfig.budget_usd`` (USD) and ``budget_tokens``
(prompt + completion tokens). Once a cap is reached no new call starts (calls in flight
finish); the engine then answers the remaining steps without an LLM (extractive fallback), the
run writes its report and ends ``complete`` with ``RunState.budget_exhausted = True``,
``stop_reason = "budget_exhausted"`` and one ``budget.exhausted`` event.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from research.llm.accounting import Accountant


class Budget:
    """Caps checked against an ``Accountant``'s totals. ``on_exhausted(reason)`` runs once."""

    def __init__(
        self,
        accountant: Accountant,
        budget_usd: float | None = None,
        budget_tokens: int | None = None,
        on_exhausted: Callable[[str], object] | None = None,
    ) -> None:
        self.accountant = accountant
        self.budget_usd, self.budget_tokens = budget_usd, budget_tokens
        self.on_exhausted = on_exhausted
        self._lock = threading.Lock()
        self.reason = ""

    def exhausted(self) -> str:
        """ "" while calls may start, else the reason (e.g. "budget_usd 0.01 reached ($0.0102)")."""
        with self._lock:
            if self.reason:
                return self.reason
            t = self.accountant.totals
            tokens = t["prompt_tokens"] + t["completion_tokens"]
            if self.budget_usd is not None and t["cost_usd"] >= self.budget_usd:
                self.reason = f"budget_usd {self.budget_usd:g} reached (${t['cost_usd']:.4f} spent)"
            elif self.budget_tokens is not None and tokens >= self.budget_tokens:
                self.reason = f"budget_tokens {self.budget_tokens} reached ({tokens} tokens used)"
            else:
                return ""
            reason = self.reason
        if self.on_exhausted:
            self.on_exhausted(reason)
        return reason
