"""Model per role, prices and key checks.

Roles: planner, question_asker, expert, compressor, outline, writer, polish. A role's model is,
first found: ``RunConfig.models[role]``, ``RunConfig.models["*"]``, env/secrets
``RESEARCH_MODEL_<ROLE>`` (e.g. ``RESEARCH_MODEL_EXPERT``), for the conversation roles
(question_asker, expert, compressor) ``RESEARCH_LLM_CHEAP_MODEL``, then ``RESEARCH_LLM_MODEL``.
The compressor, when its model comes from ``*`` or ``RESEARCH_LLM_MODEL`` (no model set for the
role itself), takes that model's cheaper sibling in litellm's model map when there is one
(``model_map.cheaper_sibling``: ``gpt-4o`` → ``gpt-4o-mini``): cards are extraction, not
reasoning. ``--models compressor=MODEL`` (or ``RESEARCH_MODEL_COMPRESSOR``) overrides it.
Values are litellm model strings (``openai/gpt-4o-mini``, ``anthropic/claude-3-5-haiku-latest``,
``ollama/llama3``...). Keys are never resolved here: litellm reads the provider's env var
(``OPENAI_API_KEY``, ``OPENAI_API_BASE``...) at call time.

Prices: ``RESEARCH_MODEL_PRICES`` (env or secrets) when it names the model, JSON
``{"model": {"input_cost_per_token": USD, "output_cost_per_token": USD}}`` or
``{"model": [USD per 1M input tokens, USD per 1M output tokens]}``; else litellm's price table;
else, for a local model (``research.llm.local.is_local``: a local provider prefix or an endpoint
on this machine or a private network), zero. No price for a hosted model → PriceError. A name
litellm prices keeps its price on a local address (a local proxy to a hosted model still bills).
Keys: a local model needs none (``api_key_for`` hands litellm a placeholder when none is set).
"""

from __future__ import annotations

import json
from typing import Any

from research.config import env_value, in_environment
from research.errors import InputError
from research.llm.local import is_local, provider_prefix
from research.llm.model_map import PROVIDER_KEYS, cheaper_sibling, litellm, model_info, provider_of

NO_KEY = "no-key"
"""The key sent to a local server when none is set: OpenAI-compatible clients refuse to send a
request without one, and local servers ignore it (not a secret)."""
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
        # the role's own model: named for it, or its env var when no "*" came first
        own = models.get(role) or (
            not models.get("*") and env_value(f"RESEARCH_MODEL_{role.upper()}")
        )
        model = (
            models.get(role)
            or models.get("*")
            or env_value(f"RESEARCH_MODEL_{role.upper()}")
            or (env_value("RESEARCH_LLM_CHEAP_MODEL") if role in CHEAP_ROLES else None)
            or env_value("RESEARCH_LLM_MODEL")
        )
        if role == "compressor" and model and not own and not _cheap_set(models):
            model = cheaper_sibling(model.strip()) or model
        if not model:
            raise InputError(
                f"No model for role '{role}'. Pass --model MODEL (e.g. openai/gpt-4o-mini) or "
                f"--models {role}=MODEL, or set RESEARCH_LLM_MODEL or RESEARCH_MODEL_{role.upper()}."
            )
        out[role] = model.strip()
    return out


def _cheap_set(models: dict[str, str]) -> bool:
    """True when ``RESEARCH_LLM_CHEAP_MODEL`` chose the compressor's model (no ``*`` above it)."""
    return not models.get("*") and bool(env_value("RESEARCH_LLM_CHEAP_MODEL"))


def _config_prices() -> dict[str, Any]:
    raw = env_value("RESEARCH_MODEL_PRICES")
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
    litellm's price table (``litellm.model_cost``), else (0, 0) for a local model
    (``research.llm.local.is_local``). Raises PriceError when none applies.
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
    info = model_info(model)
    if info and info.get("input_cost_per_token") is not None:
        return float(info["input_cost_per_token"]), float(info.get("output_cost_per_token") or 0)
    try:
        p_in, p_out = litellm().cost_per_token(
            model=model, prompt_tokens=1_000_000, completion_tokens=1_000_000
        )
        return p_in / 1e6, p_out / 1e6
    except Exception:
        pass
    if is_local(model):
        return 0.0, 0.0
    raise PriceError(
        f"No price known for model '{model}'. Set RESEARCH_MODEL_PRICES, e.g. "
        f"'{{\"{model}\": [0.15, 0.60]}}' (USD per 1M input, output tokens). A model served on "
        "this machine or a private network is free with no setting: point OPENAI_API_BASE (or "
        "the provider's *_API_BASE) at it, see docs/local-models.md."
    )


