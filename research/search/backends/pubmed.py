"""PubMed through NCBI E-utilities: ``esearch`` (query → PMIDs) then ``efetch`` (PMIDs →
PubmedArticleSet XML → PMID, DOI, title, abstract, journal, date).

E-utilities reference: https://www.ncbi.nlm.nih.gov/books/NBK25499/ (esearch, efetch; 3
requests/s without an API key, 10 with ``NCBI_API_KEY``). Base URL
``https://eutils.ncbi.nlm.nih.gov/entrez/eutils`` (override: ``RESEARCH_PUBMED_URL``).
Results: ``source_type="pubmed"``, ``external_id="PMID:<pmid>"``,
``url=https://pubmed.ncbi.nlm.nih.gov/<pmid>/``; the DOI goes into ``doi`` of the dedup keys
(``research.search.multi.identity_keys``) via the text ``DOI:<doi>`` in ``doc_id``.
The efetch parser also reads PMC ``pmc-articleset`` bodies (JATS), keyed by PMID when present.
"""

from __future__ import annotations

from lxml import etree

from research.config import load_settings
from research.models import SearchResult
from research.search.http import BackendError, clean_query, env_url, request

DEFAULT_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
SNIPPET_CHARS = 600
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=False)


def _xml(body: bytes | str) -> etree._Element:
    data = body.encode() if isinstance(body, str) else body
    try:
        return etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise BackendError("pubmed", "bad_response", f"unparseable XML ({exc.msg[:80]})") from None


