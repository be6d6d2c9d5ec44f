"""The ``research`` command, run as a real subprocess against the test Redis."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from research.cli import build_parser, handlers
from research.models import Reference, Report, ReportSection, RunConfig
from research.store.runs import RunStore

SUMMARY_TYPES = {
    "run_id": str,
    "status": str,
    "report_path": str,
    "artifacts_dir": str,
    "sources": int,
    "questions": dict,
    "citations": int,
    "llm_calls": int,
    "prompt_tokens": int,
    "completion_tokens": int,
    "cost_usd": (int, float),
    "wall_s": (int, float),
}


@pytest.fixture()
def cli(tmp_path, redis_server):
    """Run ``python -m research.cli ARGS`` in an empty cwd with a fresh (absent) data dir."""
    data = tmp_path / "data"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {
        **os.environ,
        "RESEARCH_DATA_DIR": str(data),
        "REDIS_URL": redis_server,
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.pop("RESEARCH_CORPUS", None)

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "research.cli", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    run.data, run.cwd, run.env = data, cwd, env
    return run


def _nothing_written(cli) -> bool:
    data_empty = not cli.data.exists() or not any(cli.data.iterdir())
    return data_empty and not any(cli.cwd.iterdir())


def test_help_is_fast_and_lists_commands(cli):
    out = cli("--help", timeout=30)
    assert out.returncode == 0
    for word in ("run", "list", "show", "export"):
        assert word in out.stdout
    env = dict(os.environ)
    code = (
        "import sys, research.cli; research.cli.build_parser(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'redis', 'research')))"
    )
    mods = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30
    )
    loaded = json.loads(mods.stdout.replace("'", '"'))
    # --help stays light: no torch, no redis client, no engine/pipeline/store modules
    assert not [m for m in loaded if m.split(".")[0] in ("torch", "redis")], loaded
    heavy = (
        "research.store",
        "research.pipeline",
        "research.engines",
        "research.search",
        "research.search.embeddings",
    )
    assert not [m for m in loaded if m.startswith(heavy)], loaded


def test_redis_command_and_its_old_name(cli):
    """``research redis`` shows the embedded server; ``research server``, its old name, does the
    same and says on stderr which command to use instead."""
    new = cli("redis", "status", "--json", timeout=60)
    assert new.returncode == 0, new.stderr
    assert "external_redis" in json.loads(new.stdout)
    assert "deprecated" not in new.stderr
    old = cli("server", "status", "--json", timeout=60)
    assert old.returncode == 0, old.stderr
    assert json.loads(old.stdout) == json.loads(new.stdout)
    assert "deprecated" in old.stderr and "research redis status" in old.stderr


@pytest.mark.parametrize(
    "args, code, fragment",
    [
        (["run", ""], "invalid_input", "topic is empty"),
        (["run", "   \t  "], "invalid_input", "topic is empty"),
        (["run", "x" * 5000], "invalid_input", "5,000 characters long; the limit is 500"),
        (["run", "../../etc/passwd"], "invalid_input", "remove path components"),
        (["run", "mRNA \x1b[31mvaccines"], "invalid_input", "U+001B"),
        (
            ["run", "mRNA vaccines", "--max-turns", "abc"],
            "invalid_input",
            "max turns must be a whole number from 1 to 10",
        ),
        (
            ["run", "mRNA vaccines", "--max-perspectives", "0"],
            "invalid_input",
            "from 1 to 12; got 0",
        ),
        (
            ["run", "mRNA vaccines", "--corpus", "does/not/exist.jsonl"],
            "corpus_error",
            "does not exist",
        ),
        (["run", "mRNA vaccines", "--corpus", "NOTES"], "corpus_error", "is not a .jsonl file"),
        (
            ["run", "mRNA vaccines", "--template", "nope"],
            None,
            "template 'nope'",
        ),  # code owned by syllabus.py
        (["run"], "invalid_input", "required: TOPIC"),
        (["frobnicate"], "invalid_input", "invalid choice"),
        (["show", "../../etc/passwd"], "invalid_input", "not a run id"),
        (["show", "0123456789abcdef"], "run_not_found", "No run '0123456789abcdef'"),
        (
            ["export", "0123456789abcdef", "--format", "md", "--out", "r.md"],
            "run_not_found",
            "No run",
        ),
        (
            ["export", "0123456789abcdef", "--format", "exe"],
            "invalid_input",
            "invalid choice: 'exe'",
        ),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(cli, r, tmp_path, args, code, fragment):
    notes = tmp_path / "notes.txt"
    notes.write_text('{"text": "not jsonl by name"}\n', encoding="utf-8")
    args = [str(notes) if a == "NOTES" else a for a in args]
    out = cli(*args)
    assert out.returncode == 2, out.stderr
    assert re.search(rf"^error \[{code or '[a-z_]+'}\]: ", out.stderr, re.M), out.stderr
    assert fragment in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
    assert _nothing_written(cli)
    assert r.dbsize() == 0


def test_list_on_empty_store(cli, r):
    out = cli("list", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []
    human = cli("list")
    assert human.returncode == 0 and "No runs yet" in human.stdout


def _stored_run(r, topic: str) -> str:
    store = RunStore(r)
    run_id = store.create_run(RunConfig(topic=topic)).run_id
    store.put_doc(
        run_id,
        "report",
        Report(
            title=topic,
            lead="Lead [1].",
            sections=[ReportSection(heading="Body", text="Text [1].")],
            references=[
                Reference(
                    number=1,
                    source_id="s1",
                    title="T",
                    url="https://example.org",
                    source_type="web",
                )
            ],
            markdown=f"# {topic}\n\nLead [1].\n",
        ),
    )
    return run_id


def test_list_and_export_stored_runs(cli, r):
    first = _stored_run(r, "Trastuzumab: cardiotoxicity?")
    second = _stored_run(r, "COVID-19 trials in 2020")
    out = cli("list", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [row["run_id"] for row in rows] == [second, first]  # newest first
    assert rows[1]["topic"] == "Trastuzumab: cardiotoxicity?" and rows[1]["status"] == "pending"
    assert rows[0]["sources"] == 0 and rows[0]["created"].endswith("+00:00")
    assert first in cli("list").stdout

    # default --out: a safe file name from the topic in the current directory
    exp = cli("export", first, "--format", "md")
    assert exp.returncode == 0, exp.stderr
    written = Path(exp.stdout.strip())
    assert written == cli.cwd / "trastuzumab_cardiotoxicity.md"
    day = written.read_text(encoding="utf-8").split("As of ")[1][:10]  # the run's date
    assert written.read_text(encoding="utf-8") == (
        f"# Trastuzumab: cardiotoxicity?\n\n> As of {day} (the date of the run).\n\nLead [1].\n"
    )

    exp2 = cli("export", second, "--format", "md", "--out", "sub/dir/out.md")
    assert exp2.returncode == 0 and (cli.cwd / "sub" / "dir" / "out.md").is_file()
    refuse = cli("export", second, "--format", "md", "--out", "sub")
    assert refuse.returncode == 2 and "is a directory" in refuse.stderr


def _tiny_corpus(corpus_path: Path, dest: Path, n: int = 30) -> Path:
    """~30 real documents from the shared corpus: the ones about trastuzumab / HER2."""
    docs = []
    with corpus_path.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            if "trastuzumab" in doc["text"].lower():
                docs.append(line.strip())
                if len(docs) == n:
                    break
    dest.write_text("\n".join(docs) + "\n", encoding="utf-8")
    return dest


@pytest.mark.slow
def test_run_json_end_to_end(cli, r, corpus_path, tmp_path):
    corpus = _tiny_corpus(corpus_path, tmp_path / "tiny.jsonl")
    out = cli(
        "run",
        "Trastuzumab in HER2-positive breast cancer",
        "--corpus",
        str(corpus),
        "--max-perspectives",
        "2",
        "--max-turns",
        "1",
        "--json",
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, out.stdout[-2000:]  # exactly ONE JSON object on stdout
    summary = json.loads(lines[0])
    for key, typ in SUMMARY_TYPES.items():
        assert isinstance(summary[key], typ), (key, summary[key])
    assert summary["status"] == "complete"
    assert summary["sources"] > 0 and summary["citations"] > 0
    assert all(isinstance(k, str) and isinstance(v, int) for k, v in summary["questions"].items())
    assert summary["llm_calls"] == 0 and summary["cost_usd"] == 0  # offline extractive engine
    report = Path(summary["report_path"])
    assert report.is_file() and report.is_relative_to(cli.data)
    assert Path(summary["artifacts_dir"]).is_relative_to(cli.data)
    assert not any(cli.cwd.iterdir())  # nothing written outside the data dir

    run_id = summary["run_id"]
    show = cli("show", run_id, "--json")
    assert show.returncode == 0, show.stderr[-2000:]
    snap = json.loads(show.stdout)
    assert snap["run"]["run_id"] == run_id and snap["run"]["status"] == "complete"
    assert snap["report"]["markdown"] == report.read_text(encoding="utf-8")

    listed = json.loads(cli("list", "--json").stdout)
    assert listed[0]["run_id"] == run_id and listed[0]["sources"] == summary["sources"]

    exp = cli("export", run_id, "--format", "md", "--out", str(tmp_path / "out" / "report.md"))
    assert exp.returncode == 0, exp.stderr
    exported = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    # the export is the stored report plus its dating line ("As of <run date>") after the title
    assert re.sub(r"\n> As of [^\n]*\n\n", "\n", exported, count=1) == report.read_text(
        encoding="utf-8"
    )


@pytest.mark.slow
def test_ctrl_c_cancels_the_run(cli, r, corpus_path, tmp_path):
    """First Ctrl-C asks the run to stop at its next step: it ends ``cancelled``, exit 1."""
    corpus = _tiny_corpus(corpus_path, tmp_path / "tiny.jsonl")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "research.cli",
            "run",
            "HER2 testing methods",
            "--corpus",
            str(corpus),
            "--json",
        ],
        cwd=cli.cwd,
        env=cli.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while not r.zcard("runs") and time.monotonic() < deadline:  # wait until the run exists
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 1, err[-2000:]
    assert "cancelling run" in err and "error [cancelled]:" in err
    summary = json.loads(out)
    assert summary["status"] == "cancelled"
    assert RunStore(r).get_run(summary["run_id"]).status == "cancelled"


def test_every_subcommand_has_a_handler():
    """``main`` dispatches ``research NAME`` to ``research.cli.handlers.cmd_NAME``."""

    names = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert [n for n in names if not callable(getattr(handlers, f"cmd_{n}", None))] == []
