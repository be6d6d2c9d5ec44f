"""Batches: the input (CSV with per-row options, or one topic per line), checked whole before
anything is queued, the ``batches`` store, and ``research batch`` end to end as a real
subprocess: 5 topics queued on the job backend end as 5 complete runs and one zip of 5 reports."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from research.errors import InputError
from research.export import render_export
from research.jobs.batch_input import build_configs, parse_csv, parse_topics, read_batch_file
from research.store.batches import BatchStore
from research.store.runs import RunStore
from research.ui.batch_tab import shared_options, table_rows

REPO = Path(__file__).resolve().parents[1]
TOPICS = [
    "Trastuzumab in HER2-positive breast cancer",
    "Trastuzumab cardiotoxicity",
    "Pertuzumab with trastuzumab",
    "Trastuzumab emtansine",
    "Adjuvant trastuzumab duration",
]


@pytest.fixture()
def tiny(corpus_path, tmp_path) -> Path:
    """30 documents of the shared corpus about trastuzumab."""
    docs = []
    with corpus_path.open(encoding="utf-8") as fh:
        for line in fh:
            if "trastuzumab" in json.loads(line)["text"].lower():
                docs.append(line.strip())
                if len(docs) == 30:
                    break
    out = tmp_path / "tiny.jsonl"
    out.write_text("\n".join(docs) + "\n", encoding="utf-8")
    return out


@pytest.fixture()
def cli(tmp_path, redis_server):
    """``python -m research.cli ARGS`` in an empty cwd against the test Redis."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {**os.environ, "RESEARCH_DATA_DIR": str(tmp_path / "data"), "REDIS_URL": redis_server}
    env.pop("RESEARCH_JOB_BACKEND", None)
    env.pop("RESEARCH_LLM_MODEL", None)
    # this checkout's package, whatever the cwd (an editable install may point at another one)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "research.cli", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    run.cwd = cwd
    return run


def test_text_and_csv_inputs(tmp_path):
    text = tmp_path / "topics.txt"
    text.write_text("# my batch\nTrastuzumab\n\n  HER2 testing  \n", encoding="utf-8")
    rows = read_batch_file(text)
    assert [(r.line, r.topic, r.options) for r in rows] == [
        (2, "Trastuzumab", {}),
        (4, "HER2 testing", {}),
    ]
    table = tmp_path / "topics.csv"
    table.write_text(
        '\ufeffTopic,Max-Turns,depth\n"Trastuzumab, adjuvant",2,\n\nHER2,,deep\n', encoding="utf-8"
    )
    rows = read_batch_file(table)
    assert [(r.line, r.topic, r.options) for r in rows] == [
        (2, "Trastuzumab, adjuvant", {"max_turns": "2"}),
        (4, "HER2", {"depth": "deep"}),
    ]
    tsv = tmp_path / "topics.tsv"
    tsv.write_text("topic\tgap_turns\nA, B\t0\n", encoding="utf-8")
    assert read_batch_file(tsv)[0].options == {"gap_turns": "0"}
    with pytest.raises(InputError, match="no 'topic' column"):
        parse_csv("subject,depth\nx,brief\n")
    with pytest.raises(InputError, match="unknown column.*'colour'"):
        parse_csv("topic,colour\nx,red\n")
    with pytest.raises(InputError, match="no topics"):
        parse_topics("# only a comment\n\n")


def test_rows_become_configs_with_shared_options(data_dir, tiny):
    rows = parse_csv("topic,max_turns,depth,review\nTrastuzumab,2,brief,yes\nHER2,,,\n")
    shared = {"corpus": str(tiny), "max_turns": "1", "gap-turns": 0, "search": None}
    first, second = build_configs(rows, shared)
    assert (first.topic, first.max_turns, first.depth, first.review) == (
        "Trastuzumab",
        2,
        "brief",
        True,
    )
    assert (second.max_turns, second.depth, second.review, second.gap_turns) == (
        1,
        "standard",
        False,
        0,
    )
    assert first.corpus == second.corpus == str(tiny.resolve())