def _text(el: etree._Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def parse_esearch(body: bytes | str) -> dict:
    """An ``eSearchResult`` body → ``{"count": int, "ids": [PMID strings], "errors": [str],
    "webenv": str | None, "query_key": str | None}``. A body that is not an eSearchResult
    (e.g. ``{"error": ...}`` from NCBI) raises BackendError ``bad_response``."""
    root = _xml(body)
    if root.tag != "eSearchResult":
        raise BackendError("pubmed", "bad_response", f"expected eSearchResult, got <{root.tag}>")
    top_error = root.findtext("ERROR")
    if top_error:
        raise BackendError("pubmed", "http_error", f"esearch error: {top_error[:200]}")
    errors = [f"{e.tag}: {_text(e)}" for e in root.findall("ErrorList/*")]
    return {
        "count": int(root.findtext("Count") or 0),
        "ids": [i.text.strip() for i in root.findall("IdList/Id") if i.text],
        "errors": errors,
        "webenv": root.findtext("WebEnv"),
        "query_key": root.findtext("QueryKey"),
    }


def _date(pub: etree._Element | None) -> str | None:
    """``YYYY[-MM[-DD]]`` from a PubDate/ArticleDate (``MedlineDate`` → its first 4-digit year)."""
    if pub is None:
        return None
    year = pub.findtext("Year") or pub.findtext("year")
    if not year:
        medline = pub.findtext("MedlineDate") or ""
        digits = [w[:4] for w in medline.split() if w[:4].isdigit()]
        return digits[0] if digits else None
    months = {
        m: i
        for i, m in enumerate(
            ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
            start=1,
        )
    }
    month = (pub.findtext("Month") or pub.findtext("month") or "").strip()
    mnum = int(month) if month.isdigit() else months.get(month[:3].lower())
    day = (pub.findtext("Day") or pub.findtext("day") or "").strip()
    out = year.strip()
    if mnum:
        out += f"-{mnum:02d}"
        if day.isdigit():
            out += f"-{int(day):02d}"
    return out


def _result(
    pmid: str,
    title: str,
    abstract: str,
    journal: str,
    doi: str,
    published: str | None,
    query: str,
    extra_id: str = "",
    authors: list[str] | None = None,
) -> SearchResult:
    pmid_url = (
        f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
        if pmid
        else (
            f"https://doi.org/{doi}"
            if doi
            else f"https://www.ncbi.nlm.nih.gov/pmc/articles/{extra_id}/"
        )
    )
    ext = f"PMID:{pmid}" if pmid else (f"DOI:{doi}" if doi else extra_id)
    snippet = (
        abstract[:SNIPPET_CHARS].rsplit(" ", 1)[0] + "…"
        if len(abstract) > SNIPPET_CHARS
        else abstract
    )
    text = "\n".join(
        x for x in [title, f"{journal} ({published or 'n.d.'})" if journal else "", abstract] if x
    )
    return SearchResult(
        url=pmid_url,
        title=title or f"PMID {pmid}",
        snippets=[snippet] if snippet else [],
        text=text,
        source_type="pubmed",
        external_id=ext,
        doc_id=f"DOI:{doi}" if doi else ext,
        published=published,
        authors=authors or [],
        journal=journal,
        backend="pubmed",
        query=query,
    )


def _medline(art: etree._Element, query: str) -> SearchResult | None:
    cit = art.find("MedlineCitation")
    if cit is None:  # PubmedBookArticle
        cit = art.find("BookDocument")
        if cit is None:
            return None
        pmid = (cit.findtext("PMID") or "").strip()
        title = _text(cit.find("Book/BookTitle")) or _text(cit.find("ArticleTitle"))
        abstract = " ".join(_text(a) for a in cit.findall("Abstract/AbstractText"))
        return _result(
            pmid,
            title,
            abstract,
            _text(cit.find("Book/Publisher/PublisherName")),
            "",
            _date(cit.find("Book/PubDate")),
            query,
        )
    pmid = (cit.findtext("PMID") or "").strip()
    article = cit.find("Article")
    title = _text(article.find("ArticleTitle")) if article is not None else ""
    parts = []
    for a in article.findall("Abstract/AbstractText") if article is not None else []:
        label = a.get("Label")
        parts.append(f"{label.title()}: {_text(a)}" if label else _text(a))
    abstract = " ".join(p for p in parts if p)
    journal = _text(article.find("Journal/Title")) if article is not None else ""
    doi = ""
    if article is not None:
        for loc in article.findall("ELocationID"):
            if loc.get("EIdType") == "doi" and loc.text:
                doi = loc.text.strip()
    if not doi:
        for aid in art.findall("PubmedData/ArticleIdList/ArticleId"):
            if aid.get("IdType") == "doi" and aid.text:
                doi = aid.text.strip()
                break
    published = _date(article.find("Journal/JournalIssue/PubDate")) if article is not None else None
    if not published and article is not None:
        published = _date(article.find("ArticleDate"))
    authors = _authors(article.findall("AuthorList/Author") if article is not None else [])
    return _result(pmid, title, abstract, journal, doi, published, query, authors=authors)


def _authors(nodes: list) -> list[str]:
    """``Family Initials`` (or the collective name) of each MEDLINE ``Author`` element."""
    out = []
    for a in nodes:
        family = _text(a.find("LastName"))
        given = _text(a.find("Initials")) or _text(a.find("ForeName"))
        name = f"{family} {given}".strip() if family else _text(a.find("CollectiveName"))
        if name:
            out.append(name)
    return out


def _jats(art: etree._Element, query: str) -> SearchResult:
    meta = art.find("front/article-meta")
    ids = {
        a.get("pub-id-type"): (a.text or "").strip()
        for a in art.findall("front/article-meta/article-id")
    }
    title = _text(meta.find("title-group/article-title")) if meta is not None else ""
    abstract = " ".join(_text(p) for p in art.findall("front/article-meta/abstract//p"))
    journal = _text(art.find("front/journal-meta/journal-title-group/journal-title"))
    pub = None
    for d in art.findall("front/article-meta/pub-date"):
        pub = pub if pub is not None else d
    pmc = ids.get("pmc") or ids.get("pmcid") or ""
    return _result(
        ids.get("pmid", ""),
        title,
        abstract,
        journal,
        ids.get("doi", ""),
        _date(pub),
        query,
        extra_id=f"PMC{pmc}" if pmc and not pmc.startswith("PMC") else pmc,
    )


def parse_efetch(body: bytes | str, query: str = "") -> list[SearchResult]:
    """A ``PubmedArticleSet`` (efetch db=pubmed retmode=xml) or ``pmc-articleset`` (db=pmc)
    body → one SearchResult per article, in document order.

    Raises:
        BackendError (``bad_response``): not XML, or another root element.
    """
    root = _xml(body)
    if root.tag == "PubmedArticleSet":
        out = [_medline(a, query) for a in root if a.tag in ("PubmedArticle", "PubmedBookArticle")]
        return [r for r in out if r is not None]
    if root.tag == "pmc-articleset":
        return [_jats(a, query) for a in root.findall("article")]
    raise BackendError("pubmed", "bad_response", f"expected PubmedArticleSet, got <{root.tag}>")


class PubMedSearch:
    """PubMed retriever (implements ``Retriever``): esearch (relevance sort) + one efetch.

    ``search`` makes 2 HTTP requests, rate-limited to 3/s (10/s with ``NCBI_API_KEY``).
    Raises BackendError on HTTP/parse failures, InputError on an empty query.
    """

    name = "pubmed"

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url or env_url("pubmed", DEFAULT_URL)
        self.since: str | None = None  # YYYY[-MM[-DD]]: esearch mindate on the publication date

    def _params(self, **kw) -> dict:
        key = secret.get_secret_value().strip() if (secret := load_settings().ncbi_api_key) else ""
        return {**kw, "tool": "research-desk", **({"api_key": key} if key else {})}

    def _window(self) -> dict:
        """esearch's date window (``datetype=pdat``: publication date) from ``since``."""
        if not self.since:
            return {}
        return {"datetype": "pdat", "mindate": self.since.replace("-", "/"), "maxdate": "3000"}

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        """Up to ``k`` PubMed articles for ``query``, best match first."""
        query = clean_query(query)
        found = parse_esearch(
            request(
                "pubmed",
                "GET",
                f"{self.base_url}/esearch.fcgi",
                params=self._params(
                    db="pubmed", term=query, retmax=k, sort="relevance", **self._window()
                ),
            ).content
        )
        if not found["ids"]:
            return []
        fetched = request(
            "pubmed",
            "GET",
            f"{self.base_url}/efetch.fcgi",
            params=self._params(
                db="pubmed", id=",".join(found["ids"][:k]), retmode="xml", rettype="abstract"
            ),
        )
        return parse_efetch(fetched.content, query)[:k]
