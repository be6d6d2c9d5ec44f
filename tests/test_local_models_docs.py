"""The "Local models" docs page: every server's settings, read from the page, make a local model
that is free, needs no key and gets one slot (or the concurrency the page sets); the llama.cpp
server command is the one the real-model tests start; the page is in the site and the README.
No request is sent: the page's addresses are only classified."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from research.engines.base import QueryList
from research.engines.litellm.structured import JSON_OBJECT_PROVIDERS, native_schema, reply_format
from research.llm import local, slots
from research.llm.models import api_key_for, check_model, free_local, price_per_token
from tests.real_model import SERVER_FLAGS

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "local-models.md"
SERVERS = ("llama.cpp's server", "Ollama", "LM Studio", "vLLM")
BLOCK_RE = re.compile(r"```bash\n(.*?)```", re.S)


def sections() -> dict[str, str]:
    """``{heading: text}`` of the page's ``##`` sections."""
    parts = re.split(r"^## (.+)$", PAGE.read_text(encoding="utf-8"), flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def settings(text: str) -> tuple[dict[str, str], str]:
    """The ``export VAR=VALUE`` lines and the ``--model`` of a section's bash blocks."""
    env, model = {}, ""
    for block in BLOCK_RE.findall(text):
        for line in block.splitlines():
            words = shlex.split(line)
            if words[:1] == ["export"]:
                name, _, value = words[1].partition("=")
                env[name] = value
            if "--model" in words and words[0] == "research":
                model = words[words.index("--model") + 1]
    return env, model


@pytest.fixture()
def clean_env(monkeypatch):
    for name in {v for vs in local.API_BASE_VARS.values() for v in vs} | {
        "OPENAI_API_KEY",
        "RESEARCH_LLM_CONCURRENCY",
        "RESEARCH_MODEL_PRICES",
    }:
        monkeypatch.setenv(name, "")
    return monkeypatch


@pytest.mark.parametrize("server", SERVERS)
def test_each_server_settings_make_a_free_local_model(server, clean_env):
    env, model = settings(sections()[server])
    assert model and env, f"{server}: no --model or export in the page"
    for name, value in env.items():
        clean_env.setenv(name, value)
    assert local.is_local(model), (server, model, env)
    base = local.api_base(model)
    assert base is None or local.local_url(base), base
    assert price_per_token(model) == (0.0, 0.0) and free_local(model)
    check_model(model)  # no key, no price set: accepted
    assert api_key_for(model) == "no-key"
    expected = int(env.get("RESEARCH_LLM_CONCURRENCY", slots.LOCAL_CONCURRENCY))
    assert slots.limit(model) == expected
    fmt = reply_format(model, QueryList, QueryList.model_json_schema())
    if local.provider_prefix(model) in JSON_OBJECT_PROVIDERS and not native_schema(model):
        assert fmt == {"type": "json_object", "schema": QueryList.model_json_schema()}


def test_the_json_object_providers_are_the_pages():
    text = sections()["What changes for a local model"]
    para = text[text.index("**JSON held to the schema.**") :].split("\n- ")[0]
    named = set(re.findall(r"`([a-z_]+)/`", para))
    assert named == set(JSON_OBJECT_PROVIDERS)


def test_llama_cpp_command_is_the_one_the_tests_run():
    text = sections()["llama.cpp's server"]
    line = next(
        ln for b in BLOCK_RE.findall(text) for ln in b.splitlines() if "llama_cpp.server" in ln
    )
    words = shlex.split(line)
    for flag, value in SERVER_FLAGS.items():
        assert flag in words and words[words.index(flag) + 1] == value, (flag, line)


def test_hosted_and_public_endpoints_are_not_local(clean_env):
    assert not local.is_local("openai/gpt-4o-mini")
    clean_env.setenv("OPENAI_API_BASE", "https://api.example.com/v1")
    assert not local.is_local("openai/smollm2")
    for url in ("http://127.0.0.1:8080/v1", "http://localhost:1/v1", "http://[::1]:8/v1"):
        assert local.local_url(url), url
    for url in ("http://10.1.2.3/v1", "http://192.168.0.9:11434", "http://ollama:11434"):
        assert local.local_url(url), url
    assert not local.local_url("https://8.8.8.8/v1") and not local.local_url("not a url")
    # a name litellm prices keeps its price on a local address (a proxy still bills)
    clean_env.setenv("OPENAI_API_BASE", "http://127.0.0.1:9/v1")
    assert price_per_token("openai/gpt-4o-mini")[0] > 0
    clean_env.setenv("RESEARCH_MODEL_PRICES", '{"openai/smollm2": [1, 2]}')
    assert price_per_token("openai/smollm2") == (1e-6, 2e-6) and not free_local("openai/smollm2")


def test_page_is_in_the_site_nav_and_the_readme():
    assert "local-models.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "(docs/local-models.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
