"""LLM options at the input gate: models per role, keys, prices, budgets (no network)."""

from __future__ import annotations

import httpx
import pytest

from research import jobs
from research.errors import InputError
from research.llm.errors import parse_retry_after
from research.llm.models import cost_usd, resolve_models
from research.llm.validate import parse_models
from research.search.http import MAX_RETRY_AFTER_S, retry_after_s


@pytest.fixture()
def env(monkeypatch, data_dir, corpus_path):
    for name in (
        "RESEARCH_LLM_MODEL",
        "RESEARCH_LLM_CHEAP_MODEL",
        "RESEARCH_MODEL_PRICES",
        "RESEARCH_LLM_REPLAY",
        *[f"RESEARCH_MODEL_{r.upper()}" for r in ("planner", "expert", "writer")],
    ):
        monkeypatch.setenv(name, "")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return corpus_path


def test_models_per_role_from_config_then_env(env, monkeypatch):
    monkeypatch.setenv("RESEARCH_LLM_MODEL", "openai/gpt-4o")
    monkeypatch.setenv("RESEARCH_LLM_CHEAP_MODEL", "openai/gpt-4o-mini")
    monkeypatch.setenv("RESEARCH_MODEL_WRITER", "openai/gpt-4.1")
    m = resolve_models({"planner": "openai/o3-mini"})
    assert m["planner"] == "openai/o3-mini" and m["writer"] == "openai/gpt-4.1"
    assert (
        m["expert"] == m["question_asker"] == "openai/gpt-4o-mini"
        and m["outline"] == "openai/gpt-4o"
    )
    assert parse_models("planner=a/b, writer=c/d") == {"planner": "a/b", "writer": "c/d"}
    with pytest.raises(InputError):
        parse_models("planner")


def test_make_config_errors_say_what_to_set(env, monkeypatch):
    with pytest.raises(InputError, match="RESEARCH_LLM_MODEL"):
        jobs.make_config("topic", corpus=env, engine="litellm")
    with pytest.raises(InputError, match="OPENAI_API_KEY"):
        jobs.make_config("topic", corpus=env, engine="litellm", models={"*": "openai/gpt-4o-mini"})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-0000")
    with pytest.raises(InputError, match="provider"):
        jobs.make_config("topic", corpus=env, engine="litellm", models={"*": "no-such-model-xyz"})
    with pytest.raises(InputError, match="RESEARCH_MODEL_PRICES"):
        jobs.make_config(
            "topic", corpus=env, engine="litellm", models={"*": "openai/my-private-finetune"}
        )
    monkeypatch.setenv("RESEARCH_MODEL_PRICES", '{"openai/my-private-finetune": [1.0, 2.0]}')
    cfg = jobs.make_config(
        "topic",
        corpus=env,
        engine="litellm",
        models={"*": "openai/my-private-finetune"},
        budget_usd="0.5",
        budget_tokens=1000,
    )
    assert (
        cfg.budget_usd == 0.5 and cfg.budget_tokens == 1000 and "sk-" not in cfg.model_dump_json()
    )
    assert cost_usd("openai/my-private-finetune", 1_000_000, 1_000_000) == pytest.approx(3.0)
    with pytest.raises(InputError, match="budget"):
        jobs.make_config(
            "topic", corpus=env, engine="litellm", models={"*": "openai/gpt-4o-mini"}, budget_usd=-1
        )
    with pytest.raises(InputError, match="role"):
        jobs.make_config(
            "topic", corpus=env, engine="litellm", models={"boss": "openai/gpt-4o-mini"}
        )


def test_retry_after_parsing():
    assert parse_retry_after("0.5") == 0.5 and parse_retry_after("7") == 7.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    # the search backends' HTTP layer uses the same parser, with its own 30 s cap

    assert (
        retry_after_s(httpx.Response(429, headers={"Retry-After": "soon"})) is None
    )  # before: ValueError
    assert retry_after_s(httpx.Response(429, headers={"Retry-After": "2.5"})) == 2.5
    assert retry_after_s(httpx.Response(429, headers={"Retry-After": "3600"})) == MAX_RETRY_AFTER_S
    assert retry_after_s(httpx.Response(429)) is None
