"""litellm's model map and the litellm module itself, each loaded in one place, when first needed.

* ``litellm()``: the ``litellm`` module, imported on first use (4–9 s of CPU on 2 cores; never on
  the path of an engine that makes no LLM call, nor before a run is created).
* ``model_info(model)``: the model's entry of the model map litellm ships
  (``model_prices_and_context_window_backup.json``, the map ``LITELLM_LOCAL_MODEL_COST_MAP=True``
  makes litellm use: prices in USD per token, capabilities), read as JSON without importing
  litellm (~40 ms).
* ``cheaper_sibling(model)``: the same model family's cheaper model when the map has one (e.g.
  ``gpt-4o`` → ``gpt-4o-mini``), the compressor's default model.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any, cast

MAP_FILE = "model_prices_and_context_window_backup.json"
SIBLING_SUFFIXES = ("-mini", "-nano", "-lite")  # cheaper members of a family, in order
PROVIDER_KEYS = {  # env var each provider's key is read from (litellm's names)
    "openai": "OPENAI_API_KEY",
    "text-completion-openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "xai": "XAI_API_KEY",
}


@functools.cache
def litellm() -> ModuleType:
    """The ``litellm`` module (imported on the first call; the one place the product imports it)."""
    import litellm as lib  # noqa: PLC0415 - 4–9 s import, only when a model is called

    lib.suppress_debug_info = True  # its "Give Feedback" banners print on stdout (--json)
    return lib


@functools.cache
def _table() -> dict[str, Any]:
    """litellm's bundled model map as a dict ({} when litellm is not installed)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.origin:
        return {}
    try:
        return cast(
            dict[str, Any],
            json.loads((Path(spec.origin).parent / MAP_FILE).read_text(encoding="utf-8")),
        )
    except (OSError, ValueError):
        return {}


def _names(model: str) -> list[str]:
    """Keys a model string may have in the map: as given, then without its provider prefix."""
    bare = model.split("/", 1)[-1]
    return [model] if bare == model else [model, bare]


def model_info(model: str) -> dict[str, Any] | None:
    """The map's entry for ``model`` (``provider/name`` or ``name``), or None when it has none."""
    table = _table()
    for name in _names(model.strip()):
        entry = table.get(name)
        if isinstance(entry, dict):
            return entry
    return None


def provider_of(model: str) -> str | None:
    """The model's provider from the map (``litellm_provider``), else its ``provider/`` prefix."""
    info = model_info(model)
    if info and info.get("litellm_provider"):
        return str(info["litellm_provider"])
    return model.split("/", 1)[0] if "/" in model else None


def _input_price(info: dict[str, Any]) -> float | None:
    value = info.get("input_cost_per_token")
    return float(value) if value is not None else None


def cheaper_sibling(model: str) -> str | None:
    """A cheaper chat model of the same family and provider in the map, or None: ``{name}-mini``,
    ``-nano`` or ``-lite`` (a ``-mini`` model's ``-nano``), which costs less per input token and
    supports JSON-schema replies when ``model`` does. The provider prefix is kept."""
    info = model_info(model)
    price = _input_price(info) if info else None
    if not info or price is None:
        return None
    prefix, _, name = model.rpartition("/")
    bases = [name]
    for suffix in SIBLING_SUFFIXES:
        if name.endswith(suffix):
            bases = [name[: -len(suffix)]]
            tried = SIBLING_SUFFIXES[SIBLING_SUFFIXES.index(suffix) + 1 :]
            break
    else:
        tried = SIBLING_SUFFIXES
    for suffix in tried:
        candidate = f"{bases[0]}{suffix}"
        other = model_info(f"{prefix}/{candidate}" if prefix else candidate)
        if not other or other.get("mode", "chat") != "chat":
            continue
        if other.get("litellm_provider") != info.get("litellm_provider"):
            continue
        if info.get("supports_response_schema") and not other.get("supports_response_schema"):
            continue
        other_price = _input_price(other)
        if other_price is not None and other_price < price:
            return f"{prefix}/{candidate}" if prefix else candidate
    return None
