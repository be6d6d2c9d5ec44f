"""Pick the engine for a run config (docs/design.md § Engines)."""

from __future__ import annotations

from typing import Any

from research.config import load_settings
from research.engines.base import Engine
from research.engines.costorm_steps import CoStormSteps
from research.engines.labels import OFFLINE_LABEL
from research.engines.litellm import LiteLLMEngine
from research.engines.litellm.costorm import LiteLLMCoStorm
from research.engines.litellm.engine import engine_label as llm_label
from research.errors import InputError
from research.llm.models import check_model, resolve_models
from research.models import RunConfig


def make_engine(config: RunConfig, run_id: str | None = None, store=None, settings=None) -> Engine:
    """The extractive engine (offline default) or the litellm engine.

    ``run_id``/``store``/``settings``: the run being executed; the litellm engine accounts its
    calls, budget and ``llm_calls.jsonl`` there (None → standalone, in-memory accounting).

    Raises:
        InputError: for an engine this build does not have, or a litellm role without a model.
    """
    if config.engine == "extractive":
        from research.engines.extractive import ExtractiveEngine  # noqa: PLC0415 - scikit-learn loads with the engine, only for a run that uses it

        return ExtractiveEngine()
    if config.engine == "litellm":
        return LiteLLMEngine(config, run_id, store, settings)
    raise InputError(
        f"Engine '{config.engine}' is not available in this build; use 'extractive' or 'litellm'."
    )


def engine_label(config: RunConfig) -> str:
    """What the UI shows for a config's engine: "offline extractive mode" or
    "litellm (openai/gpt-4o-mini)" (model names only, never keys)."""
    if config.engine == "extractive":
        return OFFLINE_LABEL

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

    replay = bool(config.cassette_replay or load_settings().llm_replay)
    for model in dict.fromkeys(resolve_models(config.models).values()):
        check_model(model, need_key=not replay)


def costorm_steps(engine: Any) -> CoStormSteps:
    """The Co-STORM steps for a run's engine.

    An engine that implements ``CoStormSteps`` itself is returned as is; the extractive engine
    gets ``ExtractiveCoStorm`` (sharing its embedding cache); the litellm engine gets
    ``LiteLLMCoStorm``.

    Raises:
        research.errors.InputError: no Co-STORM implementation for this engine.
    """
    if isinstance(engine, CoStormSteps):
        return engine
    name = getattr(engine, "name", "")
    if name == "extractive":
        from research.engines.extractive.costorm import ExtractiveCoStorm  # noqa: PLC0415 - scikit-learn, only for a Co-STORM run

        return ExtractiveCoStorm(getattr(engine, "vectors", None))
    if name == "litellm":
        return LiteLLMCoStorm(engine)
    raise InputError(f"Co-STORM mode has no steps for engine {name!r}.", code="costorm_unsupported")
