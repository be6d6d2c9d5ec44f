"""Seed 001 compression and offload: filenames, raw files always written, cards, context messages."""

from __future__ import annotations

import json

import pytest

from research.artifacts import (
    ArtifactStore,
    artifact_filename,
    artifact_path,
    artifacts_dir,
    context_message,
    read_artifact,
    slug,
)
from research.config import load_settings
from research.engines.extractive import ExtractiveEngine
from research.errors import ArtifactError
from research.models import RunConfig, Step
from research.store.runs import RunStore

HOSTILE_TITLES = [
    "../../etc/passwd",
    "/abs/path",
    "Plan: HER2/neu — Überblick!",
    "a\x00b\nc\r\td",
    "..",
    "",
    "   ",
    "CON",
    "x" * 500,
    "רפואה ‏עברית",
    "<script>alert(1)</script>",
]


def test_filename_convention_seed_001_5_3():
    name = artifact_filename(
        "Research plan: Trastuzumab in HER2+ breast cancer",
        3,
        "Clinical Efficacy",
        "search_local",
        "json",
    )
    assert name == (
        "research_plan_trastuzumab_in_her2_breast_cancer__step3_clinical_efficacy"
        "__search_local.json"
    )
    assert artifact_filename("P", 3, "S", "search_local", "json", seq=2).endswith(
        "__search_local__2.json"
    )
    assert name == name.lower() and " " not in name


@pytest.mark.parametrize("title", HOSTILE_TITLES)
def test_hostile_plan_titles_stay_inside(title):
    s = slug(title)
    assert s and "/" not in s and "." not in s and s == s.lower() and len(s) <= 48
    name = artifact_filename(title, 1, title, title, "json")
    assert "/" not in name and "\x00" not in name and len(name.encode()) < 255


def test_artifact_path_refuses_escape(data_dir):
    rid = "0123456789abcdef"
    root = artifacts_dir(rid)
    (root / "p").mkdir(parents=True)
    (root / "p" / "f.txt").write_text("x")
    assert artifact_path(rid, "p/f.txt") == (root / "p" / "f.txt").resolve()
    (data_dir / "secret.txt").write_text("s")
    for bad in [
        "../../secret.txt",
        "/etc/passwd",
        "p/../../../secret.txt",
        "",
        "p/\x00",
        "p/missing.txt",
    ]:
        with pytest.raises(ArtifactError):
            artifact_path(rid, bad)


@pytest.fixture(scope="module")
def engine():

    return ExtractiveEngine()


def test_record_writes_raw_always_and_injects_only_useful(data_dir, r, engine, corpus_path):
    store = RunStore(r)
    rid = store.create_run(RunConfig(topic="Trastuzumab")).run_id
    arts = ArtifactStore(rid, "../Research plan: Trastuzumab", engine, store, load_settings())
    step = Step(
        step_id=2,
        title="Clinical Efficacy",
        description="Find trial results and response rates of trastuzumab in HER2-positive breast cancer",
    )
    docs = [json.loads(line) for line in corpus_path.open() if "trastuzumab" in line.lower()][:4]
    useful_raw = {"query": "trastuzumab efficacy", "results": docs}
    rec1, msg1 = arts.record(step, "search_local", useful_raw, tool_input="trastuzumab efficacy")
    rec2, msg2 = arts.record(step, "search_local", {"query": "zzz", "results": []})
    # raw files: both written, deterministic names with __2, inside the run dir
    root = artifacts_dir(rid)
    p1, p2 = root / rec1.artifact_file, root / rec2.artifact_file
    assert p1.is_file() and p2.is_file()
    assert p1.name == "research_plan_trastuzumab__step2_clinical_efficacy__search_local.json"
    assert p2.name.endswith("__search_local__2.json")
    assert json.loads(p1.read_text())["results"][0]["id"] == docs[0]["id"]
    assert p1.resolve().is_relative_to(root.resolve())
    # cards: useful one injected with exactly the four fields; useless one not injected
    assert rec1.card.is_useful and msg1["role"] == "assistant"
    content = json.loads(msg1["content"])
    assert set(content) == {"summary_title", "summary", "extraction", "artifact_file"}
    assert content["artifact_file"] == p1.name
    assert "search_local" not in json.dumps(
        {k: v for k, v in content.items() if k != "artifact_file"}
    )
    assert "plan_title" not in content and "tool_name" not in content
    assert rec2.card.is_useful is False and msg2 is None
    # context reduction: the card is far smaller than the raw output
    assert rec1.card_tokens < 0.2 * rec1.raw_tokens
    assert [c.artifact_file for c in store.get_cards(rid)] == [
        rec1.artifact_file,
        rec2.artifact_file,
    ]
    # read_artifact (docs/design.md § Working memory) greps by the bare filename from the context message
    hits = read_artifact(rid, content["artifact_file"], pattern="trastuzumab")
    assert "trastuzumab" in hits.lower()
    assert context_message(rec2) is None
