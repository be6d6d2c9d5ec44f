"""Report-quality metrics: what an analyst notices when reading a report.

All functions take a ``research.models.Report`` (its ``lead`` and ``sections``; the rendered
``markdown`` is used only to look for stated gaps) and, where needed, the run's topic. One entry
point, ``measure(report, topic)``, returns every figure as a dict; the others are its parts.

Definitions (fixed here so figures from different days compare):

* **Report sentences** (``report_sentences``): the lead, then each section's text, in order.
  Citation markers (``[n]`` and draft ``[@src_…]``, via ``research.citations``) are
  removed first. Lines that are headings (``#``), block quotes (``>``), table rows (``|``) or
  rules are skipped, list bullets are dropped, markdown links keep their text, emphasis markers
  go. Each remaining line is split after ``.``, ``!`` or ``?`` (plus closing quotes/brackets)
  followed by whitespace, unless the word before is a known abbreviation (``et al.``, ``Dr.``,
  ``vs.``, ``Fig.``…), a word with an inner dot (``e.g.``, ``i.v.``, ``U.S.``) or a one-letter
  initial. The next piece may start in lower case: a snippet glued after a full stop is its own
  (flagged) sentence. ``…`` alone is not a boundary, so ``a … b.`` stays one flagged sentence.
  The references list is not part of ``Report.sections`` and is never read.
* **Near-duplicate sentence rate**: share of report sentences that have an *earlier* sentence in
  the same report (lead and sections together) that is the same text (case, punctuation and
  spacing ignored) or whose all-MiniLM-L6-v2 embedding (``research.search.embeddings``) has cosine
  ``>= 0.92`` with it. The first of a pair is not counted, so a sentence printed twice gives 1
  duplicate.
* **Truncated-fragment rate**: share of report sentences that are cut snippets, i.e. any of
  (a) *ellipsis*: contains ``…`` or three dots ``...``; (b) *no end*: its last character, after
  closing quotes/brackets, is not ``.``, ``!`` or ``?``; (c) *lower-case start*: it begins with
  ``, ; : ) ]``, or with a lower-case letter in a word that has no capital or digit (so
  ``mRNA``, ``eGFR``, ``iPhone``, ``p53`` start sentences legitimately, ``and the trial…`` does not).
* **Section fit**: over the sentences of the sections (lead excluded), the
  share whose nearest heading, by cosine of MiniLM embeddings to ``"<topic>: <heading>"`` over
  all section headings of the report, is their own section's heading (a repeated heading counts
  as the same). Undefined (``None``) with fewer than two distinct headings.
* **Questions answered**: from ``report.questions`` (``[{key, label, heading, status:
  "answered" | "insufficient", sources}]``) when the Report has that field,
  else ``None``. An insufficient question is *stated* when its label or heading appears in the
  report's markdown.
* **Citation integrity**: ``research.citations.check_integrity`` on lead + sections
  (every ``[n]`` in 1..N, all references cited, first appearances 1, 2, 3…).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from research import citations
from research.models import Report, ReportSection
from research.search.embeddings import get_embedder

NEAR_DUPLICATE_COSINE = 0.92
Encode = Callable[[list[str]], np.ndarray]

_ABBREV = frozenset(
    """e.g i.e et al vs dr mr mrs ms prof fig figs no nos approx ca inc ltd co jr sr st
