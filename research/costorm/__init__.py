"""Co-STORM mode (docs/design.md § Co-STORM round-table): round-table of experts and a moderator with a live mind map.

Public API: ``run_costorm`` (pipeline), ``post_analyst_message`` (queue an analyst turn),
``get_turns`` / ``get_mindmap`` / ``get_meta`` / ``pending_messages`` (readers for the dashboard and CLI).
"""

from research.costorm.state import (
    get_meta,
    get_mindmap,
    get_turns,
    pending_messages,
    post_analyst_message,
)

__all__ = [
    "get_meta",
    "get_mindmap",
    "get_turns",
    "pending_messages",
    "post_analyst_message",
    "run_costorm",
]


def run_costorm(ctx):  # noqa: ANN001, ANN201 - typed in research.costorm.pipeline
    """See ``research.costorm.pipeline.run_costorm``."""
    from research.costorm.pipeline import run_costorm as _run  # noqa: PLC0415 - the round-table pipeline loads only for a Co-STORM run

    return _run(ctx)
