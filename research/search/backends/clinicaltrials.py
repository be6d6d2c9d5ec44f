"""ClinicalTrials.gov API v2: ``GET /api/v2/studies?query.term=...`` → studies → NCT id, title,
brief summary, overall status, start / completion dates.

API reference: https://clinicaltrials.gov/data-api/api (v2; the classic v1 API was retired in
2024). Base URL ``https://clinicaltrials.gov/api/v2`` (override: ``RESEARCH_CLINICALTRIALS_URL``).
Results: ``source_type="clinicaltrials.gov"``, ``external_id="NCT..."``,
``url=https://clinicaltrials.gov/study/<NCT>``. ``parse_studies`` also reads single v2 study
records and the retired v1 ``FullStudiesResponse`` / ``StudyFieldsResponse`` bodies.
"""

from __future__ import annotations

from research.models import SearchResult
from research.search.http import BackendError, clean_query, env_url, get_json

DEFAULT_URL = "https://clinicaltrials.gov/api/v2"
SNIPPET_CHARS = 600


def _clip(text: str, n: int = SNIPPET_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + "…"


def _result(
    nct: str,
    title: str,
    summary: str,
    status: str,
    start: str | None,
    end: str | None,
    extra: list[str],
    query: str,
) -> SearchResult:
    status_line = (
        f"Status: {status}"
        + (f"; start {start}" if start else "")
        + (f"; completion {end}" if end else "")
    )
    snippets = [s for s in [_clip(summary), status_line if status else ""] if s]
    text = "\n".join(x for x in [title, status_line if status else "", *extra, summary] if x)
    return SearchResult(
        url=f"https://clinicaltrials.gov/study/{nct}",
        title=title or nct,
        snippets=snippets,
        text=text,
        source_type="clinicaltrials.gov",
        external_id=nct,
        doc_id=f"nct:{nct}",
        published=start,
        backend="clinicaltrials",
        query=query,
    )


def parse_study(study: dict, query: str = "") -> SearchResult | None:
    """One v2 study object (``{"protocolSection": {...}, ...}``) → SearchResult; None when it
    has no NCT id. Missing modules (trimmed records) leave fields empty."""
    proto = study.get("protocolSection") or {}
    ident = proto.get("identificationModule") or {}
    nct = (ident.get("nctId") or "").strip().upper()
    if not nct:
        return None
    status = proto.get("statusModule") or {}
    desc = proto.get("descriptionModule") or {}
    conds = (proto.get("conditionsModule") or {}).get("conditions") or []
    design = proto.get("designModule") or {}
    phases = design.get("phases") or []
    extra = [
        f"Conditions: {', '.join(conds)}" if conds else "",
        f"Study type: {design.get('studyType', '')} {' '.join(phases)}".strip() if design else "",
        ident.get("officialTitle", ""),
    ]
    return _result(
        nct,
        ident.get("briefTitle") or ident.get("officialTitle") or "",
        desc.get("briefSummary") or "",
        status.get("overallStatus") or "",
        (status.get("startDateStruct") or {}).get("date"),
        (status.get("completionDateStruct") or status.get("primaryCompletionDateStruct") or {}).get(
            "date"
        ),
        [x for x in extra if x],
        query,
    )


def _v1(study: dict, query: str) -> SearchResult | None:
    proto = (study.get("Study") or study).get("ProtocolSection") or {}
    ident = proto.get("IdentificationModule") or {}
    nct = (ident.get("NCTId") or "").strip().upper()
    if not nct:
        return None
    status = proto.get("StatusModule") or {}
    desc = proto.get("DescriptionModule") or {}
    conds = (proto.get("ConditionsModule") or {}).get("ConditionList", {}).get("Condition") or []
    return _result(
        nct,
        ident.get("BriefTitle") or ident.get("OfficialTitle") or "",
        desc.get("BriefSummary") or "",
        status.get("OverallStatus") or "",
        (status.get("StartDateStruct") or {}).get("StartDate"),
        (status.get("CompletionDateStruct") or {}).get("CompletionDate"),
        [f"Conditions: {', '.join(conds)}"] if conds else [],
        query,
    )


def parse_studies(payload: object, query: str = "") -> list[SearchResult]:
    """Any ClinicalTrials.gov body → SearchResults in the body's order.

    Accepts v2 ``{"studies": [...], "nextPageToken"?}``, a single v2 study, v1
    ``{"FullStudiesResponse": {"FullStudies": [{"Study": ...}]}}`` and v1
    ``{"StudyFieldsResponse": {"StudyFields": [{"NCTId": [...], ...}]}}`` (ids and dates only).

    Raises:
        BackendError (``bad_response``): not an object, or no recognisable shape.
    """
    if not isinstance(payload, dict):
        raise BackendError("clinicaltrials", "bad_response", "expected a JSON object")
    if "studies" in payload:
        items = [parse_study(s, query) for s in payload.get("studies") or [] if isinstance(s, dict)]
    elif "protocolSection" in payload:
        items = [parse_study(payload, query)]
    elif "FullStudiesResponse" in payload:
        items = [_v1(s, query) for s in payload["FullStudiesResponse"].get("FullStudies") or []]
    elif "StudyFieldsResponse" in payload:
        items = []
        for row in payload["StudyFieldsResponse"].get("StudyFields") or []:
            nct = ((row.get("NCTId") or [""])[0]).strip().upper()
            if nct:
                posted = (row.get("StudyFirstPostDate") or [None])[0]
                items.append(_result(nct, nct, "", "", posted, None, [], query))
    elif "message" in payload or "error" in payload:
        raise BackendError(
            "clinicaltrials",
            "http_error",
            str(payload.get("message") or payload.get("error"))[:200],
        )
    else:
        raise BackendError(
            "clinicaltrials", "bad_response", f"unknown body with keys {sorted(payload)[:5]}"
        )
    return [r for r in items if r is not None]


class ClinicalTrialsSearch:
    """ClinicalTrials.gov v2 retriever (implements ``Retriever``): one GET per search.
    Raises BackendError on HTTP/parse failures, InputError on an empty query."""

    name = "clinicaltrials"

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url or env_url("clinicaltrials", DEFAULT_URL)
        self.since: str | None = None  # YYYY[-MM[-DD]]: studies starting on or after it

    def _window(self) -> dict:
        """API v2 ``filter.advanced`` on the start date (Essie ``AREA[StartDate]RANGE``)."""
        if not self.since:
            return {}
        first = (self.since + "-01-01")[:10] if len(self.since) == 4 else self.since
        first = first if len(first) == 10 else first + "-01"
        return {"filter.advanced": f"AREA[StartDate]RANGE[{first},MAX]"}

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        """Up to ``k`` studies for ``query`` (the API's relevance order)."""
        query = clean_query(query)
        payload = get_json(
            "clinicaltrials",
            f"{self.base_url}/studies",
            params={"query.term": query, "pageSize": k, "format": "json", **self._window()},
        )
        return parse_studies(payload, query)[:k]
