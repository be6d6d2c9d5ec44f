"""Settings from the environment and ``.streamlit/secrets.toml``.

Secrets (API keys) are read here and only here; they are never stored in Redis, run files,
artifacts, logs or exports. ``Settings.public()`` is the only view that leaves this module.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_CORPUS = REPO_ROOT.parent / "shared" / "data" / "corpus" / "docs.jsonl"


def _secrets() -> dict:
    path = REPO_ROOT / ".streamlit" / "secrets.toml"
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _get(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    if value:
        return value
    value = _secrets().get(name)
    return str(value) if value not in (None, "") else default


@dataclass(frozen=True)
class Settings:
    """Resolved settings.

    Attributes:
        data_dir: root of all state (``RESEARCH_DATA_DIR``, default ``./data``).
        redis_url: ``REDIS_URL`` or None (then the embedded server is used).
        default_corpus: ``RESEARCH_CORPUS`` or the shared corpus when present, else
            ``{data_dir}/corpus`` (a folder of documents).
        llm_model: ``RESEARCH_LLM_MODEL`` (litellm model string) or None → extractive engine.
    """

    data_dir: Path
    redis_url: str | None
    default_corpus: Path
    llm_model: str | None = None
    _secret_names: tuple[str, ...] = field(default=(), repr=False)

    @property
    def artifacts_root(self) -> Path:
        """``{data_dir}/research_artifacts`` (DESIGN.md, Artifacts on disk)."""
        return self.data_dir / "research_artifacts"

    @property
    def index_dir(self) -> Path:
        """Where local-corpus search indexes are cached: ``RESEARCH_INDEX_DIR`` or
        ``{data_dir}/indexes`` (tests share one across the session)."""
        override = _get("RESEARCH_INDEX_DIR")
        return Path(override).expanduser().resolve() if override else self.data_dir / "indexes"

    @property
    def reports_dir(self) -> Path:
        return self.data_dir / "reports"

    def public(self) -> dict:
        """Settings safe to show or store (no secrets)."""
        return {
            "data_dir": str(self.data_dir),
            "redis": "external" if self.redis_url else "embedded",
            "default_corpus": str(self.default_corpus),
            "llm_model": self.llm_model,
        }


def load_settings() -> Settings:
    """Read settings now (cheap; call again after changing the environment)."""
    data_dir = Path(_get("RESEARCH_DATA_DIR", "data")).expanduser().resolve()
    corpus_env = _get("RESEARCH_CORPUS")
    if corpus_env:
        corpus = Path(corpus_env).expanduser().resolve()
    elif SHARED_CORPUS.is_file():
        corpus = SHARED_CORPUS
    else:
        corpus = data_dir / "corpus"
    return Settings(
        data_dir=data_dir,
        redis_url=_get("REDIS_URL"),
        default_corpus=corpus,
        llm_model=_get("RESEARCH_LLM_MODEL"),
    )