u.s u.k ref refs vol pp eq ed eds dept univ gen lt col sgt mt ft cf resp""".split()
)
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s+\S)")
_INITIALS = re.compile(r"^[a-z](?:\.[a-z])+$")  # e.g, i.v, b.i.d, u.s
_SKIP_LINE = re.compile(r"^\s*(?:#|>|\||[-*_]{3,}\s*$)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|`)")
_CLOSERS = "\"'”’)]} "
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_STOP_HEADINGS = (
    "references",
    "external links",
    "see also",
    "notes",
    "further reading",
    "bibliography",
)


@dataclass(frozen=True)
class ReportSentence:
    """One sentence of a report: ``section`` is the index into ``Report.sections`` (-1 = lead)."""

    text: str
    section: int
    heading: str


def _plain(text: str) -> str:
    """Citations, links and emphasis removed; spaces before punctuation tidied."""
    text = citations.DRAFT_RE.sub("", citations.LOCAL_RE.sub("", text))
    text = _EMPHASIS.sub("", _LINK.sub(r"\1", text))
    return re.sub(r"\s+([.,;:!?])(?=\s|$)", r"\1", re.sub(r"[ \t]+", " ", text)).strip()


def markdown_sentences(text: str) -> list[str]:
    """Sentences of markdown prose by the rule in the module docstring (citations removed). The
    metric keeps its own splitter on purpose: a change to the product's splitter
    (``research.text.split_sentences``) must not move the figures that judge it.

    Returns:
        Non-empty sentences in order; lines that are headings, quotes, tables or rules are skipped.
    """
    out: list[str] = []
    for line in str(text or "").splitlines():
        if not line.strip() or _SKIP_LINE.match(line):
            continue
        line = _plain(_BULLET.sub("", line))
        start = 0
        for m in _BOUNDARY.finditer(line):
            before = line[start : m.start()].rsplit(" ", 1)[-1].lower().lstrip("([\"'")
            if (
                before in _ABBREV
                or _INITIALS.match(before)
                or (len(before) == 1 and before.isalpha())
            ):
                continue
            out.append(line[start : m.end()].strip())
            start = m.end()
        out.append(line[start:].strip())
    return [s for s in out if re.search(r"[A-Za-z0-9]", s)]


def report_sentences(report: Report) -> list[ReportSentence]:
    """Sentences of the lead (``section=-1``) then of each section, in reading order."""
    out = [ReportSentence(s, -1, "") for s in markdown_sentences(report.lead)]
    for i, sec in enumerate(report.sections):
        out += [ReportSentence(s, i, sec.heading) for s in markdown_sentences(sec.text)]
    return out


def truncation_reason(sentence: str) -> str | None:
    """Why ``sentence`` is a cut fragment (``"ellipsis"``, ``"no end"``, ``"lower-case start"``), or None."""
    s = sentence.strip()
    if "…" in s or "..." in s:
        return "ellipsis"
    if not s.rstrip(_CLOSERS).endswith((".", "!", "?")):
        return "no end"
    first = s.split(" ", 1)[0]
    if s[0] in ",;:)]" or (s[0].islower() and not re.search(r"[A-Z0-9]", first)):
        return "lower-case start"
    return None


def _key(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def near_duplicates(
    texts: Sequence[str], vectors: np.ndarray, threshold: float = NEAR_DUPLICATE_COSINE
) -> list[tuple[int, int, float]]:
    """Sentences that repeat an earlier one: ``[(i, j, cosine)]`` with ``j < i`` the closest earlier
    sentence, for every ``i`` whose text equals an earlier one (cosine reported as 1.0) or whose
    cosine to some earlier sentence is ``>= threshold``. ``vectors``: ``(len(texts), d)`` embeddings.
    """
    if len(texts) != len(vectors):
        raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
    v = _unit(vectors) if len(texts) else np.zeros((0, 1), dtype=np.float32)
    sim = v @ v.T
    seen: dict[str, int] = {}
    out = []
    for i, t in enumerate(texts):
        k = _key(t)
        if k in seen:
            out.append((i, seen[k], 1.0))
        elif i:
            j = int(np.argmax(sim[i, :i]))
            if sim[i, j] >= threshold:
                out.append((i, j, float(sim[i, j])))
        seen.setdefault(k, i)
    return out


def section_fit(
    sentences: Sequence[ReportSentence],
    sentence_vectors: np.ndarray,
    headings: Sequence[str],
    heading_vectors: np.ndarray,
) -> tuple[float | None, list[tuple[int, str]]]:
    """Share of section sentences whose nearest heading is their own (rule in the module docstring).

    Args:
        sentences / sentence_vectors: report sentences and their embeddings ``(n, d)``.
        headings / heading_vectors: the report's section headings and embeddings of
            ``"<topic>: <heading>"`` ``(m, d)``.

    Returns:
        ``(fit, misplaced)``: fit in [0, 1] (None with < 2 distinct headings or no section
        sentence) and ``[(sentence index, nearest heading)]`` for the sentences that fit elsewhere.
    """
    idx = [i for i, s in enumerate(sentences) if s.section >= 0]
    if len(set(headings)) < 2 or not idx:
        return None, []
    sim = _unit(sentence_vectors[idx]) @ _unit(heading_vectors).T
    misplaced = []
    for row, i in zip(sim, idx, strict=True):
        nearest = headings[int(np.argmax(row))]
        if nearest != sentences[i].heading:
            misplaced.append((i, nearest))
    return 1.0 - len(misplaced) / len(idx), misplaced


def _field(q: object, name: str) -> object:
    return q.get(name) if isinstance(q, dict) else getattr(q, name, None)


def questions_answered(report: Report, syllabus_keys: Iterable[str] | None = None) -> dict | None:
    """Counts from ``report.questions`` (None when the Report has no such field or it is empty).

    Returns:
        ``{total, answered, insufficient, other, stated_insufficient, missing, answered_share,
        addressed_share}``: ``missing`` = syllabus keys absent from ``report.questions``;
        ``addressed_share`` = (answered + stated insufficient) / (total + missing).
    """
    qs = getattr(report, "questions", None)
    if not qs:  # no such field, or a report written without a syllabus (stored before reports carried questions)
        return None
    text = report.markdown.lower()
    status = [str(_field(q, "status") or "") for q in qs]
    stated = sum(
        1
        for q, st in zip(qs, status, strict=True)
        if st == "insufficient"
        and any(
            str(_field(q, f) or "").strip().lower() in text
            for f in ("label", "heading")
            if _field(q, f)
        )
    )
    keys = {str(_field(q, "key")) for q in qs}
    missing = sorted(set(syllabus_keys or ()) - keys)
    answered = status.count("answered")
    denom = len(qs) + len(missing)
    return {
        "total": len(qs),
        "answered": answered,
        "insufficient": status.count("insufficient"),
        "other": len(qs) - answered - status.count("insufficient"),
        "stated_insufficient": stated,
        "missing": missing,
        "answered_share": answered / denom if denom else None,
        "addressed_share": (answered + stated) / denom if denom else None,
    }


def citation_problems(report: Report) -> list[str]:
    """``check_integrity`` problems of the report's lead + sections (empty list = sound)."""
    body = "\n\n".join([report.lead, *[s.text for s in report.sections]])
    return citations.check_integrity(body, len(report.references))


