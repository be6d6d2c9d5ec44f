"""Pure figures of the question bench: how well a report's citations answer the question asked.

Inputs are a report's markdown (body with ``[n]`` citation markers, then ``## References`` with
``n. [title](url) (...)`` lines), the shared corpus's ``id``/``url``/``title``, and one labelled
question: ``labels`` (corpus id -> grade 0/1/2, read by a person; documents not labelled count as
grade 0) and ``findings`` (each with lower-case ``terms`` and supporting ``docs``).

A "cited sentence" is the text between two citation groups ending in one: the extractive engine
cites every sentence, and for prose that cites once per several sentences the claim attached to a
citation is the whole stretch it closes. Splitting on citations rather than on full stops keeps
"HR 0.81 vs. 0.92" and "et al." in one piece.

Every figure is a share in [0, 1]; ``None`` when its denominator is empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_CITE = re.compile(r"(?:\[\d+(?:\s*[,;–-]\s*\d+)*\])+")
# a link's URL may hold balanced parentheses, as CommonMark allows ("…/George_Young_(swimmer)#Honors")
_REF_LINE = re.compile(
    r"^\s*(\d+)\.\s+\[(?P<title>.*)\]\((?P<url>(?:[^()\s]|\([^()\s]*\))+)\)(?P<rest>.*)$"
)
_PMID = re.compile(r"PMID:\s*(\d+)")
_NCT = re.compile(r"\b(NCT\d{8})\b")
_SOURCE = re.compile(r"source:\s*([^\s)]+)")


def normalize(text: str) -> str:
    """Lower-case, middle dot as decimal point, en/em dashes as hyphens, single spaces."""
    text = text.replace("\u00b7", ".").replace("\u2013", "-").replace("\u2014", "-")
    return " ".join(text.replace("\u00a0", " ").lower().split())


def _url_key(url: str) -> str:
    return url.strip().removeprefix("https://").removeprefix("http://").rstrip("/").lower()


@dataclass
class CorpusIndex:
    """Lookup from a reference's URL (or its printed id) to corpus document ids.

    Attributes:
        by_url: normalised URL -> corpus ids sharing it (Wikipedia sub-sections can share one).
        titles: corpus id -> title. ids: every corpus id.
    """

    by_url: dict[str, list[str]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_docs(cls, docs: list[dict]) -> CorpusIndex:
        """Build from corpus rows with ``id``, ``url`` and ``title``."""
        out = cls()
        for d in docs:
            out.by_url.setdefault(_url_key(d.get("url") or ""), []).append(d["id"])
            out.titles[d["id"]] = d.get("title") or ""
        return out

    def resolve(self, title: str, url: str, rest: str = "") -> str | None:
        """The corpus id of one reference line's parts, or None when it is not in the corpus.

        An id printed on the line (``source: <id>``, ``PMID:n``, ``NCTn``) wins; else the URL, with
        the title choosing among documents that share a URL.
        """
        m = _SOURCE.search(rest)
        if m and m.group(1) in self.titles:
            return m.group(1)
        for pattern, prefix in ((_PMID, "pubmed:"), (_NCT, "nct:")):
            m = pattern.search(rest)
            if m and prefix + m.group(1) in self.titles:
                return prefix + m.group(1)
        ids = self.by_url.get(_url_key(url), [])
        if len(ids) > 1:
            same = [i for i in ids if normalize(self.titles[i]) == normalize(title)]
            return (same or ids)[0]
        return ids[0] if ids else None


@dataclass
class CitedSentence:
    """One cited stretch of the report: its text and the corpus ids it cites (None = unresolved)."""

    text: str
    docs: list[str | None]


def parse_report(markdown: str, index: CorpusIndex) -> tuple[list[CitedSentence], list[str | None]]:
    """``(cited sentences of the body, cited corpus ids in reference order)`` of a report.

    Headings, block quotes and the title are not sentences; text after the last citation of a
    paragraph is uncited and left out. References that match no corpus document map to None.
    """
    body, _, refs = markdown.partition("\n## References")
    ref_ids: dict[int, str | None] = {}
    for line in refs.splitlines():
        m = _REF_LINE.match(line)
        if m:
            ref_ids[int(m.group(1))] = index.resolve(
                m.group("title"), m.group("url"), m.group("rest")
            )
    sentences: list[CitedSentence] = []
    for para in re.split(r"\n\s*\n", body):
        lines = [
            ln
            for ln in para.splitlines()
            if ln.strip() and not ln.lstrip().startswith(("#", ">", "|"))
        ]
        text = " ".join(ln.strip() for ln in lines)
        pos = 0
        for m in _CITE.finditer(text):
            nums = [int(n) for n in re.findall(r"\d+", m.group(0))]
            chunk = text[pos : m.start()].strip()
            pos = m.end()
            if chunk:
                sentences.append(CitedSentence(chunk, [ref_ids.get(n) for n in nums]))
    return sentences, list(ref_ids.values())


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def relevant_share(cited: list[str | None], labels: dict[str, int], grade: int) -> float | None:
    """Share of distinct cited sources graded >= ``grade`` (unlabelled or unresolved count as 0)."""
    uniq = list(dict.fromkeys(cited))
    return _share(sum(1 for d in uniq if d is not None and labels.get(d, 0) >= grade), len(uniq))


def direct_recall(cited: list[str | None], labels: dict[str, int]) -> float | None:
    """Share of the grade-2 documents that are cited (cited ∩ grade 2 / all grade 2)."""
    direct = {d for d, g in labels.items() if g == 2}
    return _share(len(direct & {d for d in cited if d}), len(direct))


def findings_stated(sentences: list[CitedSentence], findings: list[dict]) -> float | None:
    """Share of key findings stated by a cited sentence: the sentence holds all the finding's
    ``terms`` (after ``normalize``) and cites at least one of its supporting ``docs``."""
    hit = 0
    for f in findings:
        terms = [normalize(t) for t in f["terms"]]
        support = set(f["docs"])
        if any(
            support & set(s.docs) and all(t in normalize(s.text) for t in terms) for s in sentences
        ):
            hit += 1
    return _share(hit, len(findings))


def on_question_sentences(sentences: list[CitedSentence], labels: dict[str, int]) -> float | None:
    """Share of cited sentences whose cited sources are all graded >= 1 (an unresolved citation
    or an unlabelled source makes the sentence off the question)."""
    ok = sum(1 for s in sentences if all(d is not None and labels.get(d, 0) >= 1 for d in s.docs))
    return _share(ok, len(sentences))


FIGURES = ("relevant", "direct", "direct_recall", "findings", "findings_in_docs", "on_question")


def score_report(markdown: str, index: CorpusIndex, question: dict) -> dict:
    """The five figures of one report for one labelled question, plus counts.

    Returns ``{relevant, direct, direct_recall, findings, on_question, k, sentences,
    unresolved, unjudged}``: ``k`` = distinct cited sources, ``unresolved`` = references not in
    the corpus, ``unjudged`` = cited corpus documents with no label (scored as grade 0).
    """
    labels = question["labels"]
    sentences, cited = parse_report(markdown, index)
    uniq = list(dict.fromkeys(cited))
    return {
        "relevant": relevant_share(uniq, labels, 1),
        "direct": relevant_share(uniq, labels, 2),
        "direct_recall": direct_recall(uniq, labels),
        "findings": findings_stated(sentences, question.get("findings", [])),
        "findings_in_docs": findings_in_docs(uniq, question.get("findings", [])),
        "on_question": on_question_sentences(sentences, labels),
        "k": len(uniq),
        "sentences": len(sentences),
        "unresolved": sum(1 for d in uniq if d is None),
        "unjudged": sum(1 for d in uniq if d is not None and d not in labels),
    }


def score_ranking(
    ranked: list[str], question: dict, snippets: list[CitedSentence] | None = None
) -> dict:
    """The same figures for a plain ranking (an anchor) whose top-k stands in for the citations.

    With ``snippets`` (the result page's sentences, each citing its document: ``bench.
    question_search.snippets``) a finding is stated by the rule a report's sentences meet
    (``findings_stated``); without, when a supporting document is in the list. Every listed
    document is one "cited sentence" for ``on_question``, which so equals ``relevant``.
    ``findings_in_docs``: the share of findings a supporting document of the list holds, the
    most any sentence choice from these documents could state."""
    labels = question["labels"]
    findings = question.get("findings", [])
    rel = relevant_share(list(ranked), labels, 1)
    in_docs = findings_in_docs(list(ranked), findings)
    return {
        "relevant": rel,
        "direct": relevant_share(list(ranked), labels, 2),
        "direct_recall": direct_recall(list(ranked), labels),
        "findings": in_docs if snippets is None else findings_stated(snippets, findings),
        "findings_in_docs": in_docs,
        "on_question": rel,
        "k": len(ranked),
        "unjudged": sum(1 for d in ranked if d not in labels),
    }


def findings_in_docs(docs: list[str | None], findings: list[dict]) -> float | None:
    """Share of key findings with a supporting document among ``docs`` (stated or not)."""
    got = {d for d in docs if d is not None}
    return _share(sum(1 for f in findings if got & set(f["docs"])), len(findings))
