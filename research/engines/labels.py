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


def fallback_line(counts: dict[str, int]) -> str:
    """The sentence naming the steps the offline engine answered for a model (``{step: n}``,
    ``research.store.run_usage.RunUsage.fallbacks``), e.g. ``"3 steps answered in offline extractive
    mode, the model's reply being unusable: write_section 2×, plan 1×."``; "" for none (the
    report's note, the run page)."""
    if not counts:
        return ""
    total = sum(counts.values())
    parts = ", ".join(f"{step} {n}×" for step, n in sorted(counts.items(), key=lambda x: -x[1]))
    noun = "step" if total == 1 else "steps"
    return f"{total} {noun} answered in {OFFLINE_LABEL}, the model's reply being unusable: {parts}."


PLANNED = {
    "compress": ("summary cards", "RESEARCH_LOCAL_COMPRESS=model"),
}
"""Steps a local model leaves to the offline engine by design: what they make, and the setting
that hands them back to the model (``research.engines.litellm.planned``)."""


def planned_line(counts: dict[str, int]) -> str:
    """The sentence naming the steps the offline engine answered by design, not for a failed
    reply (``{step: n}``, ``research.store.run_usage.RunUsage.offline_steps``), e.g. ``"By design
    for a local model, the summary cards were made in offline extractive mode (compress 14×;
    RESEARCH_LOCAL_COMPRESS=model has the model make them)."``; "" for none (the report's note,
    the run page, the Cost and Artifacts pages)."""
    if not counts:
        return ""
    rows = sorted(counts.items(), key=lambda x: -x[1])
    what = " and ".join(PLANNED.get(step, (step, ""))[0] for step, _ in rows)
    parts = ", ".join(f"{step} {n}×" for step, n in rows)
    settings = " ".join(PLANNED[step][1] for step, _ in rows if PLANNED.get(step, ("", ""))[1])
    hand_back = f"; {settings} has the model make them" if settings else ""
    return (
        f"By design for a local model, the {what} were made in {OFFLINE_LABEL} "
        f"({parts}{hand_back})."
    )
