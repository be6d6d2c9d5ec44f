"""Input checks for the LLM options of a run (``jobs.make_config``)."""

from __future__ import annotations

import math
from typing import Any

from research.errors import InputError
from research.llm.models import ROLES


def parse_models(text: str | None) -> dict[str, str]:
    """``"planner=openai/gpt-4o,expert=openai/gpt-4o-mini"`` → dict. Raises InputError."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        role, sep, model = part.partition("=")
        role, model = role.strip(), model.strip()
        if not sep or not role or not model:
            raise InputError(
                f"--models expects role=model pairs separated by commas; got '{part.strip()[:60]}'."
            )
        out[role] = model
    return out


def validate_llm_options(
    engine: str, models: dict[str, str] | None, budget_usd: Any, budget_tokens: Any
) -> dict[str, Any]:
    """RunConfig fields ``models``, ``budget_usd`` (USD ≥ 0), ``budget_tokens`` (≥ 0).

    Raises:
        InputError: unknown role, empty model, negative/non-numeric budget, models without
            ``engine="litellm"``.
    """
    models = {str(k).strip(): str(v).strip() for k, v in (models or {}).items() if str(v).strip()}
    bad = set(models) - set(ROLES) - {"*"}
    if bad:
        raise InputError(f"Unknown model role(s) {sorted(bad)}; roles are {', '.join(ROLES)}.")
    if models and engine != "litellm":
        raise InputError(
            "Models are only used by the litellm engine; add --engine litellm (or drop --model)."
        )
    out: dict[str, Any] = {"models": models}
    if budget_usd not in (None, ""):
        try:
            value = float(budget_usd)
        except (TypeError, ValueError) as exc:
            raise InputError(f"The USD budget must be a number, got '{budget_usd}'.") from exc
        if not math.isfinite(value) or value < 0:
            raise InputError(f"The USD budget must be ≥ 0, got {budget_usd}.")
        out["budget_usd"] = value
    if budget_tokens not in (None, ""):
        try:
            tokens = int(budget_tokens)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"The token budget must be a whole number, got '{budget_tokens}'."
            ) from exc
        if tokens < 0:
            raise InputError(f"The token budget must be ≥ 0, got {budget_tokens}.")
        out["budget_tokens"] = tokens
    return out
