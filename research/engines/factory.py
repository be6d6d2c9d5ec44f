"""Pick the engine for a run config (DESIGN.md, Engines)."""

from __future__ import annotations

from research.engines.base import Engine
from research.errors import InputError
from research.models import RunConfig


def make_engine(config: RunConfig, run_id: str | None = None, store=None, settings=None) -> Engine:
    """The extractive engine (offline default) or the litellm engine (issue 3).

    ``run_id``/``store``/``settings``: the run being executed; the litellm engine accounts its
    calls, budget and ``llm_calls.jsonl`` there (None → standalone, in-memory accounting).

    Raises:
        InputError: for an engine this build does not have, or a litellm role without a model.
    """
    if config.engine == "extractive":
        from research.engines.extractive import ExtractiveEngine  # noqa: PLC0415 - heavy deps

        return ExtractiveEngine()
    if config.engine == "litellm":
        from research.engines.litellm import LiteLLMEngine  # noqa: PLC0415 - heavy deps

        return LiteLLMEngine(config, run_id, store, settings)
    raise InputError(f"Engine '{config.engine}' is not available in this build; use 'extractive' or 'litellm'.")


def engine_label(config: RunConfig) -> str:
    """What the UI shows for a config's engine: "offline extractive mode" or
    "litellm (openai/gpt-4o-mini)" (model names only, never keys)."""
    if config.engine == "extractive":
        return "offline extractive mode"
    from research.engines.litellm.engine import engine_label as llm_label  # noqa: PLC0415
    from research.llm.models import resolve_models  # noqa: PLC0415

    try:
        return llm_label(resolve_models(config.models))
    except InputError:
        return config.engine


def check_engine(config: RunConfig) -> None:
    """Validate a config's engine before a run starts (``jobs.make_config``).

    Raises:
        InputError: a role without a model, an unknown model, a model without a price, or a
            missing provider key (not checked when replaying a cassette: no network is used).
    """
    if config.engine != "litellm":
        return
    import os  # noqa: PLC0415

    from research.llm.models import check_model, resolve_models  # noqa: PLC0415

    replay = bool(os.environ.get("RESEARCH_LLM_REPLAY"))
    for model in dict.fromkeys(resolve_models(config.models).values()):
        check_model(model, need_key=not replay)
