"""litellm, imported once on first use: importing it takes ~5 s (its provider and price tables),
which the dashboard, the CLI and the offline extractive engine should not pay before an LLM call.
Every module that needs litellm gets it from ``litellm_module()``; this is its one lazy import."""

from __future__ import annotations

from functools import cache
from types import ModuleType


@cache
def litellm_module() -> ModuleType:
    """The ``litellm`` module, imported on the first call (later calls return the same module)."""
    import litellm  # noqa: PLC0415 - litellm takes ~5 s to import; loaded on the first LLM call

    return litellm
