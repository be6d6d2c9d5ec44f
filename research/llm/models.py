"""Model per role, prices and key checks.

Roles: planner, question_asker, expert, compressor, outline, writer, polish. A role's model is,
first found: ``RunConfig.models[role]``, ``RunConfig.models["*"]``, env/secrets
``RESEARCH_MODEL_<ROLE>`` (e.g. ``RESEARCH_MODEL_EXPERT``), for the conversation roles
(question_asker, expert, compressor) ``RESEARCH_LLM_CHEAP_MODEL``, then ``RESEARCH_LLM_MODEL``.
Values are litellm model strings (``openai/gpt-4o-mini``, ``anthropic/claude-3-5-haiku-latest``,
``ollama/llama3``...). Keys are never resolved here: litellm reads the provider's env var
(``OPENAI_API_KEY``, ``OPENAI_API_BASE``...) at call time.

Prices: litellm's price table; for models it does not price, ``RESEARCH_MODEL_PRICES`` (env or
secrets), JSON ``{"model": {"input_cost_per_token": USD, "output_cost_per_token": USD}}`` or
``{"model": [USD per 1M input tokens, USD per 1M output tokens]}``. No price → PriceError.
"""

from __future__ import annotations

import json

from research.config import _get, in_environment
from research.errors import InputError
from research.llm.lib import litellm_module

ROLES = ("planner", "question_asker", "expert", "compressor", "outline", "writer", "polish")
CHEAP_ROLES = ("question_asker", "expert", "compressor")


class PriceError(InputError):
    """A model has no price in litellm's table nor in RESEARCH_MODEL_PRICES."""

    code = "no_price"


def resolve_models(models: dict[str, str] | None = None) -> dict[str, str]:
    """Role → model for every role (see module doc). Raises InputError naming what to set."""
    models = dict(models or {})
    unknown = set(models) - set(ROLES) - {"*"}
    if unknown:
        raise InputError(f"Unknown model role(s) {sorted(unknown)}; roles are {', '.join(ROLES)}.")
    out: dict[str, str] = {}
    for role in ROLES:
        model = (
            models.get(role)
            or models.get("*")
            or _get(f"RESEARCH_MODEL_{role.upper()}")
            or (_get("RESEARCH_LLM_CHEAP_MODEL") if role in CHEAP_ROLES else None)
            or _get("RESEARCH_LLM_MODEL")
        )
        if not model:
            raise InputError(
                f"No model for role '{role}'. Pass --model MODEL (e.g. openai/gpt-4o-mini) or "
                f"--models {role}=MODEL, or set RESEARCH_LLM_MODEL or RESEARCH_MODEL_{role.upper()}."
            )
        out[role] = model.strip()
    return out


def _config_prices() -> dict:
    raw = _get("RESEARCH_MODEL_PRICES")
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise InputError(f"RESEARCH_MODEL_PRICES is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InputError("RESEARCH_MODEL_PRICES must be a JSON object {model: {...}}.")
    return data


def price_per_token(model: str) -> tuple[float, float]:
    """(USD per input token, USD per output token) for ``model``.

    Source: ``RESEARCH_MODEL_PRICES`` when it names the model (an explicit override), else
    litellm's price table (``litellm.model_cost``). Raises PriceError when neither has it.
    """
    cfg = _config_prices()
    entry = cfg.get(model) or cfg.get(model.split("/", 1)[-1])
    if entry is not None:
        try:
            if isinstance(entry, (list, tuple)):
                return float(entry[0]) / 1e6, float(entry[1]) / 1e6
            return float(entry["input_cost_per_token"]), float(entry["output_cost_per_token"])
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise InputError(
                f'RESEARCH_MODEL_PRICES[{model!r}] must be {{"input_cost_per_token": USD, '
                f'"output_cost_per_token": USD}} or [USD/1M in, USD/1M out].'
            ) from exc
    litellm = litellm_module()

    try:
        p_in, p_out = litellm.cost_per_token(
            model=model, prompt_tokens=1_000_000, completion_tokens=1_000_000
        )
        return p_in / 1e6, p_out / 1e6
    except Exception:
        pass
    raise PriceError(
        f"No price known for model '{model}'. Set RESEARCH_MODEL_PRICES, e.g. "
        f"'{{\"{model}\": [0.15, 0.60]}}' (USD per 1M input, output tokens; [0, 0] for a free local model)."
    )


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """USD for one call: tokens × per-token prices (``price_per_token``)."""
    p_in, p_out = price_per_token(model)
    return prompt_tokens * p_in + completion_tokens * p_out


def check_model(model: str, *, need_key: bool = True) -> None:
    """Validate a model string before a run starts.

    Raises:
        InputError: unknown provider/model (says which option/env var to set), missing key
            (names the env var litellm wants), or PriceError.
    """
    litellm = litellm_module()

    try:
        _, provider, _, _ = litellm.get_llm_provider(model)
    except Exception as exc:
        raise InputError(
            f"Unknown model '{model}': litellm cannot tell its provider. Use 'provider/model' "
            "(e.g. openai/gpt-4o-mini) in --model / --models or RESEARCH_LLM_MODEL."
        ) from exc
    price_per_token(model)
    if need_key:
        env = litellm.validate_environment(model)
        missing = [k for k in env.get("missing_keys", []) if not _get(k)]
        if missing and not env.get("keys_in_environment"):
            raise InputError(
                f"Model '{model}' needs {', '.join(missing)} in the environment (or "
                f".streamlit/secrets.toml); it is read at call time and never stored."
            )


def api_key_for(model: str) -> str | None:
    """The provider key from ``.streamlit/secrets.toml`` when the env lacks it (call time only)."""
    litellm = litellm_module()

    env = litellm.validate_environment(model)
    for name in env.get("missing_keys", []):
        if not in_environment(name) and _get(name):
            return _get(name)
    return None
