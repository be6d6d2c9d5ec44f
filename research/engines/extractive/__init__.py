"""The offline extractive engine: every pipeline step from embeddings and text statistics,
no language model and no key (DESIGN.md, Engines). Labelled "offline extractive mode"."""

from research.engines.extractive.engine import ExtractiveEngine

__all__ = ["ExtractiveEngine"]
