"""The litellm engine: every pipeline step through any litellm model."""

from research.engines.litellm.engine import LiteLLMEngine

__all__ = ["LiteLLMEngine"]
