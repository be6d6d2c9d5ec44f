"""A run's references for reference managers (Zotero, EndNote, Mendeley): RIS (``rispy``),
BibTeX (``bibtexparser`` 2) and CSL-JSON (the citation-style-language item schema).

Each reference carries what its source has: PMID, NCT id, DOI, URL, title, authors, year
(and month/day) and journal. They come from the reference itself (title, URL, ``external_id``:
``PMID:…``/``NCT…``/``DOI:…``, or a bare PMID for a local PubMed document) and from the search
result the source was found in, read from the run's recorded search artifact (``published``,
``authors``, ``journal``, a ``DOI:`` document id). What a source does not carry is left out,
never guessed. Entries are numbered like the report's references (``ref1``, ``ref2``…).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import bibtexparser
import rispy
from bibtexparser.model import Entry
from bibtexparser.model import Field as BibField

from research.artifacts import artifact_path
from research.errors import ResearchError
from research.export.bundle import ReportBundle
from research.models import Reference

_PMID_URL = re.compile(r"pubmed\.ncbi\.nlm\.nih\.gov/(\d+)")
_NCT = re.compile(r"\b(NCT\d{8})\b", re.I)
_DOI = re.compile(r"\b(10\.\d{4,9}/\S+)")
_DATE = re.compile(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?")
_BIB_SPECIAL = {c: "\\" + c for c in "{}%&#_$"}


@dataclass
class RefMeta:
    """What one reference carries (empty strings / [] where the source has nothing)."""

    number: int
    title: str
    url: str
    source_type: str
    pmid: str = ""
    nct: str = ""
    doi: str = ""
    published: str = ""
    authors: list[str] = field(default_factory=list)
    journal: str = ""

    @property
    def year(self) -> str:
        m = _DATE.match(self.published or "")
        return m.group(1) if m else ""

    def date_parts(self) -> list[int]:
        m = _DATE.match(self.published or "")
        return [int(x) for x in m.groups() if x] if m else []


def _ids(ref: Reference) -> tuple[str, str, str]:
    """``(pmid, nct, doi)`` from the reference's external id and URL."""
    ext = (ref.external_id or "").strip()
    pmid = nct = doi = ""
    if ext.upper().startswith("PMID:"):
        pmid = ext[5:].strip()
    elif ext.upper().startswith("DOI:"):
        doi = ext[4:].strip()
    elif ext.isdigit() and ref.source_type == "pubmed":
        pmid = ext
    if not pmid and (m := _PMID_URL.search(ref.url or "")):
        pmid = m.group(1)
    if m := _NCT.search(f"{ext} {ref.url}"):
        nct = m.group(1).upper()
    if not doi and (m := _DOI.search(ref.url or "")) and "doi.org" in ref.url:
        doi = m.group(1)
    return pmid, nct, doi


def _found_results(bundle: ReportBundle) -> dict[str, dict]:
    """URL → the search result (dict) it came from, read from the cited sources' artifacts."""
    out: dict[str, dict] = {}
    for file in sorted(set(bundle.artifacts.values())):
        try:
            raw = json.loads(artifact_path(bundle.state.run_id, file).read_text(encoding="utf-8"))
        except (OSError, ValueError, ResearchError):
            continue  # a missing or non-JSON artifact only means fewer fields
        for r in raw.get("results", []) if isinstance(raw, dict) else []:
            if isinstance(r, dict) and r.get("url"):
                out.setdefault(r["url"], r)
    return out


def reference_meta(bundle: ReportBundle) -> list[RefMeta]:
    """Every reference of the bundle's report (then those follow-ups added) with its metadata."""
    found = _found_results(bundle)
    out = []
    for ref in bundle.all_references():
        pmid, nct, doi = _ids(ref)
        hit = found.get(ref.url, {})
        doc_id = str(hit.get("doc_id") or "")
        if not doi and doc_id.upper().startswith("DOI:"):
            doi = doc_id[4:].strip()
        out.append(
            RefMeta(
                number=ref.number,
                title=ref.title or "untitled",
                url=ref.url,
                source_type=ref.source_type,
                pmid=pmid,
                nct=nct,
                doi=doi,
                published=str(hit.get("published") or ""),
                authors=[str(a) for a in hit.get("authors") or []],
                journal=str(hit.get("journal") or ""),
            )
        )
    return out


