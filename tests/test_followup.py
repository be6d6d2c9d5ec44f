"""Follow-up questions asked of a finished run, research-more, and the citation audit,
on the session's real extractive trastuzumab run (``finished_run``: its own redis-server)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import research.cli.commands as cli
from research import jobs
from research.citations import LOCAL_RE
from research.errors import InputError, RunNotFoundError
from research.followup import audit
from research.followup.ask import ask, audit_run
from research.followup.audit import SupportScorer, verdict
from research.followup.corpus import load_evidence
from research.models import Report, RunConfig
from research.store.collector import SourceCollector
from research.store.connection import get_redis
from research.store.followups import FollowupStore
from research.store.runs import RunStore
from research.store.server import EmbeddedRedis

pytestmark = pytest.mark.timeout(
    1800
)  # the session's finished run is built by the first test (2 shared cores)
ROOT = Path(__file__).resolve().parents[1]
LVEF = "Which trials monitored left ventricular ejection fraction?"


@pytest.fixture(scope="module")
def env(finished_env):
    """The finished run, with settings pointed at its Redis and data dir for this module."""
    return finished_env


@pytest.fixture(scope="module")
def store(env):
    """The finished run's store; its follow-ups and audit are removed after the module, so other
    modules sharing the session's run see it as it was."""

    s = RunStore(get_redis())
    yield s
    FollowupStore(s).clear(env.run_id)


@pytest.fixture(scope="module")
def lvef(env, store):
    """The LVEF follow-up, asked once for the module."""

    return ask(env.run_id, LVEF, store=store)


def _all_refs(store, run_id):

    return FollowupStore(store).references(run_id, store.get_doc(run_id, "report", Report))


def test_ask_answers_with_supported_citations(env, store, lvef):
    assert lvef.found and lvef.extractive and lvef.engine_label == "offline extractive mode"
    assert len(lvef.citations) >= 1
    numbers = {r.number: r for r in _all_refs(store, env.run_id)}
    assert sorted(numbers) == list(range(1, len(numbers) + 1))  # one reference list, 1..N

    cited = {int(n) for n in re.findall(r"\[(\d+)\]", lvef.answer)}
    assert cited == set(lvef.citations) and cited <= set(numbers)
    for ref in lvef.new_references:  # sources the report did not cite joined the references
        assert ref.number in cited
    assert lvef.audit and {c.verdict for c in lvef.audit} == {"supported"}
    assert {c.number for c in lvef.audit} == cited
    assert "ejection fraction" in lvef.answer.lower() or "lvef" in lvef.answer.lower()
    sentences = [s for s in re.split(r"(?<=\])\s+", lvef.answer) if s]
    assert 1 <= len(sentences) <= 6


def test_followup_is_stored_with_events_and_in_snapshot(env, store, lvef):

    stored = FollowupStore(store).list(env.run_id)
    assert lvef.id in [f.id for f in stored]
    types = [e.type for e in store.events(env.run_id)]
    assert "followup.asked" in types and "followup.answered" in types
    stored_before = FollowupStore(store).get_audit(env.run_id)
    snap = jobs.run_snapshot(env.run_id)
    json.dumps(snap)
    assert snap["audit"] == (stored_before.model_dump(mode="json") if stored_before else None)
    assert FollowupStore(store).get_audit(env.run_id) == stored_before  # a read computes nothing
    assert any(f["id"] == lvef.id and f["answer"] == lvef.answer for f in snap["followups"])

    audit = audit_run(env.run_id)  # computed and stored by `research audit` / the Report page
    assert jobs.run_snapshot(env.run_id)["audit"] == audit.model_dump(mode="json")
    assert audit.total >= 1


