"""The comments appendix of a report's exports (optional: ``research export --comments``, the
dashboard's "with comments" downloads). Markdown shared by the md, HTML, PDF and DOCX exports.

Shape::

    ## Appendix: comments

    - **Section** — “quoted sentence” — author, 2026-11-20 14:03 UTC (open | resolved by X)
      comment text
"""

from __future__ import annotations

from datetime import UTC, datetime

HEADING = "Appendix: comments"


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts or 0, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _esc(text: str) -> str:
    """Escape Markdown emphasis, links and headings in analyst text (it is shown literally)."""
    for ch in "\\*_[]#<>`":
        text = text.replace(ch, "\\" + ch)
    return " ".join(text.split())


def comments_markdown(comments: list) -> str:
    """The appendix as Markdown ('' when there is no comment); ``comments`` are
    ``research.store.comments.Comment``, oldest first."""
    if not comments:
        return ""
    out = [f"## {HEADING}", ""]
    for c in comments:
        status = f"resolved by {_esc(c.status_by)}" if c.status == "resolved" else "open"
        quote = f" — “{_esc(c.quote)}”" if c.quote else ""
        out.append(
            f"- **{_esc(c.section)}**{quote} — {_esc(c.author)}, {_when(c.created_at)} "
            f"(version {c.version}, {status})  \n  {_esc(c.text)}"
        )
    return "\n".join(out)
