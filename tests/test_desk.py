"""The analyst's desk without a browser: report versions (edit, citation check, restore), the
diff, comments, version-aware exports and ``research show`` / ``research export --version``."""

from __future__ import annotations

import io
import json

import pytest
import redis
from docx import Document

from research.cli import main
from research.desk.diff import side_by_side_html, unified
from research.desk.edit import find_part, part_names, part_text, restore, save_edit
from research.devtools.scale_run import build_scale_run
from research.errors import InputError
from research.export import render_export
from research.models import Report
from research.store.comments import CommentStore
from research.store.runs import RunStore
from research.store.server import EmbeddedRedis
from research.store.versions import VersionStore


@pytest.fixture()
def small_run(data_dir, r):
    store = RunStore(r)
    return store, build_scale_run(store, data_dir, sources=12, turns=4, artifacts=5)


def _events(store, rid, kind):
    return [e.data for e in store.events(rid) if e.type == kind]


def test_edit_makes_version_2_and_keeps_the_generated_report(small_run):
    store, rid = small_run
    versions = VersionStore(store)
    generated = store.get_doc(rid, "report", Report)
    assert [v.number for v in versions.list(rid)] == [1] and versions.count(rid) == 1
    old = part_text(generated, 1)
    new_text = old + " Analyst's note: see the 2019 update [1]."
    out = save_edit(store, rid, 1, new_text, author="Dr. Rivera")
    assert out.version.number == 2 and out.changed == [part_names(generated)[1]]
    assert out.version.author == "Dr. Rivera" and out.version.note == "edit"
    assert versions.count(rid) == 2
    cur = versions.report(rid)
    assert cur.sections[0].text.endswith("see the 2019 update [1].")
    assert "see the 2019 update [1]." in cur.markdown and "## References" in cur.markdown
    refs_block = generated.markdown.split("## References")[1].strip()
    assert cur.markdown.split("## References")[1].strip() == refs_block
    # version 1 is the generated report, unchanged, and the run document was never overwritten
    assert versions.report(rid, 1) == generated == store.get_doc(rid, "report", Report)
    assert _events(store, rid, "report.versioned")[-1]["number"] == 2


def test_bad_citation_is_refused_and_nothing_is_stored(small_run):
    store, rid = small_run
    n_refs = len(store.get_doc(rid, "report", Report).references)
    before = list(store.events(rid))
    with pytest.raises(InputError) as exc:
        save_edit(store, rid, 0, "A lead citing a missing source [999].", author=None)
    assert exc.value.code == "bad_citation"
    assert "[999]" in exc.value.message and f"1–{n_refs}" in exc.value.message
    assert VersionStore(store).count(rid) == 1 and not store.r.exists(f"run:{rid}:versions")
    assert list(store.events(rid)) == before
    for text, code in (
        ("   ", "empty_edit"),
        (part_text(store.get_doc(rid, "report", Report), 0), "unchanged"),
    ):
        with pytest.raises(InputError) as exc:
            save_edit(store, rid, 0, text, author=None)
        assert exc.value.code == code
    with pytest.raises(InputError) as exc:
        save_edit(store, rid, 99, "x [1]", author=None)
    assert exc.value.code == "unknown_section"


def test_uncited_reference_is_reported_not_dropped(small_run):
    store, rid = small_run
    report = store.get_doc(rid, "report", Report)
    part = next(i for i in range(len(report.sections) + 1) if "[1]" in part_text(report, i))
    cites_1_elsewhere = any(
        "[1]" in part_text(report, i) for i in range(len(report.sections) + 1) if i != part
    )
    out = save_edit(store, rid, part, "Rewritten without any citation.", author="a")
    assert len(out.version.report.references) == len(report.references)  # none dropped
    assert (1 in out.uncited) is (not cites_1_elsewhere)
    assert "no longer cited" in out.message() or not out.uncited


def test_restore_makes_a_new_version_and_diff_shows_the_change(small_run):
    store, rid = small_run
    v1 = VersionStore(store).report(rid, 1)
    save_edit(store, rid, 0, v1.lead + " EDITED-LEAD-MARKER [1].", author="a")
    v3 = restore(store, rid, 1, author="b")
    assert v3.number == 3 and v3.restored_from == 1 and v3.note == "restore of version 1"
    assert VersionStore(store).report(rid) == v1
    with pytest.raises(InputError):  # the current text already is version 1
        restore(store, rid, 1, author="b")
    v2 = VersionStore(store).report(rid, 2)
    html = side_by_side_html(v1, v2, "Version 1", "Version 2")
    assert "EDITED-LEAD-MARKER" in html and "diff_add" in html and "Version 2" in html
    assert "+" in unified(v1, v2, "v1", "v2") and "EDITED-LEAD-MARKER" in unified(
        v1, v2, "v1", "v2"
    )
    with pytest.raises(InputError) as exc:
        VersionStore(store).get(rid, 7)
    assert exc.value.code == "no_such_version"


def test_find_part_by_heading(small_run):
    store, rid = small_run
    report = store.get_doc(rid, "report", Report)
    heading = report.sections[2].heading
    assert find_part(report, "  " + heading.upper() + " ") == 3 and find_part(report, "lead") == 0
    with pytest.raises(InputError, match="its sections are"):
        find_part(report, "No such heading")