def measure(
    report: Report,
    topic: str,
    encode: Encode | None = None,
    syllabus_keys: Iterable[str] | None = None,
) -> dict:
    """Every report-quality figure of ``report`` on ``topic``.

    Args:
        encode: ``list[str] -> (n, d)`` embeddings; default all-MiniLM-L6-v2
            (``research.search.embeddings.get_embedder().encode``, loads the model once, ~5 s).
        syllabus_keys: the run's syllabus keys, to count questions missing from ``report.questions``.

    Returns:
        ``{sentences, lead_sentences, near_duplicate_rate, near_duplicates: [{sentence, earlier,
        cosine}], truncated_fragment_rate, truncated_fragments: [{sentence, reason}], section_fit,
        section_sentences, misplaced: [{sentence, heading, nearest}], questions (dict | None),
        questions_answered (share | None), citation_problems, citation_integrity (bool),
        references}``; rates are shares in [0, 1], None when there is no sentence to count.
    """
    if encode is None:
        encode = get_embedder().encode
    sents = report_sentences(report)
    texts = [s.text for s in sents]
    headings = [s.heading for s in report.sections]
    vecs = (
        encode(texts + [f"{topic}: {h}" for h in headings])
        if texts or headings
        else np.zeros((0, 1))
    )
    svec, hvec = vecs[: len(texts)], vecs[len(texts) :]
    n = len(texts)
    dups = near_duplicates(texts, svec)
    cut = [(s, r) for s in texts if (r := truncation_reason(s))]
    fit, misplaced = section_fit(sents, svec, headings, hvec)
    questions = questions_answered(report, syllabus_keys)
    problems = citation_problems(report)
    return {
        "sentences": n,
        "lead_sentences": sum(1 for s in sents if s.section < 0),
        "near_duplicate_rate": len(dups) / n if n else None,
        "near_duplicates": [
            {"sentence": texts[i], "earlier": texts[j], "cosine": round(c, 4)} for i, j, c in dups
        ],
        "truncated_fragment_rate": len(cut) / n if n else None,
        "truncated_fragments": [{"sentence": s, "reason": r} for s, r in cut],
        "section_fit": fit,
        "section_sentences": sum(1 for s in sents if s.section >= 0),
        "misplaced": [
            {"sentence": texts[i], "heading": sents[i].heading, "nearest": h} for i, h in misplaced
        ],
        "questions": questions,
        "questions_answered": questions["answered_share"] if questions else None,
        "citation_problems": problems,
        "citation_integrity": not problems,
        "references": len(report.references),
    }


def report_from_markdown(markdown: str, title: str = "") -> Report:
    """A ``Report`` from a markdown article (STORM ``storm_gen_article*.txt``, FreshWiki ``txt/``).

    The lead is the text before the first heading (a first line equal to ``title`` with ``_``
    for spaces is dropped) or under a ``# summary`` heading; every other heading starts a section
    (level = depth relative to the shallowest heading, capped at 3); parsing stops at
    References / External links / See also / Notes. References are not parsed (empty list), so
    ``citation_problems`` of such a report is not meaningful.
    """
    lead: list[str] = []
    sections: list[tuple[int, str, list[str]]] = []
    current = lead
    lines = markdown.splitlines()
    depths = [len(m.group(1)) for ln in lines if (m := _HEADING.match(ln))]
    top = min(depths) if depths else 1
    for n, line in enumerate(lines):
        m = _HEADING.match(line)
        if m:
            head = m.group(2).strip()
            if head.lower().startswith(_STOP_HEADINGS):
                break
            if head.lower() == "summary" and not sections:
                current = lead
                continue
            sections.append((min(3, len(m.group(1)) - top + 1), head, []))
            current = sections[-1][2]
        elif not (n == 0 and title and line.strip().replace("_", " ") == title.strip()):
            current.append(line)
    return Report(
        title=title,
        lead="\n".join(lead).strip(),
        references=[],
        markdown=markdown,
        sections=[
            ReportSection(heading=h, text="\n".join(body).strip(), level=lv)
            for lv, h, body in sections
        ],
    )
