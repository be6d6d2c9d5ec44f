"""Constants of the litellm-engine tests: the model name they use and the canary API key that
must never be written anywhere. The fixtures (``loopback_llm``, ``llm_env``) live in conftest.py.
"""

from __future__ import annotations

CANARY_KEY = "sk-canary-3f9a7c1e5d2b4a6089e1"
MODEL = "openai/gpt-4o-mini"
