"""A report organised by question on the session's finished
trastuzumab run: every syllabus question in ``report.questions`` answered or stated as
insufficient, no repeated or cut sentence, sentences in their best-fitting section, sound
citations; ``research show --json`` carries the same ``report.questions``."""

from __future__ import annotations

import json

import pytest

import research.cli.commands as cli
from research.devtools.evidence_checks import evidence_checks
from research.devtools.report_quality import measure
from research.models import Report, ReportQuestion, Syllabus
from research.store.connection import get_redis
from research.store.runs import RunStore
from research.ui.report_view import heading_anchor, questions_markdown


@pytest.fixture(scope="module")
def stored(finished_run):
    mp = pytest.MonkeyPatch()
    for k, v in finished_run.env().items():
        mp.setenv(k, v)
    store = RunStore(get_redis())
    report = store.get_doc(finished_run.run_id, "report", Report)
    syllabus = store.get_doc(finished_run.run_id, "syllabus", Syllabus)
    yield report, syllabus
    mp.undo()


def test_every_question_answered_or_stated(stored, finished_run):
    report, syllabus = stored
    assert [q.key for q in report.questions] == syllabus.keys()
    headings = [s.heading for s in report.sections]
    for q in report.questions:
        assert q.status in ("answered", "insufficient")
        assert q.heading in headings
        section = report.sections[headings.index(q.heading)]
        if q.status == "insufficient":  # one explicit sentence with the count, in its section
            assert f"{q.label} is not answered: " in section.text
            assert (
                f"found {q.sources_found} of the {q.min_sources} sources" in section.text
                if q.sources_found
                else "found no source" in section.text
            )
        else:  # the question's section and the subsections nested under it cite its sources
            i = headings.index(q.heading)
            body = [section.text]
            for sub in report.sections[i + 1 :]:
                if sub.level <= section.level:
                    break
                body.append(sub.text)
            assert q.sources and q.sources_found >= q.min_sources
            assert all(f"[{n}]" in " ".join(body) for n in q.sources)
    cited = {int(n) for n in __import__("re").findall(r"\[(\d+)\]", report.lead)}
    assert cited, "the lead gives key findings with citations"


def test_report_reads_cleanly(stored, finished_run):
    report, syllabus = stored
    m = measure(report, finished_run.topic, syllabus_keys=syllabus.keys())
    assert m["near_duplicate_rate"] == 0, m["near_duplicates"]
    assert m["truncated_fragment_rate"] == 0, m["truncated_fragments"]
    # a question's sentences answer it by the evidence judgement; cosine to "topic: heading"
    # (m["section_fit"]) let the topic's words carry any sentence, so it is reported, not gated
    checks = evidence_checks(RunStore(get_redis()), finished_run.run_id)
    assert checks["evidence_fit"] is not None and checks["evidence_fit"] >= 0.9, checks["misfit"]
    assert m["citation_integrity"], m["citation_problems"]
    assert m["questions"]["missing"] == [] and m["questions"]["addressed_share"] == 1.0
    assert "…" not in report.markdown
    assert not any(len(s.heading.split()) == 1 and s.heading.islower() for s in report.sections)


def test_show_json_has_report_questions_and_page_table_links(stored, finished_run, capsys):
    """``research show --json`` in-process (``research.cli.commands`` on the run's env, set by
    ``stored``); the command as a real process is tests/test_cli.py's subject."""

    report, _ = stored
    capsys.readouterr()
    code = cli.main(["show", finished_run.run_id, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err[-500:]
    shown = json.loads(out.out)["report"]["questions"]
    assert shown == [q.model_dump(mode="json") for q in report.questions]
    table = questions_markdown(report)
    assert table.count("\n") == len(report.questions) + 1
    for q in report.questions:
        assert f"](#{heading_anchor(q.heading)})" in table


def test_heading_anchor_matches_streamlit_slugs():
    assert heading_anchor("Safety and Adverse Effects") == "safety-and-adverse-effects"
    assert heading_anchor("Background & Overview") == "background-and-overview"
    assert heading_anchor("HER2 Testing") == "her-2-testing"
    assert heading_anchor("Zelensky's Visit") == "zelenskys-visit"


def test_open_question_row_says_it_is_open_before_the_sources_its_section_cites():
    """An insufficient question whose section quotes trials of each arm on its own: the Sources
    cell gives the count needed, then the references; an answered one only its references."""
    questions = [
        ReportQuestion(
            key="e",
            label="Efficacy: A vs B",
            heading="Efficacy: A vs B",
            status="insufficient",
            sources=[3, 1],
            sources_found=0,
            min_sources=5,
        ),
        ReportQuestion(key="h", label="Harms", heading="Harms", status="answered", sources=[2]),
    ]
    report = Report(
        title="A versus B", lead="", sections=[], references=[], markdown="", questions=questions
    )
    rows = questions_markdown(report).splitlines()[2:]
    assert rows[0].endswith("| 0 of 5 sources needed; cites [[1]](#ref-1) [[3]](#ref-3) |"), rows
    assert rows[1].endswith("| [[2]](#ref-2) |"), rows


def test_parallel_conversations_chase_different_questions(stored, finished_run):
    """Turn 2's coverage snapshot is read before turn 1 is committed (concurrent scheduling); the
    conversations still steer to different syllabus questions than turn 1 and than each other
    while there are more unmet questions than conversations (6 questions, 3 conversations)."""
    report, syllabus = stored
    turns = RunStore(get_redis()).get_turns(finished_run.run_id)
    by_turn: dict[int, list[str]] = {}
    for t in turns:
        by_turn.setdefault(t.turn_number, []).extend(t.focus_questions)
    first, second = by_turn.get(1, []), by_turn.get(2, [])
    assert second, [(t.perspective, t.turn_number, t.question) for t in turns]
    assert len(set(second)) == len(second), second  # no two conversations ask the same question
    assert not set(second) & set(first), (first, second)  # nor one turn 1 already asked
    assert set(first + second) <= set(syllabus.keys())