def test_report_audit_every_extractive_citation_supported(env, store):

    report = store.get_doc(env.run_id, "report", Report)
    audit = audit_run(env.run_id, store=store, refresh=True)
    body = " ".join([report.lead, *[s.text for s in report.sections]])
    assert audit.total >= len(
        set(LOCAL_RE.findall(body))
    )  # every reference is checked at least once
    assert audit.supported == audit.total, [
        c.model_dump() for c in audit.checks if c.verdict != "supported"
    ][:3]
    assert audit.line().startswith(f"{audit.total} of {audit.total} citations supported")
    assert all(c.passage for c in audit.checks)


def test_audit_verdicts_separate_right_and_wrong_sources(env, store):
    """A sentence against its own source scores supported; against an unrelated source not."""

    docs = [
        d for d in load_evidence(store, env.run_id) if d.from_artifact and len(d.sentences()) >= 3
    ]
    assert len(docs) >= 2
    scorer = SupportScorer()
    sentence = docs[0].sentences()[1]
    assert verdict(scorer.score(sentence, docs[0]).score) == "supported"
    # the unrelated source: the lowest-scoring of the three sources sharing the fewest words with
    # the sentence (scoring every source embeds all their passages: a whole audit's MiniLM work)
    words = set(sentence.lower().split())
    unrelated = sorted(docs[1:], key=lambda d: len(words & set(d.text.lower().split())))[:3]
    far = min(unrelated, key=lambda d: scorer.score(sentence, d).score)
    assert verdict(scorer.score(sentence, far).score) != "supported"


@pytest.mark.parametrize(
    "question, code",
    [("", "invalid_question"), ("   ", "invalid_question"), ("why " * 1250, "invalid_question")],
)
def test_bad_questions_store_nothing(env, store, question, code):

    before = (len(FollowupStore(store).list(env.run_id)), len(store.events(env.run_id)))
    with pytest.raises(InputError) as exc:
        ask(env.run_id, question, store=store)
    assert exc.value.code == code and exc.value.message
    assert (len(FollowupStore(store).list(env.run_id)), len(store.events(env.run_id))) == before


def test_unknown_failed_and_cancelled_runs_are_refused(env, store):

    with pytest.raises(RunNotFoundError):
        ask("0123456789abcdef", LVEF, store=store)
    with pytest.raises(InputError):
        ask("not-a-run", LVEF, store=store)
    for status in ("failed", "cancelled"):
        state = store.create_run(RunConfig(topic=f"a {status} run"))
        store.set_status(state.run_id, status, error="stopped", error_code="x")
        n_events = len(store.events(state.run_id))
        with pytest.raises(InputError) as exc:
            ask(state.run_id, LVEF, store=store)
        assert exc.value.code == "not_askable" and status in exc.value.message
        assert len(store.events(state.run_id)) == n_events
        store.delete_run(state.run_id)


