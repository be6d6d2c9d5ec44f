"""Co-STORM mode (seed 004): round-table of experts and a moderator with a live mind map.

Public API: ``run_costorm`` (pipeline), ``post_analyst_message`` (queue an analyst turn),
``get_turns`` / ``get_mindmap`` / ``get_meta`` / ``pending_messages`` (readers for the dashboard and CLI).
"""

from research.costorm.pipeline import run_costorm as _run
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


def run_costorm(ctx):
    """See ``research.costorm.pipeline.run_costorm``."""

    return _run(ctx)
