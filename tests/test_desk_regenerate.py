"""Regenerating a report section with an instruction (``research.desk.regenerate``, ``research
regenerate``): with the extractive engine on the session's finished run, and with the litellm
engine through the real litellm client to the loopback server (its ``regenerate_section`` step,
counted in the run's LLM usage that the Cost page shows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import research.cli.commands as cli
from research.citations import cited_spans
from research.desk.edit import cited_numbers
from research.desk.regenerate import propose, target_sentences
from research.errors import InputError
from research.llm.usage import usage_report
from research.models import Report
from research.store import open_store
from research.store.connection import get_redis
from research.store.followups import FollowupStore
from research.store.runs import RunStore
from research.store.versions import VersionStore
from research.text import split_sentences
from tests.llm_fixtures import MODEL

pytestmark = pytest.mark.timeout(1800)  # the session's finished run is built by the first test
PHASE3 = "only phase III trials"
ROOT = Path(__file__).resolve().parents[1]


def _main(capsys, *argv) -> tuple[int, dict, str]:
    code = cli.main(list(argv))
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    return code, (json.loads(lines[-1]) if lines and code == 0 else {}), cap.err


@pytest.fixture(scope="module")
def env(finished_env):
    """The finished run, with settings pointed at its Redis and data dir for this module."""
    return finished_env


@pytest.fixture()
def store(env):
    """The finished run's store; its versions and follow-ups are removed after each test, so
    other tests and modules sharing the session's run see it as generated."""
    s = RunStore(get_redis())
    yield s
    VersionStore(s).clear(env.run_id)
    FollowupStore(s).clear(env.run_id)


def _answered_heading(report: Report) -> str:
    return next(q.heading for q in report.questions if q.status == "answered")


def _check_only(before: Report, after: Report, heading: str, n_refs: int) -> None:
    """Only ``heading`` changed, and every citation of the new report resolves."""
    assert after.lead == before.lead and after.references == before.references
    for a, b in zip(before.sections, after.sections, strict=True):
        assert (a.text != b.text) == (a.heading == heading), a.heading
    new = next(s.text for s in after.sections if s.heading == heading)
    assert cited_numbers(new) and all(1 <= n <= n_refs for n in cited_numbers(new))
    assert f"## {heading}\n\n{new.strip()}" in after.markdown


def test_extractive_regenerate_stores_a_new_version_of_that_section(env, store, capsys):
    rid = env.run_id
    report = store.get_doc(rid, "report", Report)
    heading = _answered_heading(report)
    code, out, err = _main(capsys, "regenerate", rid, heading, "--instruction", PHASE3, "--json")
    assert code == 0, err
    assert out["version"] == 2 and out["heading"] == heading and out["changed"] == [heading]
    assert out["engine_label"].startswith("offline extractive mode")
    versions = VersionStore(store)
    v2 = versions.get(rid)
    assert v2.number == 2 and v2.note == f"regenerate: {PHASE3}" and v2.sections == [heading]
    n_refs = len(FollowupStore(store).references(rid, report))
    _check_only(report, v2.report, heading, n_refs)
    # whole cited sentences only: each sentence is a stored evidence passage of the source it cites
    by_number = {r.number: r.source_id for r in report.references}
    evidence = store.evidence(rid).all()
    text = next(s.text for s in v2.report.sections if s.heading == heading)
    spans = cited_spans(text)
    assert spans
    for body, numbers in spans:
        passages = {p.passage.rstrip(".") for n in numbers for p in evidence[by_number[n]]}
        assert body.rstrip(".") in passages, body


def test_shorter_halves_the_section_and_nothing_is_stored(env, store):
    rid = env.run_id
    report = store.get_doc(rid, "report", Report)
    heading = _answered_heading(report)
    old = next(s.text for s in report.sections if s.heading == heading)
    c = propose(store, rid, heading, "shorter please")
    assert c.base_version == 1 and c.part >= 1 and c.old_text == old
    assert (
        len(split_sentences(c.new_text))
        <= target_sentences(old, "shorter")
        < len(split_sentences(old))
        or len(split_sentences(old)) <= 2
    )
    assert VersionStore(store).count(rid) == 1 and not store.r.exists(f"run:{rid}:versions")


def test_bad_input_exits_2_and_stores_nothing(env, store, capsys):
    rid = env.run_id
    report = store.get_doc(rid, "report", Report)
    events = len(list(store.events(rid)))
    code, _, err = _main(capsys, "regenerate", rid, "No Such Section", "--instruction", "shorter")
    assert code == 2 and "error [unknown_section]" in err
    assert "No Such Section" in err and report.sections[0].heading in err  # lists the sections
    for args, code_name in (
        (["Lead", "--instruction", "shorter"], "not_a_section"),
        ([report.sections[0].heading, "--instruction", "   "], "invalid_instruction"),
    ):
        code, _, err = _main(capsys, "regenerate", rid, *args)
        assert code == 2 and f"error [{code_name}]" in err, err
    code, _, err = _main(capsys, "regenerate", "r_nope", "X", "--instruction", "shorter")
    assert code == 2
    assert VersionStore(store).count(rid) == 1 and len(list(store.events(rid))) == events
    with pytest.raises(InputError) as exc:
        propose(store, rid, report.sections[0].heading, "x" * 501)
    assert exc.value.code == "invalid_instruction"


