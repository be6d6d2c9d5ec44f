"""A table of hostile or broken inputs across the Launch form (``jobs.make_config``,
the one gate the form calls), the CLI, uploads (``research.ingest``), artifact requests and
config. Each row states the expected clear error (type or exit code + what the message says);
for every row: nothing crashes, nothing is written outside the data dir, and a run stored
before is still there, unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import research.cli.commands as cli
from research import jobs
from research.artifacts import ArtifactStore, artifact_path, read_artifact
from research.engines.factory import make_engine
from research.errors import ArtifactError, CorpusError, InputError, ResearchError, StoreError
from research.ingest import ingest as do_ingest
from research.models import RunConfig, Step
from research.search.corpus import read_corpus
from research.store import open_store
from research.store.connection import make_client
from research.store.runs import RunStore

GOOD_TOPIC = "Trastuzumab in HER2-positive breast cancer"


@dataclass
class Env:
    """What a row can use: the corpus, a scratch dir inside the data dir, a stored run, capsys."""

    corpus: Path
    data: Path
    scratch: Path
    run_id: str
    other_run_id: str
    capsys: object
    monkeypatch: pytest.MonkeyPatch


def form(topic: str = GOOD_TOPIC, **kw) -> Callable[[Env], object]:
    return lambda e: jobs.make_config(topic, **{"corpus": str(e.corpus), **kw})


def corpus_file(name: str, content: bytes) -> Callable[[Env], object]:
    def act(e: Env) -> object:
        p = e.scratch / name
        p.write_bytes(content)
        return jobs.make_config(GOOD_TOPIC, corpus=str(p))

    return act


def cli_run(*argv: str) -> Callable[[Env], int]:
    """``research ARGV`` in-process; argparse errors exit through SystemExit(2) like the real CLI."""

    def act(e: Env) -> int:
        try:
            return cli.main(
                [a.replace("{run}", e.run_id).replace("{corpus}", str(e.corpus)) for a in argv]
            )
        except SystemExit as exc:
            return int(exc.code)

    return act


def artifact(
    name: str | Callable[[Env], str], pattern: str | None = None
) -> Callable[[Env], object]:
    return lambda e: read_artifact(e.run_id, name(e) if callable(name) else name, pattern)


def ingest(files: dict[str, bytes], name: str = "uploads") -> Callable[[Env], object]:
    def act(e: Env) -> object:

        paths = []
        for fname, data in files.items():
            p = e.scratch / fname
            p.write_bytes(data)
            paths.append(p)
        return do_ingest(name, paths)

    return act


def with_env(var: str, value: str, action: Callable[[Env], object]) -> Callable[[Env], object]:
    def act(e: Env) -> object:
        e.monkeypatch.setenv(var, value)
        return action(e)

    return act


def without_env(var: str, action: Callable[[Env], object]) -> Callable[[Env], object]:
    def act(e: Env) -> object:
        e.monkeypatch.delenv(var, raising=False)
        return action(e)

    return act


def jsonl_with_bad_lines(e: Env) -> object:
    """First line fine, later lines broken: the corpus loads, the bad lines are counted."""

    p = e.scratch / "mixed.jsonl"
    p.write_text(
        '{"id": "a", "title": "A", "url": "https://a.example", "text": "alpha text", "source": "web"}\n'
        "{not json\n[1, 2]\n" + '{"id": "a", "text": "dup"}\n{"title": "no id"}\n',
        encoding="utf-8",
    )
    jobs.make_config(GOOD_TOPIC, corpus=str(p))  # the gate accepts it (first line is a document)
    load = read_corpus(p)
    assert len(load.documents) == 1 and load.skipped == 4
    return load


def traversal_plan_title(e: Env) -> object:
    """A hostile plan title cannot place an artifact outside the run's artifacts dir."""
    store = open_store()
    arts = ArtifactStore(
        e.run_id, "../../../../etc/passwd\x00/..", make_engine(RunConfig(topic="t")), store
    )
    rec, _ = arts.record(Step(step_id=1, title="../../x", description="d"), "../tool", {"a": 1})
    path = artifact_path(e.run_id, rec.artifact_file)
    assert path.is_relative_to(e.data / "research_artifacts" / e.run_id)
    return rec


def symlink_escape(e: Env) -> str:
    root = e.data / "research_artifacts" / e.run_id / "plan"
    root.mkdir(parents=True, exist_ok=True)
    link = root / "leak.json"
    if not link.exists():
        link.symlink_to("/etc/hostname")
    return "plan/leak.json"


