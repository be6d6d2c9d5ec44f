"""Comparing two report versions with the standard library's ``difflib``: a side-by-side HTML
table (``difflib.HtmlDiff``, which escapes the text) and a unified text diff for the CLI."""

from __future__ import annotations

import difflib
import textwrap

from research.models import Report

WRAP = 72  # characters per line of the side-by-side table


def report_lines(report: Report) -> list[str]:
    """The report's lead and sections as lines, each paragraph wrapped at ``WRAP`` characters,
    so a change inside a long paragraph marks only the lines around it."""
    parts = [report.lead, *[f"## {s.heading}\n\n{s.text}" for s in report.sections]]
    lines: list[str] = []
    for part in parts:
        for para in part.split("\n"):
            lines += textwrap.wrap(para, WRAP, break_on_hyphens=False) or [""]
        lines.append("")
    return lines


def side_by_side_html(a: Report, b: Report, a_label: str, b_label: str) -> str:
    """An HTML ``<table>`` (``difflib.HtmlDiff.make_table``, context of 2 lines) with the two
    versions side by side, changed lines marked; source text is escaped by difflib. Returns a
    one-row table saying "no differences" when the texts are equal."""
    table = difflib.HtmlDiff(tabsize=2).make_table(
        report_lines(a), report_lines(b), a_label, b_label, context=True, numlines=2
    )
    return _DIFF_CSS + table


def unified(a: Report, b: Report, a_label: str, b_label: str) -> str:
    """A unified diff (``difflib.unified_diff``) of the two versions' text."""
    return "\n".join(
        difflib.unified_diff(report_lines(a), report_lines(b), a_label, b_label, lineterm="", n=2)
    )


# Static CSS (no text from sources or models) for difflib's table classes.
_DIFF_CSS = (
    "<style>table.diff{font-family:ui-monospace,monospace;font-size:0.8rem;border-collapse:"
    "collapse;width:100%}table.diff td{padding:1px 4px;vertical-align:top;white-space:pre-wrap;"
    "word-break:break-word}table.diff th{background:#f0f2f6;padding:2px 4px}"
    ".diff_header{color:#888;background:#f7f7f9}table.diff td.diff_header{white-space:nowrap;"
    "width:1%;text-align:right}td.diff_next,th.diff_next{display:none}"
    ".diff_add{background:#d7f5dd}.diff_chg{background:#fff3b0}.diff_sub{background:#fbd5d5}"
    "</style>"
)