# ---------------------------------------------------------------------------------- litellm
def test_litellm_regenerate_through_its_step_is_counted(llm_env, capsys, corpus_path, data_dir):
    code, s, err = _main(
        capsys,
        "run",
        "Trastuzumab in HER2-positive breast cancer",
        "--corpus",
        str(corpus_path),
        "--template",
        "drug",
        "--engine",
        "litellm",
        "--model",
        MODEL,
        "--max-perspectives",
        "1",
        "--max-turns",
        "1",
        "--json",
    )
    assert code == 0 and s["status"] == "complete", err
    rid = s["run_id"]
    store = open_store()
    report = store.get_doc(rid, "report", Report)
    heading = _answered_heading(report)
    calls_before = usage_report(store, rid)["llm_calls"]
    n_bodies = len(llm_env.bodies)
    code, out, err = _main(
        capsys, "regenerate", rid, heading, "--instruction", "focus on elderly patients", "--json"
    )
    assert code == 0, err
    assert out["version"] == 2 and out["changed"] == [heading]
    assert out["engine_label"] == f"litellm ({MODEL})"
    # the loopback server answered the regenerate_section step (real HTTP, real litellm) with
    # the instruction in its material
    assert llm_env.stats()["by_step"].get("regenerate_section", 0) == 1
    asked = [b for b in llm_env.bodies[n_bodies:] if "focus on elderly patients" in json.dumps(b)]
    assert asked and "[step: regenerate_section]" in json.dumps(asked[0])
    v2 = VersionStore(store).get(rid)
    n_refs = len(FollowupStore(store).references(rid, report))
    _check_only(report, v2.report, heading, n_refs)
    assert (
        "As instructed"
        in v2.report.sections[[x.heading for x in v2.report.sections].index(heading)].text
    )
    # the run's LLM accounting (what the Cost page reads) counts the call under the new step
    usage = usage_report(store, rid)
    assert usage["by_step"]["regenerate_section"]["calls"] == 1
    assert usage["llm_calls"] == calls_before + 1
    # research more first: one follow-up turn (stored as a follow-up), then the section again
    code, out, err = _main(
        capsys, "regenerate", rid, heading, "--instruction", PHASE3, "--research", "--json"
    )
    assert code == 0, err
    assert out["version"] == 3 and out["changed"] == [heading] and out["followup"]
    followups = FollowupStore(store).list(rid)
    assert [f.id for f in followups] == [out["followup"]] and followups[0].researched
    assert PHASE3 in followups[0].question
    refs = FollowupStore(store).references(rid, report)  # the report's, then the follow-up's
    v3 = VersionStore(store).get(rid)
    _check_only(v2.report, v3.report, heading, len(refs))
    assert set(out["citations"]) <= {r.number for r in refs}
    assert usage_report(store, rid)["by_step"]["regenerate_section"]["calls"] == 2


# ---------------------------------------------------------------------------------- dashboard
def test_report_page_regenerate_shows_a_diff_then_accept_makes_a_version(env, store):
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415 - only this test renders a page

    from research.jobs.regenerations import JOBS  # noqa: PLC0415 - the page's job table

    rid = env.run_id
    report = store.get_doc(rid, "report", Report)
    heading = _answered_heading(report)
    at = AppTest.from_file(str(ROOT / "app_pages" / "report.py"), default_timeout=90)
    at.query_params["run"] = rid
    at.run()
    at.segmented_control(key=f"desk_mode_{rid}").set_value("Edit").run()
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key=f"regen_section_{rid}").set_value(heading)
    at.text_input(key=f"regen_instruction_{rid}").input(PHASE3)
    next(b for b in at.button if b.label == "Regenerate").click().run()
    assert not at.exception, [e.value for e in at.exception]
    job = at.session_state[f"regen_job_{rid}"]
    JOBS[job].result(timeout=300)  # the background job (this process's thread)
    at.run()
    assert any("Regenerated (not saved)" in str(h.proto.body) for h in at.get("html"))
    assert VersionStore(store).count(rid) == 1  # nothing stored before Accept
    next(b for b in at.button if b.label == "Accept as a new version").click().run()
    assert not at.exception, [e.value for e in at.exception]
    v = VersionStore(store).get(rid)
    assert v.number == 2 and v.sections == [heading] and v.note == f"regenerate: {PHASE3}"
    assert any("Saved as version 2" in str(s.value) for s in at.success)
