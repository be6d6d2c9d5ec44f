"""The dashboard's name for ``research.export.rendering`` (safe Markdown, citation links): the helpers
live in that neutral module so the exports use them without importing the UI layer."""

from research.export.rendering import (
    ANCHOR_PREFIX,
    anchor_html,
    anchor_id,
    answer_markdown,
    code,
    link_citations,
    link_title,
    plain,
    reference_markdown,
    report_body_markdown,
    safe_markdown,
    safe_url,
    source_markdown,
)

__all__ = [
    "ANCHOR_PREFIX",
    "anchor_html",
    "anchor_id",
    "answer_markdown",
    "code",
    "link_citations",
    "link_title",
    "plain",
    "reference_markdown",
    "report_body_markdown",
    "safe_markdown",
    "safe_url",
    "source_markdown",
]
