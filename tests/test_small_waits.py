"""Small waits: run pages open the newest run when no ``?run=`` is given,
and the Launch form moves to the new run's Report page (its links stay on Launch)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from research.store.connection import get_redis
from research.store.runs import RunStore
from research.ui.citations import plain

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def app_env(finished_run):
    mp = pytest.MonkeyPatch()
    for k, v in finished_run.env().items():
        mp.setenv(k, v)
    mp.delenv("RESEARCH_LLM_MODEL", raising=False)
    mp.setenv("RESEARCH_PREINDEX", "0")
    mp.setenv("RESEARCH_AUTO_RESUME", "0")
    yield finished_run
    mp.undo()


def _store():

    return RunStore(get_redis())


def test_run_page_without_run_opens_the_newest(app_env):
    newest = _store().list_runs()[0]
    at = AppTest.from_file(str(ROOT / "app_pages" / "coverage.py"), default_timeout=60).run()
    assert not at.exception
    assert at.query_params["run"] == [newest.run_id] or at.query_params["run"] == newest.run_id
    assert not any("No run selected" in i.value for i in at.info)
    assert [h.value for h in at.header] == [plain(newest.topic)]


def test_launch_moves_to_the_report_page(app_env):
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60).run()
    assert not at.exception
    at.text_area[0].input("Cardiotoxicity of trastuzumab")
    at.text_input[0].input(str(app_env.corpus))
    at.number_input[0].set_value(1)
    at.number_input[1].set_value(1)
    at.button[0].click().run()
    assert not at.exception
    run_id = at.session_state["launched_run"]
    q = at.query_params["run"]
    assert (q[0] if isinstance(q, list) else q) == run_id
    assert [h.value for h in at.header] == [
        plain("Cardiotoxicity of trastuzumab")
    ]  # the Report page's header
    store = _store()
    deadline = time.monotonic() + 300
    while (
        store.get_run(run_id).status not in ("complete", "failed", "cancelled")
        and time.monotonic() < deadline
    ):
        time.sleep(0.5)  # the run executes in a server thread: let it end inside this module's env
    assert store.get_run(run_id).status == "complete"