def other_runs_artifact(e: Env) -> str:
    d = e.data / "research_artifacts" / e.other_run_id / "plan"
    d.mkdir(parents=True, exist_ok=True)
    (d / "secret.json").write_text("{}")
    return f"../{e.other_run_id}/plan/secret.json"


CORRUPT_PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nendobj\ngarbage\x00\xff\xfe trailer <<>>\n%%EOF"
OK = "ok"

# id, action, expected (exception type or "exit N" or OK), message pattern (regex, case-insensitive)
CASES: list[tuple[str, Callable[[Env], object], object, str]] = [
    # ---- Launch form → jobs.make_config
    ("topic-empty", form(""), InputError, "topic is empty"),
    ("topic-whitespace", form(" \n\t  "), InputError, "topic is empty"),
    ("topic-huge", form("x" * 200_000), InputError, "limit is 500"),
    ("topic-null-byte", form("HER2\x00 breast cancer"), InputError, r"control character \(U\+0000"),
    ("topic-escape-codes", form("\x1b[31mred\x1b[0m"), InputError, "control character"),
    ("topic-del-c1", form("abc\x7f\x85def"), InputError, "control character"),
    ("topic-lone-surrogate", form("caf\udce9"), InputError, "not valid UTF-8"),
    ("topic-path-traversal", form("../../etc/passwd"), InputError, "path component"),
    ("topic-windows-traversal", form("..\\..\\boot.ini"), InputError, "path component"),
    (
        "topic-rtl-override-ok",
        form("\u202eHER2 \u05e1\u05e8\u05d8\u05df \u0633\u0631\u0637\u0627\u0646\u202c"),
        OK,
        "",
    ),
    ("topic-not-text", form(12345), InputError, "must be text"),
    ("perspectives-zero", form(max_perspectives=0), InputError, "from 1 to 12"),
    ("turns-word", form(max_turns="ten"), InputError, "whole number"),
    ("turns-bool", form(max_turns=True), InputError, "whole number"),
    ("template-traversal", form(template="../../etc"), InputError, "choose one of"),
    ("engine-unknown", form(engine="gpt-9"), InputError, "unknown engine"),
    (
        "model-unknown",
        with_env("RESEARCH_LLM_MODEL", "nonexistent-provider/xyz", form(engine="litellm")),
        InputError,
        "unknown model",
    ),
    (
        "api-key-missing",
        without_env(
            "OPENAI_API_KEY",
            with_env("RESEARCH_LLM_MODEL", "openai/gpt-4o-mini", form(engine="litellm")),
        ),
        InputError,
        "needs OPENAI_API_KEY",
    ),
    ("mode-unknown", form(mode="turbo"), InputError, "unknown mode"),
    ("costorm-alpha-out-of-range", form(costorm={"alpha": 5}), InputError, "alpha"),
    (
        "search-backend-traversal",
        form(search="local,../../x"),
        InputError,
        "unknown search backend",
    ),
    ("corpora-traversal", form(corpora="../../etc"), InputError, "not valid"),
    ("budget-negative", form(budget_usd=-1), InputError, "budget"),
    # ---- corpora (Launch corpus path / RESEARCH_CORPUS)
    ("corpus-missing", form(corpus="/nonexistent/docs.jsonl"), CorpusError, "does not exist"),
    ("corpus-null-byte", form(corpus="docs\x00.jsonl"), CorpusError, "NUL"),
    ("corpus-empty-jsonl", corpus_file("empty.jsonl", b""), CorpusError, "is empty"),
    ("corpus-first-line-not-json", corpus_file("bad.jsonl", b"{oops\n"), CorpusError, "not JSON"),
    (
        "corpus-binary",
        corpus_file("bin.jsonl", b"\xff\xfe\x00\x01garbage"),
        CorpusError,
        "not UTF-8",
    ),
    ("corpus-wrong-type", corpus_file("paper.pdf", CORRUPT_PDF), CorpusError, "not a .jsonl file"),
    ("corpus-jsonl-bad-lines", jsonl_with_bad_lines, OK, ""),
    # ---- uploads (research.ingest)
    ("upload-corrupt-pdf", ingest({"broken.pdf": CORRUPT_PDF}), CorpusError, "broken.pdf"),
    ("upload-unsupported-type", ingest({"tool.exe": b"MZ\x90\x00"}), CorpusError, "tool.exe"),
    (
        "upload-name-traversal",
        ingest({"a.txt": b"hello"}, name="../../evil"),
        InputError,
        "not valid",
    ),
    # ---- artifact requests (viewer / read_artifact)
    ("artifact-traversal", artifact("../../../../etc/passwd"), ArtifactError, "outside this run"),
    ("artifact-absolute", artifact("/etc/passwd"), ArtifactError, "not an artifact name"),
    ("artifact-null-byte", artifact("plan/x\x00.json"), ArtifactError, "not an artifact name"),
    ("artifact-other-run", artifact(other_runs_artifact), ArtifactError, "outside this run"),
    ("artifact-symlink-out", artifact(symlink_escape), ArtifactError, "outside this run"),
    (
        "artifact-bad-regex",
        artifact(lambda e: "plan/ok.json", "("),
        ArtifactError,
        "not a valid regex",
    ),
    ("artifact-plan-title-traversal", traversal_plan_title, OK, ""),
    # ---- CLI
    ("cli-empty-topic", cli_run("run", ""), "exit 2", "topic is empty"),
    ("cli-turns-word", cli_run("run", GOOD_TOPIC, "--max-turns", "abc"), "exit 2", "whole number"),
    ("cli-show-traversal", cli_run("show", "../../etc/passwd"), "exit 2", "not a run id"),
    ("cli-show-unknown", cli_run("show", "0123456789abcdef"), "exit 2", "no run"),
    ("cli-resume-unknown", cli_run("resume", "0123456789abcdef"), "exit 2", "no run"),
    ("cli-resume-finished", cli_run("resume", "{run}"), "exit 2", "only interrupted or failed"),
    ("cli-list-negative", cli_run("list", "--limit", "-5"), "exit 2", "whole number"),
    ("cli-unknown-command", cli_run("explode"), "exit 2", "invalid choice"),
    ("cli-export-traversal-id", cli_run("export", "../{run}"), "exit 2", "not a run id"),
    # ---- config
    (
        "redis-unreachable",
        with_env("REDIS_URL", "redis://127.0.0.1:1/0", cli_run("list")),
        "exit 1",
        "cannot reach redis",
    ),
    (
        "data-dir-read-only",
        with_env("RESEARCH_DATA_DIR", "/sys/research-data", form()),
        InputError,
        "not a writable folder",
    ),
    (
        "data-dir-is-a-file",
        lambda e: with_env("RESEARCH_DATA_DIR", str(e.corpus), form())(e),
        InputError,
        "not a writable folder",
    ),
    (
        "job-backend-unknown",
        with_env("RESEARCH_JOB_BACKEND", "celery", lambda e: jobs.start_run(form()(e))),
        InputError,
        "not a job backend",
    ),
]