def free_local(model: str) -> bool:
    """True when ``model`` is local (``research.llm.local.is_local``) and priced at zero (no
    price set for it): the Cost page says "local model, no charge"."""
    return is_local(model) and price_per_token(model) == (0.0, 0.0)


def cost_usd(
    model: str, prompt_tokens: int, completion_tokens: int, cached_prompt_tokens: int = 0
) -> float:
    """USD for one call: tokens × per-token prices (``price_per_token``); the
    ``cached_prompt_tokens`` of ``prompt_tokens`` at the model's cache-read price when litellm's
    model map has one (``cache_read_input_token_cost``), else at the input price."""
    p_in, p_out = price_per_token(model)
    cached = min(max(0, cached_prompt_tokens), prompt_tokens)
    p_cached = cache_read_price(model) if cached else None
    if p_cached is None:
        p_cached = p_in
    return (prompt_tokens - cached) * p_in + cached * p_cached + completion_tokens * p_out


def cache_read_price(model: str) -> float | None:
    """USD per prompt token read from the provider's prompt cache (litellm's model map
    ``cache_read_input_token_cost``); None when unknown or overridden by RESEARCH_MODEL_PRICES."""
    cfg = _config_prices()
    if cfg.get(model) is not None or cfg.get(model.split("/", 1)[-1]) is not None:
        return None
    entry = model_info(model)
    value = entry.get("cache_read_input_token_cost") if entry else None
    return float(value) if value is not None else None


def check_model(model: str, *, need_key: bool = True) -> None:
    """Validate a model string before a run starts.

    Raises:
        InputError: unknown provider/model (says which option/env var to set), missing key
            (names the env var litellm wants), or PriceError.
    """
    provider = provider_of(model) if model_info(model) else None
    if is_local(model):  # a local server needs no key (api_key_for sends a placeholder)
        need_key = False
    if provider in PROVIDER_KEYS:  # a mapped model of a known provider: no litellm import
        price_per_token(model)
        key = PROVIDER_KEYS[provider]
        if need_key and not env_value(key):
            raise InputError(
                f"Model '{model}' needs {key} in the environment (or .streamlit/secrets.toml); "
                "it is read at call time and never stored."
            )
        return
    try:
        _, provider, _, _ = litellm().get_llm_provider(model)
    except Exception as exc:  # noqa: BLE001 - litellm raises many types for an unknown model
        raise InputError(
            f"Unknown model '{model}': litellm cannot tell its provider. Use 'provider/model' "
            "(e.g. openai/gpt-4o-mini) in --model / --models or RESEARCH_LLM_MODEL."
        ) from exc
    price_per_token(model)
    if need_key:
        env = litellm().validate_environment(model)
        missing = [k for k in env.get("missing_keys", []) if not env_value(k)]
        if missing and not env.get("keys_in_environment"):
            raise InputError(
                f"Model '{model}' needs {', '.join(missing)} in the environment (or "
                f".streamlit/secrets.toml); it is read at call time and never stored."
            )


def api_key_for(model: str) -> str | None:
    """The provider key from ``.streamlit/secrets.toml`` when the env lacks it (call time only);
    ``NO_KEY`` for a local model with no key set anywhere; else None (litellm reads the env)."""
    if is_local(model):
        prefix = provider_prefix(model)
        key = PROVIDER_KEYS.get(prefix, f"{prefix.upper()}_API_KEY")
        if in_environment(key):
            return None
        return env_value(key) or NO_KEY
    provider = provider_of(model) if model_info(model) else None
    if provider in PROVIDER_KEYS:
        key = PROVIDER_KEYS[provider]
        return env_value(key) if not in_environment(key) and env_value(key) else None
    env = litellm().validate_environment(model)
    for name in env.get("missing_keys", []):
        if not in_environment(name) and env_value(name):
            return env_value(name)
    return None