def test_a_bad_row_queues_nothing(cli, r, tiny):
    bad = cli.cwd / "bad.csv"
    bad.write_text(
        "topic,max_turns,depth\nTrastuzumab,1,brief\nHER2,abc,huge\n  ,2,\nPertuzumab,,\n",
        encoding="utf-8",
    )
    out = cli("batch", "bad.csv", "--corpus", str(tiny))
    assert out.returncode == 2, out.stderr
    assert "error [invalid_batch]: The batch was not queued" in out.stderr
    assert "line 3, field max_turns: max turns must be a whole number from 1 to 10" in out.stderr
    assert "line 3, field depth: Unknown report depth 'huge': choose one of brief" in out.stderr
    assert "line 4, field topic: The topic is empty" in out.stderr
    assert "line 2" not in out.stderr and "line 5" not in out.stderr
    shared = cli("batch", "bad.csv", "--max-perspectives", "99")
    assert shared.returncode == 2 and "option max_perspectives: " in shared.stderr
    assert r.zcard("runs") == 0 and r.zcard("batches") == 0  # nothing queued, nothing stored
    assert cli("batch", "status", "bnope").returncode == 2


def test_batch_store(r):
    store = BatchStore(RunStore(r))
    a = store.create("first", ["0123456789abcdef"])
    b = store.create("  second\nbatch ", ["0123456789abcdef", "fedcba9876543210"])
    assert store.get(b.batch_id) == b and b.name == "second batch"
    assert [x.batch_id for x in store.list()] == [b.batch_id, a.batch_id]
    store.delete(a.batch_id)
    assert store.get(a.batch_id) is None
    with pytest.raises(InputError, match="not a run id"):
        store.create("x", ["../etc"])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_batch_of_five_topics_to_one_zip(cli, r, tiny):
    table = cli.cwd / "topics.csv"
    table.write_text(
        "topic,depth\n"
        + "".join(f"{t},{'brief' if i % 2 else ''}\n" for i, t in enumerate(TOPICS)),
        encoding="utf-8",
    )
    flags = ["--corpus", str(tiny), "--max-perspectives", "1", "--max-turns", "1"]
    out = cli(
        "batch",
        "topics.csv",
        *flags,
        "--gap-turns",
        "0",
        "--name",
        "HER2 batch",
        "--zip",
        "all.zip",
        "--json",
        timeout=800,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    status = json.loads(out.stdout)
    assert status["total"] == 5 and status["counts"] == {"complete": 5} and status["done"]
    assert status["name"] == "HER2 batch" and status["progress"] == 1.0
    assert [row["topic"] for row in status["runs"]] == TOPICS
    store = RunStore(r)
    for i, row in enumerate(status["runs"]):
        config = store.get_run(row["run_id"]).config
        assert config.depth == ("brief" if i % 2 else "standard")  # the CSV column, row by row
        assert (config.max_turns, config.gap_turns) == (1, 0)  # the shared options

    with zipfile.ZipFile(cli.cwd / "all.zip") as z:
        reports = sorted(n for n in z.namelist() if n.endswith(".md"))
        assert len(reports) == 5 and reports[0].startswith("01_trastuzumab_in_her2")
        for name, row in zip(reports, status["runs"], strict=True):
            assert z.read(name) == render_export(store, row["run_id"], "md")
        table_rows = list(csv.DictReader(io.StringIO(z.read("batch.csv").decode())))
        assert [t["run_id"] for t in table_rows] == [row["run_id"] for row in status["runs"]]
        assert "Research Desk batch: HER2 batch" in z.read("README.txt").decode()

    again = cli("batch", "status", status["batch_id"], "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["counts"] == {"complete": 5}
    zipped = cli("batch", "zip", status["batch_id"], "--out", "again.zip")
    assert zipped.returncode == 0 and "(5 reports)" in zipped.stdout
    listed = cli("batch", "status")
    assert status["batch_id"] in listed.stdout and "HER2 batch" in listed.stdout


def test_batch_tab_rows_and_options():
    status = {
        "runs": [
            {"run_id": "0123456789abcdef", "topic": "A", "status": "complete", "progress": 1.0}
            | {"sources": 4, "citations": 3},
            {"run_id": "fedcba9876543210", "topic": "", "status": "deleted", "progress": 0.0}
            | {"sources": 0, "citations": 0},
        ]
    }
    rows = table_rows(status)
    assert rows[0] == {
        "topic": "A",
        "report": "report?run=0123456789abcdef",
        "status": "✅ complete",
        "progress": 1.0,
        "sources": 4,
        "citations": 3,
    }
    assert rows[1]["topic"] == "(deleted run)" and rows[1]["status"] == "deleted"
    opts = shared_options(
        corpus=" ",
        template="auto",
        max_perspectives=1,
        max_turns=2,
        gap_turns=0,
        depth="brief",
        search=[],
        engine="extractive",
        mode="storm",
    )
    assert opts["corpus"] is None and "search" not in opts and opts["max_turns"] == 2
