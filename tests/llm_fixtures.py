"""Fixtures for the litellm-engine tests: a loopback OpenAI-compatible server (real HTTP, real
litellm client) and an env that points ``openai/*`` models at it with a canary key.

Import in a test module with ``from tests.llm_fixtures import *  # noqa: F401,F403``.
"""

from __future__ import annotations

import pytest

from research.devtools.loopback_llm import LoopbackLLM

CANARY_KEY = "sk-canary-3f9a7c1e5d2b4a6089e1"
MODEL = "openai/gpt-4o-mini"


@pytest.fixture(scope="session")
def loopback_llm():
    """One loopback server for the session (default responder, no faults); counts reset per test."""
    srv = LoopbackLLM().start()
    yield srv
    srv.stop()


@pytest.fixture()
def llm_env(loopback_llm, monkeypatch, data_dir):
    """Env for a litellm run against the loopback server: key = the canary, fast retries."""
    loopback_llm.reset_counts()
    for name, value in {
        "OPENAI_API_KEY": CANARY_KEY,
        "OPENAI_API_BASE": loopback_llm.url,
        "RESEARCH_LLM_BACKOFF_S": "0.01",
        "RESEARCH_LLM_TIMEOUT_S": "1.5",
        "RESEARCH_LLM_MAX_ATTEMPTS": "8",
        "RESEARCH_LLM_CONCURRENCY": "4",
    }.items():
        monkeypatch.setenv(name, value)
    for name in (
        "RESEARCH_LLM_RECORD",
        "RESEARCH_LLM_REPLAY",
        "RESEARCH_LLM_MODEL",
        "RESEARCH_MODEL_PRICES",
    ):
        monkeypatch.setenv(
            name, ""
        )  # empty = unset; the CLI may set them and monkeypatch restores them
    return loopback_llm
