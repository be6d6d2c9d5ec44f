"""Token counting for context accounting (docs/design.md § Context reduction: context reduction).

Uses tiktoken's ``cl100k_base`` from the encodings bundled inside litellm (no network:
``TIKTOKEN_CACHE_DIR`` points there), loaded once. Units: tokens.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import tiktoken

from research.config import set_library_default


def _litellm_tokenizer_dir() -> str | None:
    spec = importlib.util.find_spec("litellm")
    if not spec or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
    return str(path) if path.is_dir() else None


@functools.lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    bundled = _litellm_tokenizer_dir()
    if bundled:
        set_library_default("TIKTOKEN_CACHE_DIR", bundled)

    return tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in ``text`` (0 for empty)."""
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))
