"""Access. OIDC gates every page when configured; run ids are unguessable; the
artifact viewer stays inside the run's artifacts dir (see also test_bad_inputs); a canary API key
used by a real run (CLI subprocess → loopback LLM over HTTP, then export) appears in no Redis
value, no file under the data dir, no log line and no export.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from resilience_helpers import REPO, TOPIC, research_cmd, subprocess_env
from streamlit.testing.v1 import AppTest

from research.devtools.loopback_llm import LoopbackLLM
from research.store import keys
from research.store.runs import new_run_id

CANARY = "sk-canary-e7-9b1d4f2a6c8e0357"
AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "not-a-secret",
    "client_id": "research-desk",
    "client_secret": "not-a-secret",
    "server_metadata_url": "https://login.example.com/.well-known/openid-configuration",
}


def _app(monkeypatch) -> AppTest:
    monkeypatch.setenv("RESEARCH_AUTO_RESUME", "0")
    return AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60)


def test_oidc_configured_gates_every_page(data_dir, monkeypatch):
    at = _app(monkeypatch)
    at.secrets["auth"] = AUTH
    at.run()
    assert not at.exception
    assert [b.label for b in at.button] == ["Log in"]
    assert "Sign in" in at.info[0].value
    assert len(at.sidebar) == 0 or not any("Data dir" in str(c.value) for c in at.sidebar.caption)
    # st.navigation runs the entrypoint on every page request, so this gate precedes every page;
    # the default page (Launch) rendered nothing
    assert "Start run" not in [b.label for b in at.button] and not at.text_input


def test_without_oidc_the_app_opens(data_dir, monkeypatch):
    at = _app(monkeypatch)
    at.run()
    assert not at.exception
    assert "Log in" not in [b.label for b in at.button]


def test_run_ids_are_random_and_unguessable():
    ids = {new_run_id() for _ in range(5000)}
    assert len(ids) == 5000
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
    # bits are spread: every hex digit appears at every position across the sample
    assert all(len({i[p] for i in ids}) == 16 for p in range(16))
    for guess in ("1", "run1", "0" * 15, "../" + "a" * 16, "A" * 16):
        with pytest.raises(Exception, match="not a run id"):
            keys.check_run_id(guess)


def _all_redis_values(r) -> list[str]:
    out = []
    for key in r.keys("*"):
        kind = r.type(key)
        if kind == "string":
            out.append(r.get(key))
        elif kind == "hash":
            out += [f"{k}={v}" for k, v in r.hgetall(key).items()]
        elif kind == "list":
            out += r.lrange(key, 0, -1)
        elif kind == "set":
            out += list(r.smembers(key))
        elif kind == "zset":
            out += r.zrange(key, 0, -1)
        elif kind == "stream":
            out += [json.dumps(f) for _, f in r.xrange(key)]
        out.append(key)
    return out


@pytest.mark.slow
def test_canary_key_appears_nowhere(data_dir, redis_server, r, finished_corpus, tmp_path):
    with LoopbackLLM() as llm:
        env = subprocess_env(
            data_dir,
            redis_server,
            OPENAI_API_KEY=CANARY,
            OPENAI_API_BASE=llm.url,
            LITELLM_LOG="DEBUG",
            RESEARCH_LLM_BACKOFF_S="0.01",
        )
        run = subprocess.run(
            research_cmd(
                "run",
                TOPIC,
                "--corpus",
                str(finished_corpus),
                "--template",
                "drug",
                "--engine",
                "litellm",
                "--model",
                "openai/gpt-4o-mini",
                "--max-perspectives",
                "1",
                "--max-turns",
                "1",
                "--json",
            ),
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        assert llm.stats()["ok"] > 5  # the key was really used for HTTP calls
        summary = json.loads(run.stdout.strip().splitlines()[-1])
        out = tmp_path / "export"
        logs = [run.stdout, run.stderr]
        for fmt in ("md", "zip"):
            ex = subprocess.run(
                research_cmd("export", summary["run_id"], "--format", fmt, "--out", f"{out}.{fmt}"),
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            logs += [ex.stdout, ex.stderr]
            assert ex.returncode == 0, ex.stderr[-2000:]
            assert CANARY.encode() not in (tmp_path / f"export.{fmt}").read_bytes()
    for text in logs:
        assert CANARY not in text
    assert not [v for v in _all_redis_values(r) if CANARY in str(v)]
    files = [p for p in data_dir.rglob("*") if p.is_file()]
    assert files and not [p for p in files if CANARY.encode() in p.read_bytes()]