def test_exports_follow_the_current_or_given_version(small_run):
    store, rid = small_run
    v1 = VersionStore(store).report(rid, 1)
    save_edit(store, rid, 0, v1.lead + " MARKER-V2 [1].", author="a")
    md_current = render_export(store, rid, "md").decode()
    md_v1 = render_export(store, rid, "md", version=1).decode()
    assert "MARKER-V2" in md_current and "MARKER-V2" not in md_v1
    assert "MARKER-V2" in render_export(store, rid, "html").decode()
    doc = Document(io.BytesIO(render_export(store, rid, "docx", version=2)))
    assert any("MARKER-V2" in p.text for p in doc.paragraphs)
    with pytest.raises(InputError):
        render_export(store, rid, "md", version=9)


def test_comments_store_resolve_reopen_and_appendix(small_run):
    store, rid = small_run
    comments = CommentStore(store)
    report = store.get_doc(rid, "report", Report)
    c = comments.add(
        rid,
        section=report.sections[0].heading,
        quote="First sentence.",
        text="Check *this*",
        author="Kim",
    )
    assert comments.counts(rid) == {"total": 1, "open": 1, "resolved": 0}
    comments.set_status(rid, c.id, resolved=True, by="Lee")
    assert (
        comments.get(rid, c.id).status == "resolved" and comments.get(rid, c.id).status_by == "Lee"
    )
    comments.set_status(rid, c.id, resolved=False, by="Kim")
    assert comments.counts(rid)["open"] == 1
    with pytest.raises(InputError):
        comments.add(rid, section="Lead", text="  ", author="x")
    md = render_export(store, rid, "md", comments=True).decode()
    assert "Appendix: comments" in md and "Check \\*this\\*" in md and "Kim" in md
    assert "Appendix: comments" not in render_export(store, rid, "md").decode()
    assert "Appendix: comments" in render_export(store, rid, "html", comments=True).decode()
    assert {e["id"] for e in _events(store, rid, "comment.added")} == {c.id}


def test_cli_show_and_export_versions(small_run, tmp_path, capsys, monkeypatch):
    store, rid = small_run
    v1 = VersionStore(store).report(rid, 1)
    save_edit(store, rid, 0, v1.lead + " CLI-MARKER [1].", author="cli tester")
    CommentStore(store).add(rid, section="Lead", text="fine", author="x")
    assert main(["show", rid, "--json"]) == 0
    snap = json.loads(capsys.readouterr().out)
    assert [v["number"] for v in snap["versions"]] == [1, 2]
    assert snap["versions"][1]["author"] == "cli tester" and snap["versions"][1]["sections"] == [
        "Lead"
    ]
    assert set(snap["versions"][0]) >= {"number", "author", "created_at", "sections"}
    assert snap["report_version"] == 2 and "CLI-MARKER" in snap["report"]["lead"]
    assert snap["comments"] == {"total": 1, "open": 1, "resolved": 0}
    assert main(["show", rid, "--json", "--version", "1"]) == 0
    assert "CLI-MARKER" not in json.loads(capsys.readouterr().out)["report"]["lead"]
    assert main(["show", rid]) == 0
    assert "version 2 of 2" in capsys.readouterr().out
    out = tmp_path / "v1.md"
    assert main(["export", rid, "--version", "1", "--out", str(out)]) == 0
    assert "CLI-MARKER" not in out.read_text()
    assert main(["export", rid, "--out", str(tmp_path / "cur.md")]) == 0
    assert "CLI-MARKER" in (tmp_path / "cur.md").read_text()
    capsys.readouterr()
    assert main(["export", rid, "--version", "5"]) == 2
    assert "no_such_version" in capsys.readouterr().err
    assert main(["show", rid, "--version", "x"]) == 2


def test_comments_and_versions_survive_a_redis_restart(tmp_path):
    """Comments and versions live in Redis keys the server's AOF persists: a stopped and
    restarted redis-server (same dir) still has them."""
    server = EmbeddedRedis(tmp_path / "redis")
    url = server.start()
    try:
        store = RunStore(redis.Redis.from_url(url, decode_responses=True))
        rid = build_scale_run(store, tmp_path / "data", sources=6, turns=2, artifacts=2)
        v1 = VersionStore(store).report(rid, 1)
        save_edit(store, rid, 0, v1.lead + " RESTART-MARKER [1].", author="a")
        c = CommentStore(store).add(rid, section="Lead", text="survives?", author="Kim")
        CommentStore(store).set_status(rid, c.id, resolved=True, by="Lee")
    finally:
        server.stop()
    server = EmbeddedRedis(tmp_path / "redis")
    url = server.start()
    try:
        store = RunStore(redis.Redis.from_url(url, decode_responses=True))
        [back] = CommentStore(store).list(rid)
        assert (back.text, back.author, back.status, back.status_by) == (
            "survives?",
            "Kim",
            "resolved",
            "Lee",
        )
        assert VersionStore(store).count(rid) == 2
        assert "RESTART-MARKER" in VersionStore(store).report(rid).lead
    finally:
        server.stop()