# ---------------------------------------------------------------------------------- RIS
def _ris_entry(m: RefMeta) -> dict:
    entry: dict = {
        "type_of_reference": "JOUR" if m.source_type == "pubmed" else "ELEC",
        "id": f"ref{m.number}",
        "title": m.title,
    }
    if m.authors:
        entry["authors"] = m.authors
    if m.year:
        entry["year"] = m.year
    if m.published:
        entry["date"] = m.published.replace("-", "/")
    if m.journal:
        entry["journal_name"] = m.journal
    if m.doi:
        entry["doi"] = m.doi
    if m.url:
        entry["urls"] = [m.url]
    if m.pmid or m.nct:
        entry["accession_number"] = m.pmid or m.nct
    notes = [x for x in (f"PMID: {m.pmid}" if m.pmid else "", m.nct) if x]
    notes.append(f"Reference [{m.number}] of the Research Desk report")
    entry["notes"] = notes
    return entry


def ris(metas: list[RefMeta]) -> str:
    """The references as an RIS file (``rispy.dumps``): JOUR for PubMed records, ELEC else;
    PMID / NCT id in AN and N1."""
    return rispy.dumps([_ris_entry(m) for m in metas])


# ---------------------------------------------------------------------------------- BibTeX
def _bib_text(text: str) -> str:
    """Escape BibTeX/LaTeX specials of a text field (UTF-8 letters are kept as they are).

    Runs of hyphens are split with ``{}`` because LaTeX reads ``--`` as an en dash and ``---`` as
    an em dash: a title that has two hyphens must read back with two hyphens."""
    text = " ".join(str(text).replace("\\", "/").split())
    return "".join(_BIB_SPECIAL.get(c, c) for c in text).replace("--", "-{}-").replace("--", "-{}-")


def _bib_url(url: str) -> str:
    """A URL inside braces: braces and whitespace percent-encoded so the braces stay balanced."""
    return url.replace("{", "%7B").replace("}", "%7D").replace(" ", "%20")


def bibtex(metas: list[RefMeta]) -> str:
    """The references as a BibTeX file (``bibtexparser.write_string``): ``@article`` for PubMed
    records, ``@misc`` else; PMID in ``pmid`` (and ``eprint`` with ``eprinttype = pubmed`` for
    BibLaTeX), NCT id in ``note``."""
    lib = bibtexparser.Library()
    for m in metas:
        fields = [BibField("title", _bib_text(m.title))]
        if m.authors:
            fields.append(BibField("author", " and ".join(_bib_text(a) for a in m.authors)))
        if m.year:
            fields.append(BibField("year", m.year))
        if m.journal:
            fields.append(BibField("journal", _bib_text(m.journal)))
        if m.doi:
            fields.append(BibField("doi", _bib_url(m.doi)))
        if m.url:
            fields.append(BibField("url", _bib_url(m.url)))
        if m.pmid:
            fields += [
                BibField("pmid", m.pmid),
                BibField("eprint", m.pmid),
                BibField("eprinttype", "pubmed"),
            ]
        if m.nct:
            fields.append(BibField("note", f"ClinicalTrials.gov {m.nct}"))
        kind = "article" if m.source_type == "pubmed" else "misc"
        lib.add(Entry(kind, f"ref{m.number}", fields))
    return bibtexparser.write_string(lib)


# ---------------------------------------------------------------------------------- CSL-JSON
def _csl_author(name: str) -> dict:
    family, _, given = name.rpartition(" ")
    return {"family": family, "given": given} if family else {"literal": name}


def csl_items(metas: list[RefMeta]) -> list[dict]:
    """CSL-JSON items (``https://citationstyles.org`` schema): article-journal for PubMed
    records, webpage else; PMID, DOI, URL, issued date parts, container-title, authors."""
    out = []
    for m in metas:
        item: dict = {
            "id": f"ref{m.number}",
            "type": "article-journal" if m.source_type == "pubmed" else "webpage",
            "title": m.title,
        }
        if m.authors:
            item["author"] = [_csl_author(a) for a in m.authors]
        if m.date_parts():
            item["issued"] = {"date-parts": [m.date_parts()]}
        if m.journal:
            item["container-title"] = m.journal
        if m.doi:
            item["DOI"] = m.doi
        if m.url:
            item["URL"] = m.url
        if m.pmid:
            item["PMID"] = m.pmid
        if m.nct:
            item["number"] = m.nct
            item["note"] = f"ClinicalTrials.gov {m.nct}"
        out.append(item)
    return out


def reference_export(bundle: ReportBundle, fmt: str) -> bytes:
    """``ris`` / ``bibtex`` / ``csljson`` of the bundle's references, UTF-8 bytes.

    Raises:
        ValueError: another format (``research.export.render_export`` checks formats first).
    """
    metas = reference_meta(bundle)
    if fmt == "ris":
        return ris(metas).encode("utf-8")
    if fmt == "bibtex":
        return bibtex(metas).encode("utf-8")
    if fmt == "csljson":
        return (json.dumps(csl_items(metas), ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    raise ValueError(f"not a reference format: {fmt!r}")
