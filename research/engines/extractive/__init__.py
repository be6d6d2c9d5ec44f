"""The offline extractive engine: every pipeline step from embeddings and text statistics,
no language model and no key (docs/design.md § Engines). Labelled "offline extractive mode".

``ExtractiveEngine`` is loaded on first access (PEP 562): its modules import scikit-learn
(~3 s on 2 cores), and the package's light modules (``text``, ``vectors``) are read by every
engine's report pipeline and by the Co-STORM mind map, before any run starts.
"""

from typing import Any

__all__ = ["ExtractiveEngine"]


def __getattr__(name: str) -> Any:
    if name == "ExtractiveEngine":
        from research.engines.extractive.engine import ExtractiveEngine  # noqa: PLC0415 - scikit-learn loads with the engine, on first use

        return ExtractiveEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
