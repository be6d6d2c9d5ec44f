"""Seed 000 source collector against a real redis-server."""

from __future__ import annotations

import json
import threading

import pytest
import redis

from research.errors import InputError, UnknownQuestionError
from research.store import keys
from research.store.collector import SourceCollector
from research.syllabus import get_template, template_names

RID = "00112233445566aa"


@pytest.fixture()
def col(r):
    c = SourceCollector(r, RID)
    c.init(get_template("drug"))
    return c


def save(c, i, qs, **kw):
    return c.save_source("pubmed", f"{1000 + i}", f"https://pubmed.ncbi.nlm.nih.gov/{1000 + i}/",
                         f"Paper {i}", qs, **kw)


def test_templates():
    assert template_names() == ["drug", "general"]
    drug = get_template("drug")
    assert drug.keys() == ["mechanism.moa", "clinical.efficacy", "clinical.safety", "competitive.landscape",
                           "market.status", "ip.patents"]
    assert [q.min_sources for q in drug.questions] == [5, 5, 5, 5, 3, 3]
    assert len(get_template("general").questions) == 6
    with pytest.raises(InputError, match="drug, general"):
        get_template("nope")


def test_save_source_auto_registers_citation(col, r):
    out = col.save_source("pubmed", "12345678", "https://pubmed.ncbi.nlm.nih.gov/12345678/",
                          "Trastuzumab HER2 binding", ["mechanism.moa"], key_excerpts="KD = 5 nM")
    assert out["source_id"] == "src_001" and out["citation_status"] == "auto_registered"
    assert out["citation_id"].startswith("cit_") and out["assigned_to"] == ["mechanism.moa"]
    assert out["status"] == {"mechanism.moa": "insufficient"}
    assert out["message"] == "✓ Saved source #1 (PubMed) → 1 question"
    cit = json.loads(r.hget(keys.citations(RID), out["citation_id"]))
    assert cit["claim"] == "Trastuzumab HER2 binding" and cit["direct_quote"] == "KD = 5 nM"
    assert r.lrange(keys.question(RID, "mechanism.moa"), 0, -1) == ["src_001"]


def test_existing_citation_and_unknown_citation(col):
    first = save(col, 1, ["mechanism.moa"])
    out = save(col, 2, ["clinical.safety"], citation_id=first["citation_id"])
    assert out["citation_status"] == "existing" and out["citation_id"] == first["citation_id"]
    with pytest.raises(InputError, match="not found"):
        save(col, 3, ["clinical.safety"], citation_id="cit_doesnotexist")
    assert col.get_progress()["total"] == 2  # the failed save wrote nothing


def test_dedup_across_questions(col, r):
    a = save(col, 1, ["mechanism.moa"])
    b = save(col, 1, ["clinical.efficacy", "mechanism.moa"])
    assert a["source_id"] == b["source_id"] and b["citation_id"] == a["citation_id"]
    assert "already saved" in b["message"]
    assert col.get_source(a["source_id"]).relevant_questions == ["mechanism.moa", "clinical.efficacy"]
    assert r.llen(keys.sources(RID)) == 1
    assert r.lrange(keys.question(RID, "mechanism.moa"), 0, -1) == [a["source_id"]]
    # same URL without an external id is the same source too
    c1 = col.save_source("web", "", "https://Example.org/a/", "A", ["market.status"])
    c2 = col.save_source("web", "", "https://example.org/a", "A", ["ip.patents"])
    assert c1["source_id"] == c2["source_id"]


def test_unknown_question_lists_valid_keys(col):
    with pytest.raises(UnknownQuestionError) as exc:
        save(col, 1, ["clinical.efficacy", "made.up"])
    assert "made.up" in str(exc.value) and "clinical.efficacy" in str(exc.value) and "ip.patents" in str(exc.value)
    assert col.get_progress()["total"] == 0


def test_concurrent_saves_never_duplicate(col, redis_server):
    def worker(t):
        c = SourceCollector(redis.Redis.from_url(redis_server, decode_responses=True), RID)
        for i in range(30):
            save(c, (i * 7 + t) % 40, ["clinical.efficacy" if t % 2 else "clinical.safety"])
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    sources = col.all_sources()
    assert len(sources) == len({s.external_id for s in sources}) == 40
    assert [s.source_id for s in sources] == [f"src_{i:03d}" for i in range(1, 41)]
    for key in ("clinical.efficacy", "clinical.safety"):
        ids = col.r.lrange(keys.question(RID, key), 0, -1)
        assert len(ids) == len(set(ids))


def test_progress_completion_and_short_responses(col):
    for i in range(5):
        save(col, i, ["mechanism.moa", "clinical.efficacy"])
    for i in range(5, 7):
        save(col, i, ["competitive.landscape"])
    p = col.get_progress()
    assert p["total"] == 7
    assert p["questions"]["mechanism.moa"] == "✓ 5 sources"
    assert p["questions"]["competitive.landscape"] == "⚠ 2 sources (need 3 more)"
    assert p["summary"] == "2/6 questions complete, 14 more sources needed"
    assert p["next_focus"] == ["clinical.safety", "competitive.landscape", "market.status"]
    c = col.check_completion()
    assert c["ready"] is False and c["progress"] == "2/6 questions complete (33%)"
    assert c["missing"]["competitive.landscape"] == "Need 3 more sources (currently 2/5)"
    assert c["suggestion"].startswith("Focus on safety profile")
    for resp in (p, c, save(col, 99, get_template("drug").keys())):
        assert len(json.dumps(resp, ensure_ascii=False)) < 500
    fin = col.finalize_sources()
    assert fin["total"] == 8 and len(fin["questions"]["mechanism.moa"]["sources"]) == 6


def test_state_survives_a_new_client(col, redis_server):
    save(col, 1, ["ip.patents"])
    other = SourceCollector(redis.Redis.from_url(redis_server, decode_responses=True), RID)
    assert other.get_progress()["total"] == 1
    assert other.save_source("pubmed", "1001", "u", "Paper 1", ["market.status"])["source_id"] == "src_001"
    assert other.question_counts()["market.status"] == 1
