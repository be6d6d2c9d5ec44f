"""The report as one self-contained HTML document (inline CSS, no scripts, no external assets).

Report text is Markdown from the engine; it is rendered with markdown-it in CommonMark mode with
raw HTML disabled, so any ``<script>`` or ``onerror=`` in a source or answer is shown as text.
Each ``[n]`` becomes ``<a href="#ref-n" title="title — type · id — “snippet”">[n]</a>`` and the
references list carries ``id="ref-n"`` anchors, so citations work in a browser and, through
weasyprint, as internal PDF links.
"""

from __future__ import annotations

import functools
from html import escape

from markdown_it import MarkdownIt

from research.errors import InputError
from research.export.appendix import REFS_HEADING, appendix_markdown, new_references
from research.export.bundle import ReportBundle, require_report
from research.export.desk_appendix import comments_markdown
from research.export.rendering import link_citations, safe_url

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False})

CSS = """
body{font-family:Georgia,'DejaVu Serif',serif;max-width:46em;margin:2em auto;padding:0 1em;
  line-height:1.55;color:#1b1b1b}
h1{font-size:1.8em;margin-bottom:.2em}h2{font-size:1.3em;margin-top:1.6em;border-bottom:1px solid #ddd}
.meta{color:#666;font-size:.9em;font-family:sans-serif}
a.cite,a[href^="#ref-"]{text-decoration:none;color:#1f5fbf;font-size:.85em;vertical-align:super}
ol.refs{padding-left:1.5em;font-size:.92em}ol.refs li{margin:.35em 0}
.ident{color:#666}.snippet{color:#555;font-style:italic;display:block;font-size:.9em}
@page{size:A4;margin:2cm}
"""


def _md(text: str, bundle: ReportBundle, n_refs: int) -> str:
    return _MD.render(link_citations(text or "", n_refs, titles=bundle.tooltips()))


def body_html(bundle: ReportBundle) -> str:
    """The report's lead, sections and references as an HTML fragment (no ``<html>`` wrapper).

    Raises:
        InputError (``report_not_ready``): the run has no report.
    """
    report = require_report(bundle)
    n = len(report.references)
    out = [f"<h1>{escape(report.title)}</h1>"]
    label = bundle.state.engine_label or report.engine_label or bundle.state.config.engine
    out.append(
        f'<p class="meta">Research Desk · engine: {escape(label)} · run {escape(bundle.state.run_id)}</p>'
    )
    if bundle.header:
        version = f" Version {bundle.version} of {bundle.versions}." if bundle.versions > 1 else ""
        out.append(f'<p class="meta">{escape(bundle.header + version)}</p>')
    out.append(_md(report.lead, bundle, n))
    for section, level in zip(report.sections, report.section_levels(), strict=True):
        out.append(f"<h{level + 1}>{escape(section.heading)}</h{level + 1}>")
        out.append(_md(section.text, bundle, n))
    out.append(f"<h2>References ({n})</h2>")
    out.append('<ol class="refs">')
    for ref in report.references:
        title = escape(ref.title or "untitled")
        url = safe_url(ref.url)
        link = f'<a href="{escape(url, quote=True)}">{title}</a>' if url else title
        ident = " · ".join(escape(x) for x in (ref.source_type, ref.external_id) if x)
        snippet = bundle.snippets.get(ref.source_id, "")
        out.append(
            f'<li id="ref-{ref.number}" value="{ref.number}">{link}'
            + (f' <span class="ident">— {ident}</span>' if ident else "")
            + (f'<span class="snippet">“{escape(snippet)}”</span>' if snippet else "")
            + "</li>"
        )
    out.append("</ol>")
    out += _appendix_html(bundle)
    out += _comments_html(bundle)
    return "\n".join(out)


def _comments_html(bundle: ReportBundle) -> list[str]:
    """The comments appendix (only when the bundle was loaded with its comments)."""

    text = comments_markdown(bundle.comments)
    return [_MD.render(text)] if text else []


def _appendix_html(bundle: ReportBundle) -> list[str]:
    """The follow-ups appendix (questions, cited answers, the references they added)."""

    if not bundle.followups:
        return []
    n = len(bundle.all_references())
    out = [_md(appendix_markdown(bundle.followups, with_references=False), bundle, n)]
    refs = new_references(bundle.followups)
    if refs:
        out.append(f"<h3>{REFS_HEADING}</h3>")
        out.append('<ol class="refs">')
        for ref in refs:
            url = safe_url(ref.url)
            title = escape(ref.title or "untitled")
            link = f'<a href="{escape(url, quote=True)}">{title}</a>' if url else title
            out.append(f'<li id="ref-{ref.number}" value="{ref.number}">{link}</li>')
        out.append("</ol>")
    return out


def report_html(bundle: ReportBundle) -> str:
    """A complete, self-contained HTML document (UTF-8) of the report.

    Raises:
        InputError (``report_not_ready``): the run has no report.
    """
    body = body_html(bundle)
    title = escape(require_report(bundle).title)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{CSS}</style></head><body>\n{body}\n</body></html>\n"
    )


PDF_UNAVAILABLE = (
    "PDF export needs the pango library: install it (Debian: apt-get install "
    "libpango-1.0-0 libpangoft2-1.0-0) or download HTML/DOCX instead."
)


@functools.cache
def pdf_problem() -> str | None:
    """Why PDFs cannot be rendered here (weasyprint cannot load pango), else None. Imports
    weasyprint once per process."""
    try:
        import weasyprint  # noqa: F401, PLC0415 - imported only to learn whether PDF export can work (pango)
    except OSError:  # pango / harfbuzz missing on this machine
        return PDF_UNAVAILABLE
    return None


def report_pdf(bundle: ReportBundle) -> bytes:
    """The HTML document rendered to PDF bytes by weasyprint (citations are internal links).

    Raises:
        InputError (``report_not_ready``): the run has no report; (``pdf_unavailable``): weasyprint
            cannot load its system libraries (pango).
    """
    problem = pdf_problem()
    if problem:
        raise InputError(problem, code="pdf_unavailable")
    from weasyprint import HTML  # noqa: PLC0415 - weasyprint takes ~1 s and needs pango; only for PDF

    return HTML(string=report_html(bundle)).write_pdf()
