"""Seed 000 source collector against a real redis-server (no fakes)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import redis

from research.errors import InputError, UnknownQuestionError
from research.models import Question, SourceRecord, Syllabus
from research.planning.syllabus import get_template
from research.store import keys
from research.store.collector import SourceCollector
from research.store.coverage import completion_report, progress_report, response_chars
from research.store.source_input import canonical_url, dedup_key

RID = "00112233445566aa"
DRUG = get_template("drug").keys()


@pytest.fixture()
def col(r):
    c = SourceCollector(r, RID)
    assert c.init(get_template("drug")) is True
    return c


def save(c, i, qs, **kw):
    return c.save_source(
        "pubmed",
        f"{1000 + i}",
        f"https://pubmed.ncbi.nlm.nih.gov/{1000 + i}/",
        f"Paper {i}",
        qs,
        **kw,
    )


def client(url: str, **kw) -> redis.Redis:
    return redis.Redis.from_url(url, decode_responses=True, **kw)


# ----------------------------------------------------------------------------- citations
def test_save_source_auto_registers_citation(col, r):
    out = col.save_source(
        "PubMed",
        "12345678",
        "https://pubmed.ncbi.nlm.nih.gov/12345678/",
        "Trastuzumab HER2 binding characteristics",
        ["mechanism.moa"],
        key_excerpts="KD = 5 nM for HER2 binding",
    )
    assert out == {
        "source_id": "src_001",
        "citation_id": out["citation_id"],
        "citation_status": "auto_registered",
        "assigned_to": ["mechanism.moa"],
        "status": {"mechanism.moa": "insufficient"},
        "message": "✓ Saved source #1 (PubMed) → 1 question",
    }
    assert out["citation_id"].startswith("cit_") and len(out["citation_id"]) == 16
    cit = col.get_citation(out["citation_id"])  # docs/design.md § Collector tools: fields
    assert cit["claim"] == "Trastuzumab HER2 binding characteristics"
    assert (cit["source_type"], cit["source_id"]) == ("pubmed", "12345678")
    assert cit["direct_quote"] == "KD = 5 nM for HER2 binding"
    assert cit["context"] == "Source: https://pubmed.ncbi.nlm.nih.gov/12345678/"
    assert cit["metadata"] == {
        "title": "Trastuzumab HER2 binding characteristics",
        "url": "https://pubmed.ncbi.nlm.nih.gov/12345678/",
        "source_type": "pubmed",
    }
    stored = SourceRecord.model_validate_json(r.lindex(keys.sources(RID), 0))
    assert stored.citation_id == out["citation_id"] and stored.relevant_questions == [
        "mechanism.moa"
    ]
    assert r.lrange(keys.question(RID, "mechanism.moa"), 0, -1) == ["src_001"]
    # without excerpts the title is the quote
    second = save(col, 2, [])
    assert col.get_citation(second["citation_id"])["direct_quote"] == "Paper 2"


def test_explicitly_registered_citation_is_used(col, r):
    cid = col.register_citation(
        claim="Trastuzumab binds HER2 with KD of 5 nM",
        source_type="pubmed",
        source_id="12345678",
        direct_quote="We measured binding affinity...",
    )
    out = col.save_source(
        "pubmed",
        "12345678",
        "https://pubmed.ncbi.nlm.nih.gov/12345678/",
        "T",
        ["mechanism.moa"],
        citation_id=cid,
    )
    assert (out["citation_id"], out["citation_status"]) == (cid, "existing")
    assert col.get_source("src_001").citation_id == cid
    assert r.hlen(keys.citations(RID)) == 1  # nothing auto-registered


@pytest.mark.parametrize("bad", ["cit_doesnotexist", "not a citation id!"])
def test_unknown_citation_is_an_error_and_writes_nothing(col, r, bad):
    save(col, 1, ["mechanism.moa"])
    with pytest.raises(InputError, match="not") as exc:
        save(col, 2, ["clinical.safety"], citation_id=bad)
    assert exc.value.code == "unknown_citation"
    assert r.llen(keys.sources(RID)) == 1 and r.hlen(keys.citations(RID)) == 1
    assert (
        r.hlen(keys.source_index(RID)) == 1 and r.llen(keys.question(RID, "clinical.safety")) == 0
    )


# ----------------------------------------------------------------------------- dedup
def test_dedup_across_questions(col, r):
    a = save(col, 1, ["mechanism.moa"])
    b = save(col, 1, ["clinical.efficacy", "mechanism.moa"])
    assert b["source_id"] == a["source_id"] == "src_001" and b["citation_id"] == a["citation_id"]
    assert b["citation_status"] == "existing"
    assert b["assigned_to"] == ["clinical.efficacy", "mechanism.moa"]
    assert b["message"] == "✓ Source #1 (PubMed) already saved → +1 question (2 total)"
    assert col.get_source("src_001").relevant_questions == ["mechanism.moa", "clinical.efficacy"]
    assert r.llen(keys.sources(RID)) == 1 and r.hlen(keys.citations(RID)) == 1
    assert r.lrange(keys.question(RID, "mechanism.moa"), 0, -1) == ["src_001"]
    assert r.lrange(keys.question(RID, "clinical.efficacy"), 0, -1) == ["src_001"]
    # idempotent: the same save again changes nothing
    c = save(col, 1, ["clinical.efficacy"])
    assert c["message"] == "✓ Source #1 (PubMed) already saved → no new questions"
    assert r.llen(keys.question(RID, "clinical.efficacy")) == 1
    # the external id is matched case-insensitively within a source type
    d = col.save_source(
        "clinicaltrials.gov", "NCT00000001", "https://clinicaltrials.gov/study/NCT00000001", "T", []
    )
    e = col.save_source(
        "ClinicalTrials.gov", "nct00000001", "https://example.org/other", "T", ["market.status"]
    )
    assert d["source_id"] == e["source_id"] == "src_002" and e["message"].startswith(
        "✓ Source #2 (ClinicalTrials.gov)"
    )


def test_dedup_by_canonical_url_without_external_id(col):
    a = col.save_source("web", "", "https://Example.org/a/?b=2&a=1#intro", "A", ["market.status"])
    b = col.save_source("web", "", "https://example.org/a?a=1&b=2", "A again", ["ip.patents"])
    c = col.save_source("web", "", "https://example.org/b", "B", ["ip.patents"])
    assert a["source_id"] == b["source_id"] != c["source_id"]
    assert col.get_source(a["source_id"]).relevant_questions == ["market.status", "ip.patents"]
    # different external ids are different sources even when they share a URL
    x = col.save_source("local", "doc-1", "https://example.org/a", "chunk 1", [])
    y = col.save_source("local", "doc-2", "https://example.org/a", "chunk 2", [])
    assert len({a["source_id"], x["source_id"], y["source_id"]}) == 3


def test_dedup_keys():
    assert (
        canonical_url("HTTPS://PubMed.ncbi.nlm.nih.gov:443/1/#abs")
        == "https://pubmed.ncbi.nlm.nih.gov/1"
    )
    assert dedup_key("PubMed", " 123 ", "u") == "id:pubmed:123"
    assert dedup_key("web", "", "https://x.org/a/") == "url:https://x.org/a"


def test_duplicate_rewrite_keeps_every_other_byte(col, r):
    title = 'He said "relevant_questions": ["x"], ] [ \\ — ünïcode ✓ {"source_id": "src_999"}'
    excerpt = 'quote "a" ] and \n newline'
    col.save_source("web", "", "https://example.org/t", title, ["ip.patents"], key_excerpts=excerpt)
    before = r.lindex(keys.sources(RID), 0)
    col.save_source(
        "web", "", "https://example.org/t", "other title", ["market.status", "mechanism.moa"]
    )
    after = r.lindex(keys.sources(RID), 0)
    rec = SourceRecord.model_validate_json(after)
    assert (rec.title, rec.key_excerpts) == (title, excerpt)
    assert rec.relevant_questions == ["ip.patents", "market.status", "mechanism.moa"]
    assert json.loads(after) | {"relevant_questions": ["ip.patents"]} == json.loads(before)


def test_concurrent_saves_never_duplicate(col, redis_server):
    n_threads, per_thread, distinct = 8, 30, 40
    barrier = threading.Barrier(n_threads)
    errors = []

    def worker(t):
        c = SourceCollector(
            client(redis_server), RID
        )  # own client and collector, like another thread/process
        barrier.wait()
        try:
            for i in range(per_thread):
                save(c, (i * 7 + t) % distinct, [DRUG[(i + t) % 6], DRUG[t % 6]])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    sources = col.all_sources()
    assert len(sources) == len({s.external_id for s in sources}) == distinct
    assert [s.source_id for s in sources] == [f"src_{i:03d}" for i in range(1, distinct + 1)]
    assert (
        col.r.hlen(keys.citations(RID)) == distinct
    )  # one auto citation per source, none for duplicates
    lists = {k: col.r.lrange(keys.question(RID, k), 0, -1) for k in DRUG}
    for k, ids in lists.items():
        assert len(ids) == len(set(ids)), k
    for s in sources:  # the stored source and the question lists agree
        assert sorted(s.relevant_questions) == sorted(
            k for k, ids in lists.items() if s.source_id in ids
        )


# ----------------------------------------------------------------------------- validation
def test_unknown_question_lists_valid_keys(col, r):
    for bad in (["clinical.efficacy", "made.up"], ["Clinical Efficacy"], ["x" * 200]):
        with pytest.raises(UnknownQuestionError) as exc:
            save(col, 1, bad)
        assert exc.value.code == "unknown_question"
        assert all(k in str(exc.value) for k in DRUG)
    assert r.llen(keys.sources(RID)) == 0 and r.hlen(keys.citations(RID)) == 0


def test_bad_arguments(col):
    with pytest.raises(InputError, match="list of question keys"):
        save(col, 1, "clinical.efficacy")
    for kwargs in ({"title": "  "}, {"url": ""}, {"source_type": None}):
        args = {
            "source_type": "pubmed",
            "external_id": "1",
            "url": "https://x.org",
            "title": "T",
            "relevant_questions": [],
        } | kwargs
        with pytest.raises(InputError):
            col.save_source(**args)
    with pytest.raises(UnknownQuestionError):
        save(col, 1, [["clinical.efficacy"]])
    assert col.all_sources() == []
    # the first draft (docs/design.md § Collector tools) passed key_excerpts as a list: joined, not rejected
    out = save(
        col, 1, [" clinical.efficacy ", "clinical.efficacy"], key_excerpts=["ORR 45%.", "PFS 9 mo."]
    )
    assert out["assigned_to"] == ["clinical.efficacy"]
    assert col.get_source("src_001").key_excerpts == "ORR 45%. PFS 9 mo."


def test_empty_questions_allowed(col, r):
    out = save(col, 1, [])
    assert out["assigned_to"] == [] and out["status"] == {}
    assert out["message"] == "✓ Saved source #1 (PubMed) → 0 questions"
    assert col.get_source("src_001").relevant_questions == []
    assert col.question_counts() == dict.fromkeys(DRUG, 0)
    # assigned later by a duplicate save
    save(col, 1, ["ip.patents"])
    assert col.get_source("src_001").relevant_questions == ["ip.patents"]


def test_not_initialised_and_get_source_errors(r):
    c = SourceCollector(r, RID)
    assert c.all_sources() == []
    for call in (lambda: save(c, 1, []), c.get_progress, c.check_completion, c.finalize_sources):
        with pytest.raises(InputError) as exc:
            call()
        assert exc.value.code == "collector_not_initialised"
    c.init(get_template("drug"))
    save(c, 1, [])
    assert c.get_source("src_001").title == "Paper 1"
    for bad in ("src_002", "src_000", "12", None):
        with pytest.raises(InputError) as exc:
            c.get_source(bad)
        assert exc.value.code == "unknown_source"
    with pytest.raises(InputError):
        SourceCollector(r, "not-a-run-id")


def test_init_is_idempotent_and_guards_the_syllabus(col):
    save(col, 1, ["ip.patents"])
    assert col.init(get_template("drug")) is False
    assert col.get_progress()["total"] == 1
    with pytest.raises(InputError) as exc:
        col.init(get_template("general"))
    assert exc.value.code == "syllabus_conflict"
    with pytest.raises(InputError):
        col.init(Syllabus(name="empty", questions=[]))
    dup_q = Question(key="a.b", label="A", description="d", min_sources=1)
    with pytest.raises(InputError):
        col.init(Syllabus(name="dup", questions=[dup_q, dup_q]))


def test_syllabus_can_change_before_the_first_source(r):
    c = SourceCollector(r, RID)
    c.init(get_template("drug"))
    assert c.get_progress()["questions"].keys() == set(DRUG)
    other = SourceCollector(r, RID)
    assert other.init(get_template("general")) is True
    assert set(c.get_progress()["questions"]) == set(
        get_template("general").keys()
    )  # stale cache refreshed
    with pytest.raises(UnknownQuestionError):
        save(c, 1, ["mechanism.moa"])


# ----------------------------------------------------------------------------- progress / completion
def test_progress_and_completion_math_on_drug_template(col):
    for i in range(5):
        save(col, i, ["mechanism.moa", "clinical.efficacy"])
    for i in range(5, 7):
        save(col, i, ["competitive.landscape"])
    save(col, 7, ["market.status"])
    assert col.get_progress() == {
        "total": 8,
        "questions": {
            "mechanism.moa": "✓ 5 sources",
            "clinical.efficacy": "✓ 5 sources",
            "clinical.safety": "⚠ 0 sources (need 5 more)",
            "competitive.landscape": "⚠ 2 sources (need 3 more)",
            "market.status": "⚠ 1 source (need 2 more)",
            "ip.patents": "⚠ 0 sources (need 3 more)",
        },
        "summary": "2/6 questions complete, 13 more sources needed",
        "next_focus": ["clinical.safety", "competitive.landscape", "ip.patents"],
    }
    assert col.check_completion() == {
        "ready": False,
        "progress": "2/6 questions complete (33%)",
        "missing": {
            "clinical.safety": "Need 5 more sources (currently 0/5)",
            "competitive.landscape": "Need 3 more sources (currently 2/5)",
            "market.status": "Need 2 more sources (currently 1/3)",
            "ip.patents": "Need 3 more sources (currently 0/3)",
        },
        "suggestion": "Focus on safety profile and competitive landscape",
    }
    assert save(col, 0, ["clinical.safety"])["status"] == {"clinical.safety": "insufficient"}
    for i in range(20, 26):
        out = save(
            col, i, ["clinical.safety", "competitive.landscape", "market.status", "ip.patents"]
        )
    assert out["status"] == dict.fromkeys(
        ["clinical.safety", "competitive.landscape", "market.status", "ip.patents"], "sufficient"
    )
    p, c = col.get_progress(), col.check_completion()
    assert (
        p["summary"] == "6/6 questions complete, no more sources needed" and p["next_focus"] == []
    )
    assert p["total"] == 14 and p["questions"]["clinical.safety"] == "✓ 7 sources"
    assert c == {
        "ready": True,
        "progress": "6/6 questions complete (100%)",
        "missing": {},
        "suggestion": "All 6 questions have enough sources; you can finish.",
    }


def test_finalize_sources_organises_by_question(col):
    save(col, 1, ["mechanism.moa"])
    save(col, 2, ["clinical.efficacy", "mechanism.moa"])
    save(col, 1, ["ip.patents"])
    fin = col.finalize_sources()
    assert fin["total"] == 2 and [s["source_id"] for s in fin["sources"]] == ["src_001", "src_002"]
    assert list(fin["questions"]) == DRUG
    moa = fin["questions"]["mechanism.moa"]
    assert (moa["label"], moa["min_sources"]) == ("Mechanism of Action", 5)
    assert [s["source_id"] for s in moa["sources"]] == ["src_001", "src_002"]
    assert fin["questions"]["ip.patents"]["sources"][0]["relevant_questions"] == [
        "mechanism.moa",
        "ip.patents",
    ]
    assert fin["questions"]["clinical.safety"]["sources"] == []
    json.dumps(fin)  # JSON-able for the dashboard and the CLI


def test_responses_stay_under_500_chars_with_a_big_syllabus(r):
    qs = [
        Question(
            key=f"area{i:02d}.{'q' * 50}",
            label=f"Very long question label number {i} " + "x" * 60,
            description="d",
            min_sources=5,
        )
        for i in range(40)
    ]
    c = SourceCollector(r, RID)
    c.init(Syllabus(name="big", questions=qs))
    keys_ = [q.key for q in qs]
    for i in range(6):
        out = c.save_source("pubmed", str(i), f"https://x.org/{i}", "T" * 300, keys_[: 30 + i])
        assert response_chars(out) < 500 and out["source_id"] == f"src_{i + 1:03d}"
    assert out["truncated"] and set(out["status"]) <= set(keys_)
    p, done = c.get_progress(), c.check_completion()
    for resp in (p, done):
        assert response_chars(resp) < 500 and resp["truncated"]
    assert p["next_focus"] == keys_[35:38]  # largest deficits kept, in order
    assert p["summary"] == "31/40 questions complete, 35 more sources needed"
    assert all(v.startswith("⚠") for v in p["questions"].values())  # ✓ entries are dropped first
    assert set(done["missing"]) <= set(keys_[35:]) and done["ready"] is False


def test_drug_responses_are_short(col):
    for resp in (col.get_progress(), col.check_completion()):  # the longest: nothing saved yet
        assert response_chars(resp) < 500 and "truncated" not in resp
    out = save(col, 1, DRUG[:5])
    for resp in (out, col.get_progress(), col.check_completion()):
        assert response_chars(resp) < 500 and "truncated" not in resp
    for i in range(2, 7):
        save(col, i, ["ip.patents"])
    # all six questions at once is 500+ characters in the seed's shape: status entries go,
    # sufficient ones first (ip.patents), and the response says so
    out = save(col, 9, DRUG)
    assert response_chars(out) < 500 and out["truncated"] == {"status": 2}
    assert out["assigned_to"] == DRUG and list(out["status"]) == DRUG[:4]


def test_pure_reports_handle_singulars():
    syl = Syllabus(
        name="s",
        questions=[Question(key="a.b", label="IP Coverage", description="d", min_sources=1)],
    )
    assert (
        progress_report(syl, {"a.b": 0}, 0)["summary"]
        == "0/1 questions complete, 1 more source needed"
    )
    assert completion_report(syl, {"a.b": 0})["suggestion"] == "Focus on IP coverage"
    assert (
        completion_report(syl, {"a.b": 1})["suggestion"]
        == "All 1 question have enough sources; you can finish."
    )


# ----------------------------------------------------------------------------- Redis cost
class CountingConnection(redis.UnixDomainSocketConnection):
    """A real connection that counts requests sent (one per round trip, pipelines included)."""

    sent = 0

    def send_packed_command(self, command, check_health=True):
        type(self).sent += 1
        return super().send_packed_command(command, check_health)


def test_round_trips_and_no_source_reads(col, redis_server):
    for i in range(50):
        save(col, i, [DRUG[i % 6]])
    counted = SourceCollector(client(redis_server, connection_class=CountingConnection), RID)
    counted.get_progress()  # warm: syllabus read + script load
    counted.r.script_load(counted._save.script)
    for call, args in (
        (counted.save_source, ("pubmed", "9", "https://x.org/9", "T", ["ip.patents"])),
        (counted.get_progress, ()),
        (counted.check_completion, ()),
        (counted.question_counts, ()),
    ):
        CountingConnection.sent = 0
        call(*args)
        assert CountingConnection.sent == 1, call.__name__
    col.r.config_resetstat()
    col.get_progress()
    stats = col.r.info("commandstats")
    assert "cmdstat_lrange" not in stats and "cmdstat_lindex" not in stats  # never reads sources
    assert (
        stats["cmdstat_llen"]["calls"] == 7
    )  # total + 6 questions, whatever the number of sources


# ----------------------------------------------------------------------------- another process
def test_another_process_continues_from_redis(col, redis_server):
    save(col, 1, ["ip.patents"])
    code = f"""
import json, redis
from research.store.collector import SourceCollector
c = SourceCollector(redis.Redis.from_url({redis_server!r}, decode_responses=True), {RID!r})
a = c.save_source("pubmed", "1001", "u", "Paper 1", ["market.status"])
b = c.save_source("pubmed", "2002", "https://pubmed.ncbi.nlm.nih.gov/2002/", "Paper 2", ["market.status"])
print(json.dumps([a, b, c.get_progress()], ensure_ascii=False))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert proc.returncode == 0, proc.stderr
    a, b, progress = json.loads(proc.stdout)
    assert a["source_id"] == "src_001" and "already saved" in a["message"]
    assert b["source_id"] == "src_002" and b["citation_status"] == "auto_registered"
    assert (
        progress["total"] == 2
        and progress["questions"]["market.status"] == "⚠ 2 sources (need 1 more)"
    )
    assert col.get_source("src_001").relevant_questions == ["ip.patents", "market.status"]
    assert col.question_counts()["market.status"] == 2
