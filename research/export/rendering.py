"""Rendering safety (a neutral module used by the dashboard, ``research/ui/``, and the exports,
``research/export/``): safe Markdown for text that comes from sources and engines, and ``[n]``
citation links.

Nothing here emits HTML: text from sources or models is never rendered with
``unsafe_allow_html``. Two escaping levels:

- :func:`plain` renders *literally* (titles, queries, persona names): every Markdown/HTML
  significant ASCII punctuation character is backslash-escaped (CommonMark §2.4 backslash escapes).
- :func:`safe_markdown` keeps Markdown formatting (engines write Markdown) but neutralizes raw
  HTML (``<``, ``>``, ``&`` become entities, so tags show as text) and ``$`` (Streamlit would
  otherwise typeset ``$…$`` as LaTeX, e.g. "costs $5 to $10").

Citations: the report's final form is ``[n]`` with ``n`` in ``1..N`` indexing
``Report.references`` (see ``research/citations.py``); :func:`link_citations` turns each
valid one into a Markdown link to the anchor ``#ref-n`` that the Report page places before
reference ``n``.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from research.citations import RENDER_RE
from research.models import Reference, Report, TurnSource

ANCHOR_PREFIX = "ref-"
# [n] that is not already link text ("[[3]](#ref-3)") nor the text of a link ("[3](http://…)").
_CITE_RE = RENDER_RE
_PLAIN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$&:])")
_URL_UNSAFE = {" ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E", '"': "%22"}


def plain(text: str | None) -> str:
    """Markdown that displays ``text`` literally, on one line.

    Newlines and other whitespace runs collapse to single spaces; every ASCII punctuation
    character Markdown or HTML could interpret is backslash-escaped.
    """
    flat = " ".join(str(text or "").split())
    return _PLAIN_SPECIALS.sub(r"\\\1", flat)


def code(text: str | None) -> str:
    """Inline code span showing ``text`` literally on one line (backticks become ``'``; Markdown
    escapes do not apply inside code spans, so nothing else needs escaping)."""
    flat = " ".join(str(text or "").split()).replace("`", "'")
    return f"`{flat}`" if flat else ""


def safe_markdown(text: str | None) -> str:
    """Markdown from an engine or source with raw HTML and ``$`` math neutralized.

    ``&`` → ``&amp;``, ``<`` → ``&lt;``, ``>`` → ``&gt;`` (so ``<script>`` displays as text),
    ``$`` → ``\\$``. Other Markdown (emphasis, lists, ``[n]`` citations) is kept.
    """
    s = str(text or "")
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace("$", r"\$")


def safe_url(url: str | None) -> str | None:
    """``url`` made safe as a Markdown link destination, or None when it is not http(s).

    Only ``http``/``https`` URLs with a host are kept (no ``javascript:``, ``data:``, relative
    paths); spaces, parentheses, angle brackets and quotes are percent-encoded.
    """
    if not url:
        return None
    u = str(url).strip()
    try:
        parts = urlsplit(u)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    for ch, enc in _URL_UNSAFE.items():
        u = u.replace(ch, enc)
    return "".join(ch for ch in u if ch.isprintable())


def link_title(text: str | None) -> str:
    """``text`` as a CommonMark link title in double quotes (one line; ``\\`` and ``"`` escaped;
    ``<``/``>``/``&`` as entities so the title can never carry markup). Renderers put it in
    the link's HTML ``title`` attribute (escaped), which browsers show on hover."""
    flat = " ".join(str(text or "").split())
    flat = flat.replace("\\", "\\\\").replace('"', '\\"')
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("$", "\\$")
    return f'"{flat}"'


def link_citations(
    text: str, n_refs: int, prefix: str = ANCHOR_PREFIX, titles: dict[int, str] | None = None
) -> str:
    """Replace each ``[n]`` with ``1 <= n <= n_refs`` by ``[[n]](#{prefix}n)``.

    With ``titles`` (reference number → hover text) the link gets a title:
    ``[[n]](#{prefix}n "title")``. Out-of-range markers are left as they are; ``[n]`` that
    already is (or labels) a link is not touched, so the function is idempotent.
    """
    titles = titles or {}

    def sub(m: re.Match) -> str:
        n = int(m.group(1))
        if not 1 <= n <= n_refs:
            return m.group(0)
        tip = f" {link_title(titles[n])}" if titles.get(n) else ""
        return f"[[{n}]](#{prefix}{n}{tip})"

    return _CITE_RE.sub(sub, text)


def anchor_id(n: int, prefix: str = ANCHOR_PREFIX) -> str:
    """The HTML id placed before reference ``n`` (``ref-n``); ``n`` must be a positive int."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"reference number must be a positive int, got {n!r}")
    return f"{prefix}{n}"


def anchor_html(n: int) -> str:
    """``<a id="ref-n"></a>``: the only HTML the dashboard emits; it holds no source text."""
    return f'<a id="{anchor_id(n)}"></a>'


def _ident(source_type: str, external_id: str) -> str:
    bits = [plain(source_type)] + ([plain(external_id)] if external_id else [])
    return " · ".join(b for b in bits if b)


def reference_markdown(ref: Reference) -> str:
    """One references-list line: ``**[n]** [title](url) — type · external id``."""
    title = plain(ref.title) or "untitled"
    url = safe_url(ref.url)
    link = f"[{title}]({url})" if url else title
    ident = _ident(ref.source_type, ref.external_id)
    return f"**\\[{ref.number}\\]** {link}" + (f" — {ident}" if ident else "")


def source_markdown(src: TurnSource) -> str:
    """A dialogue turn's source line: ``**[n]** title — type · external id · [link](url)``."""
    ident = _ident(src.source_type, src.external_id)
    url = safe_url(src.url)
    line = f"**\\[{src.n}\\]** {plain(src.title) or 'untitled'}"
    if ident:
        line += f" — {ident}"
    if url:
        line += f" · [link]({url})"
    return line


def report_body_markdown(report: Report, titles: dict[int, str] | None = None) -> str:
    """The report's lead and sections as safe Markdown with citations linked to ``#ref-n``.

    Headings are ``##`` (``###``/``####`` for nested sections, ``Report.section_levels``: a
    Co-STORM report nests them by mind-map depth) with literal (escaped) text; the title and
    references list are rendered separately by the page (the references need one anchor each).
    ``titles``: reference number
    → hover text for each citation link (see ``research.export.bundle.ReportBundle.tooltips``).
    """
    n = len(report.references)
    parts = [link_citations(safe_markdown(report.lead), n, titles=titles)]
    for section, level in zip(report.sections, report.section_levels(), strict=True):
        parts.append(f"{'#' * (level + 1)} {plain(section.heading)}")
        parts.append(link_citations(safe_markdown(section.text), n, titles=titles))
    return "\n\n".join(p for p in parts if p.strip())


def answer_markdown(text: str) -> str:
    """A TopicExpert answer as safe Markdown (its ``[n]`` index the turn's own sources)."""
    return safe_markdown(text)
