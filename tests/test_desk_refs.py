"""Reference-manager exports of the session's finished trastuzumab (drug template) run: RIS,
BibTeX and CSL-JSON parse back with the libraries that wrote them and carry every PMID, NCT id,
URL and title of the report's references, and the year where the source has one."""

from __future__ import annotations

import json

import bibtexparser
import redis
import rispy
from bibtexparser.middlewares import LatexDecodingMiddleware

from research.export import render_export
from research.export.bundle import load_bundle
from research.export.references import RefMeta, bibtex, reference_meta
from research.store.runs import RunStore


def test_bibtex_titles_with_dashes_and_specials_read_back_as_written():
    """LaTeX reads ``--`` as an en dash: a title's own hyphens and specials must survive."""
    titles = ["TICORE 101--Breast", "A---B", "50% of C&D_e {x}", "en – dash"]
    metas = [RefMeta(number=i, title=t, url="", source_type="web") for i, t in enumerate(titles, 1)]
    lib = bibtexparser.parse_string(bibtex(metas), append_middleware=[LatexDecodingMiddleware()])
    assert [e["title"] for e in lib.entries] == titles


def _store(run) -> RunStore:
    return RunStore(redis.Redis.from_url(run.redis_url, decode_responses=True))


def test_ris_bibtex_csljson_parse_back_with_pmids(finished_run, monkeypatch):
    for k, v in finished_run.env().items():  # artifacts are read from the run's data dir
        monkeypatch.setenv(k, v)
    store, rid = _store(finished_run), finished_run.run_id
    bundle = load_bundle(store, rid)
    refs = bundle.all_references()
    metas = reference_meta(bundle)
    pmids = {m.pmid for m in metas if m.pmid}
    ncts = {m.nct for m in metas if m.nct}
    assert len(refs) >= 5 and len(pmids) >= 3  # the drug run cites PubMed abstracts
    assert all(m.pmid for m in metas if m.source_type == "pubmed")
    dated = {m.pmid: m.year for m in metas if m.pmid and m.year}

    ris = rispy.loads(render_export(store, rid, "ris").decode())
    assert [e["id"] for e in ris] == [f"ref{r.number}" for r in refs]
    assert [e["title"] for e in ris] == [r.title for r in refs]
    assert {e["accession_number"] for e in ris if e["type_of_reference"] == "JOUR"} == pmids
    assert {e.get("accession_number") for e in ris} >= ncts
    assert all(e["urls"] == [r.url] for e, r in zip(ris, refs, strict=True))
    assert {e["accession_number"]: e["year"] for e in ris if "year" in e} == {
        **dated,
        **{m.nct: m.year for m in metas if m.nct and m.year},
    }

    raw = render_export(store, rid, "bibtex").decode()
    lib = bibtexparser.parse_string(raw, append_middleware=[LatexDecodingMiddleware()])
    assert lib.failed_blocks == [] and len(lib.entries) == len(refs)
    plain = bibtexparser.parse_string(raw)  # URLs as written (no LaTeX decoding)
    got = {e.key: e.fields_dict for e in lib.entries}
    assert {f["pmid"].value for f in got.values() if "pmid" in f} == pmids
    for r in refs:
        assert got[f"ref{r.number}"]["title"].value == " ".join(r.title.split())
        assert plain.entries_dict[f"ref{r.number}"].fields_dict["url"].value == r.url

    items = json.loads(render_export(store, rid, "csljson"))
    assert [i["id"] for i in items] == [f"ref{r.number}" for r in refs]
    assert {i["PMID"] for i in items if "PMID" in i} == pmids
    assert all(i["type"] == "article-journal" for i in items if "PMID" in i)
    assert {
        i["PMID"]: str(i["issued"]["date-parts"][0][0])
        for i in items
        if "PMID" in i and "issued" in i
    } == dated
