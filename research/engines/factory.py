"""Pick the engine for a run config (DESIGN.md, Engines)."""

from __future__ import annotations

from research.engines.base import Engine
from research.errors import InputError
from research.models import RunConfig


def make_engine(config: RunConfig) -> Engine:
    """The extractive engine (offline default) or, once available, the litellm engine.

    Raises:
        InputError: for an engine this build does not have.
    """
    if config.engine == "extractive":
        from research.engines.extractive import ExtractiveEngine  # noqa: PLC0415 - heavy deps

        return ExtractiveEngine()
    raise InputError(f"Engine '{config.engine}' is not available in this build; use 'extractive'.")
