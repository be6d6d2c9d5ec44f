"""The report as a Word document (python-docx).

Every ``[n]`` citation is an internal hyperlink (``w:hyperlink w:anchor="ref_n"``) to a bookmark
placed on reference ``n`` of the references list; each reference links to its source URL.
python-docx has no API for bookmarks or hyperlinks, so those two elements are built with its
OXML helpers (ECMA-376 Part 1, §17.13.6.2 bookmarkStart and §17.16.22 hyperlink). Markdown is
reduced to paragraphs, ``##``/``###`` headings, ``- `` bullets and ``**bold**``; text is never
interpreted as markup.
"""

from __future__ import annotations

import io
import re

from docx import Document
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from research.citations import CITE_PATTERN, LOCAL_RE
from research.export.appendix import REFS_HEADING, appendix_markdown, new_references
from research.export.bundle import ReportBundle, require_report
from research.export.desk_appendix import HEADING
from research.export.rendering import safe_url

_TOKEN_RE = re.compile(r"(\*\*[^*]+\*\*|" + CITE_PATTERN + ")")
_LINK_COLOR = "1F5FBF"


def _run(text: str, *, bold: bool = False, link: bool = False, superscript: bool = False):
    r = OxmlElement("w:r")
    rpr = OxmlElement("w:rPr")
    if bold:
        rpr.append(OxmlElement("w:b"))
    if link:
        color = OxmlElement("w:color")
        color.set(qn("w:val"), _LINK_COLOR)
        rpr.append(color)
    if superscript:
        va = OxmlElement("w:vertAlign")
        va.set(qn("w:val"), "superscript")
        rpr.append(va)
    r.append(rpr)
    t = OxmlElement("w:t")
    t.set(qn("xml:space"), "preserve")
    t.text = text
    r.append(t)
    return r


def _hyperlink(
    paragraph,
    text: str,
    *,
    anchor: str | None = None,
    url: str | None = None,
    tooltip: str = "",
    superscript: bool = False,
) -> None:
    h = OxmlElement("w:hyperlink")
    if anchor:
        h.set(qn("w:anchor"), anchor)
    else:
        h.set(qn("r:id"), paragraph.part.relate_to(url, RT.HYPERLINK, is_external=True))
    if tooltip:
        h.set(qn("w:tooltip"), tooltip[:250])
    h.append(_run(text, link=True, superscript=superscript))
    paragraph._p.append(h)


def _bookmark(paragraph, name: str, bid: int) -> None:
    start = OxmlElement("w:bookmarkStart")
    start.set(qn("w:id"), str(bid))
    start.set(qn("w:name"), name)
    end = OxmlElement("w:bookmarkEnd")
    end.set(qn("w:id"), str(bid))
    paragraph._p.insert(0, start)
    paragraph._p.append(end)


def _inline(paragraph, text: str, n_refs: int, tips: dict[int, str]) -> None:
    for tok in _TOKEN_RE.split(text):
        if not tok:
            continue
        if tok.startswith("**") and tok.endswith("**") and len(tok) > 4:
            paragraph._p.append(_run(tok[2:-2], bold=True))
        elif (m := LOCAL_RE.fullmatch(tok)) and 1 <= int(m.group(1)) <= n_refs:
            n = int(m.group(1))
            _hyperlink(
                paragraph, f"[{n}]", anchor=f"ref_{n}", tooltip=tips.get(n, ""), superscript=True
            )
        else:
            paragraph._p.append(_run(tok))


def _markdown_block(doc, text: str, n_refs: int, tips: dict[int, str]) -> None:
    for block in re.split(r"\n\s*\n", text or ""):
        lines = [ln.rstrip() for ln in block.strip().splitlines() if ln.strip()]
        if not lines:
            continue
        if lines[0].startswith("#"):
            level = min(3, len(lines[0]) - len(lines[0].lstrip("#")))
            doc.add_heading(lines[0].lstrip("#").strip(), level=max(2, level))
            lines = lines[1:]
        bullets = [ln for ln in lines if ln.lstrip().startswith(("- ", "* "))]
        if lines and len(bullets) == len(lines):
            for ln in lines:
                _inline(doc.add_paragraph(style="List Bullet"), ln.lstrip()[2:], n_refs, tips)
        elif lines:
            _inline(doc.add_paragraph(), " ".join(lines), n_refs, tips)


def _appendix(doc, bundle: ReportBundle, tips: dict[int, str]) -> None:
    """The follow-ups appendix; the references it added get bookmarks too."""

    if not bundle.followups:
        return
    n = len(bundle.all_references())
    _markdown_block(doc, appendix_markdown(bundle.followups, with_references=False), n, tips)
    refs = new_references(bundle.followups)
    if refs:
        doc.add_heading(REFS_HEADING, level=2)
    for ref in refs:
        p = doc.add_paragraph()
        p._p.append(_run(f"[{ref.number}] ", bold=True))
        url = safe_url(ref.url)
        if url:
            _hyperlink(p, ref.title or "untitled", url=url)
        else:
            p._p.append(_run(ref.title or "untitled"))
        _bookmark(p, f"ref_{ref.number}", ref.number)


def _comments(doc, bundle: ReportBundle, tips: dict[int, str]) -> None:
    """The comments appendix (only when the bundle was loaded with its comments)."""

    if not bundle.comments:
        return
    doc.add_heading(HEADING, level=1)
    for c in bundle.comments:
        status = f"resolved by {c.status_by}" if c.status == "resolved" else "open"
        quote = f" — “{c.quote}”" if c.quote else ""
        p = doc.add_paragraph()
        p._p.append(_run(f"{c.section}{quote}", bold=True))
        p._p.append(_run(f" — {c.author}, version {c.version}, {status}"))
        doc.add_paragraph(c.text)


def report_docx(bundle: ReportBundle) -> bytes:
    """The report as DOCX bytes: title, engine line, lead, sections, references with bookmarks.

    Raises:
        InputError (``report_not_ready``): the run has no report.
    """
    report = require_report(bundle)
    n = len(report.references)
    tips = bundle.tooltips()
    doc = Document()
    doc.core_properties.title = report.title[:255]
    doc.add_heading(report.title, level=0)
    label = bundle.state.engine_label or report.engine_label or bundle.state.config.engine
    meta = doc.add_paragraph()
    meta.add_run(f"Research Desk · engine: {label} · run {bundle.state.run_id}").italic = True
    if bundle.header:
        version = f" Version {bundle.version} of {bundle.versions}." if bundle.versions > 1 else ""
        doc.add_paragraph().add_run(bundle.header + version).italic = True
    _markdown_block(doc, report.lead, n, tips)
    for section, level in zip(report.sections, report.section_levels(), strict=True):
        doc.add_heading(section.heading, level=level)
        _markdown_block(doc, section.text, n, tips)
    doc.add_heading(f"References ({n})", level=1)
    for ref in report.references:
        p = doc.add_paragraph()
        p._p.append(_run(f"[{ref.number}] ", bold=True))
        url = safe_url(ref.url)
        if url:
            _hyperlink(p, ref.title or "untitled", url=url)
        else:
            p._p.append(_run(ref.title or "untitled"))
        ident = " · ".join(x for x in (ref.source_type, ref.external_id) if x)
        if ident:
            p._p.append(_run(f" — {ident}"))
        _bookmark(p, f"ref_{ref.number}", ref.number)
    _appendix(doc, bundle, tips)
    _comments(doc, bundle, tips)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()
