"""Input validation (research/jobs/validation.py) and Markdown export (research/export.py)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from research.errors import CorpusError, InputError, RunNotFoundError
from research.export import export_markdown, safe_filename
from research.export.dating import header_line, with_header
from research.jobs import engine_options
from research.jobs.validation import MAX_TOPIC_CHARS, validate_corpus, validate_int, validate_topic
from research.models import Reference, Report, ReportSection, RunConfig
from research.store.runs import RunStore


# ------------------------------------------------------------------------------ topics
@pytest.mark.parametrize(
    "topic, fragment",
    [
        ("", "empty"),
        ("   \t  \n ", "empty"),
        ("x" * 5000, "5,000 characters long; the limit is 500"),
        ("x" * (MAX_TOPIC_CHARS + 1), "501 characters long"),
        ("../etc/passwd", "remove path components"),
        ("notes ..\\windows\\system32", "remove path components"),
        ("mRNA\x00vaccines", "U+0000"),
        ("mRNA\x1b[31m vaccines", "U+001B"),
        ("bell\x07", "control character"),
        ("del\x7f", "U+007F"),
        ("c1\x85control", "U+0085"),
        ("bad bytes \udcff", "not valid UTF-8"),
        (None, "must be text"),
        (42, "must be text"),
    ],
)
def test_bad_topics_are_rejected_with_a_fix(topic, fragment):
    with pytest.raises(InputError) as exc:
        validate_topic(topic)
    assert fragment in exc.value.message
    assert exc.value.code == "invalid_input"


def test_control_character_message_gives_position():
    with pytest.raises(InputError, match=r"at position 5;"):
        validate_topic("mRNA\x00vaccines")


@pytest.mark.parametrize(
    "topic, expected",
    [
        (
            "  Trastuzumab in HER2-positive breast cancer  ",
            "Trastuzumab in HER2-positive breast cancer",
        ),
        ("COVID-19\tvaccines\r\nin children", "COVID-19 vaccines in children"),
        ("تأثير تغير المناخ على الزراعة", "تأثير تغير المناخ على الزراعة"),  # Arabic (RTL)
        (
            "השפעת הבינה המלאכותית\u200f על הרפואה",
            "השפעת הבינה המלאכותית\u200f על הרפואה",
        ),  # Hebrew + RLM kept
        ("量子コンピュータの応用", "量子コンピュータの応用"),
        ("Barbie: The Album", "Barbie: The Album"),
        ("a/b testing .. in 2023", "a/b testing .. in 2023"),
        ("x" * MAX_TOPIC_CHARS, "x" * MAX_TOPIC_CHARS),
    ],
)
def test_good_topics_are_cleaned(topic, expected):
    assert validate_topic(topic) == expected


def test_topic_is_nfc_normalized():
    decomposed = "Cafe\u0301 culture"
    out = validate_topic(decomposed)
    assert out == "Café culture" and unicodedata.is_normalized("NFC", out)
    # 500 decomposed letters + accents = 1,000 code points but 500 after NFC: accepted
    assert len(validate_topic("e\u0301" * MAX_TOPIC_CHARS)) == MAX_TOPIC_CHARS


# ------------------------------------------------------------------------------ corpus
def test_good_corpus_jsonl_and_folder(tmp_path, corpus_path):
    assert validate_corpus(corpus_path) == corpus_path.resolve()
    assert validate_corpus(str(corpus_path)) == corpus_path.resolve()
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "paper.txt").write_text("Trastuzumab improves survival.", encoding="utf-8")
    assert validate_corpus(folder) == folder.resolve()
    small = tmp_path / "Mixed.JSONL"
    small.write_text(
        '\n\n{"id": "1", "title": "t", "url": "u", "text": "x", "source": "web"}\n',
        encoding="utf-8",
    )
    assert validate_corpus(small) == small.resolve()


def _write(path: Path, data: bytes | str) -> Path:
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda d: d / "missing.jsonl", "does not exist"),
        (lambda d: _write(d / "notes.txt", '{"text": "x"}\n'), "is not a .jsonl file"),
        (lambda d: _write(d / "data.csv", "id,text\n1,x\n"), "is not a .jsonl file"),
        (lambda d: _write(d / "empty.jsonl", ""), "is empty"),
        (lambda d: _write(d / "blank.jsonl", "\n  \n"), "is empty"),
        (lambda d: _write(d / "csv.jsonl", "id,text\n1,x\n"), "line 1 is not JSON"),
        (lambda d: _write(d / "list.jsonl", "[1, 2]\n"), "not an object"),
        (lambda d: _write(d / "latin1.jsonl", b'{"text": "caf\xe9"}\n'), "not UTF-8"),
        (lambda d: (d / "emptydir").mkdir() or d / "emptydir", "holds no documents"),
        (
            lambda d: (d / "hidden").mkdir() or _write(d / "hidden" / ".DS_Store", "x").parent,
            "holds no documents",
        ),
        (lambda d: "", "No corpus path"),
        (lambda d: "bad\x00path", "NUL"),
    ],
)
def test_bad_corpus_is_rejected(tmp_path, make, fragment):
    with pytest.raises(CorpusError) as exc:
        validate_corpus(make(tmp_path))
    assert fragment in exc.value.message
    assert exc.value.code == "corpus_error"


# ------------------------------------------------------------------------------ ints
@pytest.mark.parametrize("value, expected", [(1, 1), (12, 12), ("4", 4), (" 7 ", 7), (3.0, 3)])
def test_validate_int_accepts(value, expected):
    assert validate_int("max perspectives", value, 1, 12) == expected


@pytest.mark.parametrize(
    "value, fragment",
    [
        (0, "got 0"),
        (13, "got 13"),
        (-1, "got -1"),
        ("abc", "got 'abc'"),
        ("2.5", "got '2.5'"),
        (2.5, "got 2.5"),
        (True, "got True"),
        (None, "got None"),
    ],
)
def test_validate_int_rejects(value, fragment):
    with pytest.raises(InputError) as exc:
        validate_int("max perspectives", value, 1, 12)
    assert "max perspectives must be a whole number from 1 to 12" in exc.value.message
    assert fragment in exc.value.message


# ------------------------------------------------------------------------------ safe_filename
@pytest.mark.parametrize(
    "topic, ext, expected",
    [
        (
            "Trastuzumab in HER2-positive Breast Cancer",
            "md",
            "trastuzumab_in_her2_positive_breast_cancer.md",
        ),
        ("Barbie: The Album", ".md", "barbie_the_album.md"),
        ("../../etc/passwd", "md", "etc_passwd.md"),
        ("C:\\Windows\\System32\\", "md", "c_windows_system32.md"),
        ("Café Société — naïve", "md", "cafe_societe_naive.md"),
        ("CON", "md", "con_report.md"),
        ("nul", "txt", "nul_report.txt"),
        ("  ...  ", "md", None),
        ("", "md", None),
        ("report", "", "report"),
        ('a<b>c:d"e|f?g*h\x00i', "MD", "a_b_c_d_e_f_g_h_i.md"),
    ],
)
def test_safe_filename_cases(topic, ext, expected):
    name = safe_filename(topic, ext)
    if expected is not None:
        assert name == expected
    _assert_portable(name)


def _assert_portable(name: str) -> None:
    assert name and len(name) <= 80
    assert name.isascii() and name == name.lower()
    assert not any(c in name for c in '/\\:*?"<>|\x00 ')
    assert not name.startswith(".") and not name.startswith("_")
    assert name.split(".")[0] not in {"con", "prn", "aux", "nul", "com1", "lpt1"}


def test_safe_filename_long_and_non_latin_topics():
    long = safe_filename("word " * 200, "md")
    assert len(long) <= 80 and long.endswith(".md") and not long[:-3].endswith("_")
    arabic = safe_filename("تأثير تغير المناخ على الزراعة", "md")
    hebrew = safe_filename("השפעת הבינה המלאכותית על הרפואה", "md")
    assert arabic.startswith("report_") and hebrew.startswith("report_") and arabic != hebrew
    assert arabic == safe_filename("تأثير تغير المناخ على الزراعة", "md")  # deterministic
    for name in (long, arabic, hebrew):
        _assert_portable(name)


# ------------------------------------------------------------------------------ export
def _report_run(store: RunStore, topic: str = "Trastuzumab and HER2") -> str:
    run_id = store.create_run(RunConfig(topic=topic)).run_id
    md = f"# {topic}\n\nTrastuzumab improved survival [1].\n\n## References\n\n1. [Trial](https://example.org/t)\n"
    store.put_doc(
        run_id,
        "report",
        Report(
            title=topic,
            lead="Trastuzumab improved survival [1].",
            sections=[ReportSection(heading="Efficacy", text="Trastuzumab improved survival [1].")],
            references=[
                Reference(
                    number=1,
                    source_id="s1",
                    title="Trial",
                    url="https://example.org/t",
                    source_type="pubmed",
                )
            ],
            markdown=md,
        ),
    )
    return run_id


def test_export_markdown_writes_the_stored_report(r, data_dir, tmp_path):
    store = RunStore(r)
    run_id = _report_run(store)
    out = tmp_path / "exports" / "nested" / safe_filename("Trastuzumab and HER2", "md")
    written = export_markdown(run_id, out)
    assert written == out.resolve()

    md = store.get_doc(run_id, "report", Report).markdown  # with the as-of line after the title
    expected = with_header(md, header_line(store, store.get_run(run_id)))
    assert expected.split("\n")[2].startswith("> As of ")
    assert written.read_text(encoding="utf-8") == expected
    # replacing an existing file works and leaves no temp file behind
    written2 = export_markdown(run_id, out, store=store)
    assert written2.read_text(encoding="utf-8") == expected
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name]


def test_export_refuses_directory_and_missing_report(r, data_dir, tmp_path):
    store = RunStore(r)
    run_id = _report_run(store)
    target = tmp_path / "a_dir"
    target.mkdir()
    with pytest.raises(InputError, match="is a directory"):
        export_markdown(run_id, target, store=store)
    assert list(target.iterdir()) == []

    pending = store.create_run(RunConfig(topic="no report yet")).run_id
    with pytest.raises(InputError) as exc:
        export_markdown(pending, tmp_path / "x.md", store=store)
    assert exc.value.code == "report_not_ready" and "status: pending" in exc.value.message
    assert not (tmp_path / "x.md").exists()

    with pytest.raises(RunNotFoundError):
        export_markdown("0" * 16, tmp_path / "y.md", store=store)
    with pytest.raises(InputError, match="not a run id"):
        export_markdown("../../etc", tmp_path / "z.md", store=store)
    assert not (tmp_path / "y.md").exists() and not (tmp_path / "z.md").exists()


def test_export_reports_unwritable_parent(r, data_dir, tmp_path):
    store = RunStore(r)
    run_id = _report_run(store)
    blocker = tmp_path / "file.txt"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="Cannot write"):
        export_markdown(run_id, blocker / "report.md", store=store)
    assert json.dumps(blocker.read_text()) == '"x"'


def test_engine_options_read_model_and_models_as_the_cli_does():
    assert engine_options(None) == {} and engine_options("extractive") == {"engine": "extractive"}
    assert engine_options(None, " openai/gpt-4o ", {"writer": "openai/gpt-4o-mini"}) == {
        "models": {"*": "openai/gpt-4o", "writer": "openai/gpt-4o-mini"},
        "engine": "litellm",
    }
    assert engine_options(None, None, {"*": "m"}) == {"models": {"*": "m"}, "engine": "litellm"}
