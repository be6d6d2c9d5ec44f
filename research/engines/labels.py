"""The label of the offline extractive engine, in one place (house rule: the offline extractive
engine is labelled wherever its output is shown).

Every page, export, CLI line and report header that names the offline engine uses these;
``tests/test_boundaries.py`` fails when another module spells the wording itself.
Imports nothing: engines, follow-ups, exports, the CLI and the pages all read it.
"""

from __future__ import annotations

OFFLINE_LABEL = "offline extractive mode"
"""The engine's name wherever its output is shown (report header, follow-ups, sidebar, Launch)."""

OFFLINE_NOTE = "sentences quoted from the run's sources, no language model"
"""What the label means, for places with room for one more clause."""


def offline_label(*, with_note: bool = False) -> str:
    """``"offline extractive mode"``, or with ``with_note`` ``"offline extractive mode — sentences
    quoted from the run's sources, no language model"``."""
    return f"{OFFLINE_LABEL} — {OFFLINE_NOTE}" if with_note else OFFLINE_LABEL