def _cli(capsys, *args) -> tuple[int, str, str]:
    """``research ARGS`` in-process (``research.cli.commands``, on the module's ``env``): ``(exit code,
    stdout, stderr)``. The command as a real process is tests/test_cli.py's subject; here the
    subprocess only re-paid the imports and the model load."""

    capsys.readouterr()
    code = cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_ask_and_audit_json(env, lvef, capsys):
    code, out, err = _cli(
        capsys, "ask", env.run_id, "What cardiac toxicity was reported with trastuzumab?", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert set(data) >= {"answer", "citations", "new_references", "sources_added", "audit"}
    assert data["citations"] and data["sources_added"] == 0
    code, out, err = _cli(capsys, "audit", env.run_id, "--json")
    assert code == 0, err
    audit = json.loads(out)
    assert audit["total"] == audit["supported"] >= 1
    code, out, err = _cli(capsys, "ask", env.run_id, "   ", "--json")
    assert code == 2 and "error [invalid_question]" in err and not out


@pytest.fixture(scope="module")
def small_run(tmp_path_factory, finished_corpus):
    """A 1-perspective × 1-turn drug run on the 60-document corpus, in its own redis-server and
    data dir (research-more adds sources to it, so it is not the session's shared run)."""

    server = EmbeddedRedis(tmp_path_factory.mktemp("more_redis"))
    url = server.start()
    mp = pytest.MonkeyPatch()
    mp.setenv("RESEARCH_DATA_DIR", str(tmp_path_factory.mktemp("more_data")))
    mp.setenv("REDIS_URL", url)
    mp.delenv("RESEARCH_LLM_MODEL", raising=False)
    state = jobs.run_foreground(
        jobs.make_config(
            "Trastuzumab in HER2-positive breast cancer",
            corpus=str(finished_corpus),
            template="drug",
            max_perspectives=1,
            max_turns=1,
            gap_turns=0,  # a thin run, so research-more has something left to find
        )
    )
    assert state.status == "complete", state.error
    yield state.run_id
    mp.undo()
    server.stop()


def test_research_more_adds_sources_and_updates_coverage(small_run):

    store = RunStore(get_redis())
    collector = SourceCollector(store.r, small_run)
    n_before, cov_before = len(collector.all_sources()), collector.question_counts()
    turns_before = store.count_turns(small_run)
    f = ask(
        small_run,
        "How was cardiac function monitored in the long-term follow-up of adjuvant trastuzumab?",
        research=True,
        store=store,
    )
    assert f.researched and f.sources_added >= 1
    assert len(collector.all_sources()) == n_before + f.sources_added
    assert collector.question_counts() != cov_before
    assert store.count_turns(small_run) == turns_before + 1
    turn = store.get_turns(small_run)[-1]
    assert turn.perspective == "Analyst follow-up" and turn.sources and turn.search_queries
    assert (
        f.found and f.new_references and set(r.number for r in f.new_references) <= set(f.citations)
    )
    new_ids = {s.source_id for s in collector.all_sources()[n_before:]}
    assert new_ids & {r.source_id for r in f.new_references}, (
        "the answer cites a source research-more found"
    )
    types = [e.type for e in store.events(small_run)]
    assert {"followup.research.started", "followup.research.finished", "turn.finished"} <= set(
        types
    )


def test_report_page_shows_chat_audit_and_read_only_followups(env, store, lvef, monkeypatch):
    """AppTest: the Report page has the chat under the report and the audit summary; the
    read-only share view shows the stored follow-up without a chat input."""

    for k, v in env.env().items():  # small_run (module-scoped) points the env at its own Redis
        monkeypatch.setenv(k, v)

    audit_run(
        env.run_id, store=store
    )  # stored: the page shows it at once (else it computes in the background)
    at = AppTest.from_file(str(ROOT / "app_pages" / "report.py"), default_timeout=120)
    at.query_params["run"] = env.run_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Follow-up questions" in [s.value for s in at.subheader]
    assert "Citation audit" in [s.value for s in at.subheader]
    assert any("citations supported" in str(m.value) for m in at.markdown)
    assert len(at.chat_input) == 1
    assert any(LVEF in str(m.value) for m in at.markdown)
    ro = AppTest.from_file(str(ROOT / "app_pages" / "report.py"), default_timeout=120)
    ro.query_params["run"] = env.run_id
    ro.query_params["view"] = "read"
    ro.run()
    assert not ro.exception, [e.value for e in ro.exception]
    assert len(ro.chat_input) == 0
    assert any(LVEF in str(m.value) for m in ro.markdown)


def test_audit_thresholds_match_the_calibration_result():
    """The constants in research/followup/audit.py are the ones bench/audit_calibration.py chose,
    and the precision written there is the held-out figure it measured."""

    result = json.loads((ROOT / "bench" / "results" / "audit_calibration.json").read_text())
    assert (audit.W_COSINE, audit.SUPPORTED, audit.WEAK) == (
        result["W_COSINE"],
        result["SUPPORTED"],
        result["WEAK"],
    )
    assert audit.PRECISION["supported"] == result["test"]["supported_precision"] >= 0.95
    assert audit.PRECISION["unsupported"] == result["test"]["unsupported_precision"]
    assert f"{result['test']['supported_precision']:.3f}" in audit.__doc__
