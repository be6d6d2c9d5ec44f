"""The litellm engine: every pipeline step through any litellm model (issue 3)."""

from research.engines.litellm.engine import LiteLLMEngine

__all__ = ["LiteLLMEngine"]