@pytest.fixture()
def env(data_dir, corpus_path, capsys, monkeypatch, r, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.chdir(outside)  # anything written to the cwd would land here
    store = RunStore(r)
    stored = store.create_run(jobs.make_config(GOOD_TOPIC, corpus=str(corpus_path)))
    store.set_status(stored.run_id, "complete")
    other = store.create_run(jobs.make_config(GOOD_TOPIC, corpus=str(corpus_path)))
    store.set_status(other.run_id, "complete")
    scratch = data_dir / "scratch"
    scratch.mkdir()
    (data_dir / "research_artifacts" / stored.run_id / "plan").mkdir(parents=True)
    (data_dir / "research_artifacts" / stored.run_id / "plan" / "ok.json").write_text('{"a": 1}')
    return Env(
        corpus=corpus_path,
        data=data_dir,
        scratch=scratch,
        run_id=stored.run_id,
        other_run_id=other.run_id,
        capsys=capsys,
        monkeypatch=monkeypatch,
    )


def test_the_table_has_at_least_30_cases():
    assert len(CASES) >= 30 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case_id,action,expected,pattern", CASES, ids=[c[0] for c in CASES])
def test_bad_input(case_id, action, expected, pattern, env, r):
    store = RunStore(r)
    before = r.hgetall(f"run:{env.run_id}")
    outside = Path.cwd()
    if expected == OK:
        action(env)
    elif isinstance(expected, str) and expected.startswith("exit "):
        code = action(env)
        err = env.capsys.readouterr().err
        assert code == int(expected.split()[1]), err
        assert re.search(pattern, err, re.I), err
        assert re.match(r"(usage: .*\n)?error \[[a-z_]+\]: ", err, re.S), (
            err
        )  # the CLI's one format
    else:
        with pytest.raises(expected) as info:
            action(env)
        message = info.value.message if isinstance(info.value, ResearchError) else str(info.value)
        assert re.search(pattern, message, re.I), message
        assert len(message) < 1000
    # nothing written outside the data dir, the stored run untouched
    assert list(outside.iterdir()) == []
    assert r.hgetall(f"run:{env.run_id}") == before
    assert store.get_run(env.run_id).status == "complete"


def test_unreachable_redis_is_a_store_error(monkeypatch):

    with pytest.raises(StoreError, match="Cannot reach Redis"):
        make_client("redis://127.0.0.1:1/0")
