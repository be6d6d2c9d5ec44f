"""A lean litellm run: cached prompt tokens recorded and shown, prompts with their static part
first, the compressor on the run model's cheaper sibling, and a start-up that imports no heavy
library before the run exists. Real litellm, real HTTP to the loopback server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

from research.cli import commands as cli
from research.devtools.loopback_llm import LoopbackLLM
from research.engines.litellm import prompts
from research.engines.steps import step
from research.llm.models import resolve_models
from tests.llm_fixtures import MODEL

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "Trastuzumab in HER2-positive breast cancer"


def test_cached_prompt_tokens_reach_show_json_and_the_cost_page(
    llm_env, data_dir, r, finished_corpus, capsys, monkeypatch
):
    srv = LoopbackLLM(cache_min_tokens=0, cache_block_tokens=1).start()
    try:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        code = cli.main(
            [
                "run",
                TOPIC,
                "--corpus",
                str(finished_corpus),
                "--template",
                "drug",
                "--engine",
                "litellm",
                "--model",
                MODEL,
                "--max-perspectives",
                "2",
                "--max-turns",
                "1",
                "--json",
            ]
        )
    finally:
        srv.stop()
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    assert code == 0
    assert cli.main(["show", run_id, "--json"]) == 0
    snap = json.loads(capsys.readouterr().out)
    cached = snap["usage"]["cached_prompt_tokens"]
    assert cached == snap["llm"]["cached_prompt_tokens"] == srv.cached_tokens > 0
    assert cached < snap["usage"]["prompt_tokens"]
    assert sum(v.get("cached_prompt_tokens", 0) for v in snap["llm"]["by_step"].values()) == cached
    assert snap["llm"]["models_by_role"]["compressor"] == [MODEL]

    at = AppTest.from_file(str(ROOT / "app_pages" / "cost.py"), default_timeout=60)
    at.query_params["run"] = run_id
    at.run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Cached tokens"] == f"{cached:,}"
    assert any(f"Summary cards made by {MODEL}" in c.value for c in at.caption)


def test_static_instructions_and_schema_come_before_the_material():
    spec = step("compress")
    schema = {"type": "object", "properties": {"summary": {"type": "string"}}}
    for native in (True, False):
        system, user = prompts.render(
            spec, {"raw_output": "RUN MATERIAL"}, None if native else schema, native=native
        )
        assert "RUN MATERIAL" not in system["content"]
        assert user["content"].rstrip().endswith("</material>")  # the run's material last
        assert ("Return {" in system["content"]) is (not native)
        assert "Return {" not in user["content"]
    # two calls of one step share their whole system prompt: a provider's cacheable prefix
    a = prompts.render(spec, {"raw_output": "one"}, native=True)
    b = prompts.render(spec, {"raw_output": "two"}, native=True)
    assert a[0] == b[0]


def test_compressor_takes_the_cheaper_sibling_unless_told(monkeypatch, data_dir):
    for name in (
        "RESEARCH_LLM_MODEL",
        "RESEARCH_LLM_CHEAP_MODEL",
        "RESEARCH_MODEL_COMPRESSOR",
        "RESEARCH_MODEL_PRICES",
    ):
        monkeypatch.setenv(name, "")
    m = resolve_models({"*": "openai/gpt-4o"})
    assert m["compressor"] == "openai/gpt-4o-mini" and m["writer"] == m["expert"] == "openai/gpt-4o"
    assert resolve_models({"*": "openai/gpt-4.1"})["compressor"] == "openai/gpt-4.1-mini"
    assert resolve_models({"*": MODEL})["compressor"] == MODEL  # no cheaper gpt-4o-mini sibling
    assert resolve_models({"*": "ollama/llama3"})["compressor"] == "ollama/llama3"  # not in the map
    # overridable per role, as before
    told = {"*": "openai/gpt-4o", "compressor": "openai/gpt-4o"}
    assert resolve_models(told)["compressor"] == "openai/gpt-4o"
    monkeypatch.setenv("RESEARCH_LLM_MODEL", "openai/gpt-4o")
    assert resolve_models()["compressor"] == "openai/gpt-4o-mini"
    monkeypatch.setenv("RESEARCH_MODEL_COMPRESSOR", "openai/gpt-4.1-nano")
    assert resolve_models()["compressor"] == "openai/gpt-4.1-nano"
    monkeypatch.setenv("RESEARCH_MODEL_COMPRESSOR", "")
    monkeypatch.setenv("RESEARCH_LLM_CHEAP_MODEL", "openai/gpt-4o")
    assert resolve_models()["compressor"] == "openai/gpt-4o"


PROBE = """
import json, sys
from research import jobs
from research.engines.factory import engine_label
from research.cli import commands
cfg = jobs.make_config({topic!r}, corpus={corpus!r}, template="drug", engine={engine!r},
                       **({{"models": {{"*": "openai/gpt-4o-mini"}}}} if {engine!r} == "litellm" else {{}}))
engine_label(cfg)
print(json.dumps(sorted(m for m in ("litellm", "sklearn", "torch", "sentence_transformers",
                                     "scipy", "pandas") if m in sys.modules)))
"""


def test_nothing_heavy_is_imported_before_a_run_is_created(finished_corpus, tmp_path):
    """Everything ``research run`` does before ``create_run`` (validation, config, the engine's
    label, key and price checks) imports neither litellm nor scikit-learn, torch or
    sentence-transformers, for either engine: they load where the run first needs them."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "RESEARCH_DATA_DIR": str(tmp_path),
        "OPENAI_API_KEY": "sk-probe",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HF_HUB_OFFLINE": "1",
    }
    for engine in ("litellm", "extractive"):
        code = PROBE.format(topic=TOPIC, corpus=str(finished_corpus), engine=engine)
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr[-2000:]
        assert json.loads(out.stdout.strip().splitlines()[-1]) == [], (engine, out.stdout)
