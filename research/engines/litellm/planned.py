"""Steps a local model leaves to the offline extractive engine by design.

A small model on a few CPU cores answers a prompt in seconds to tens of seconds, and one server
slot answers one call at a time, so a run's time is the sum of its calls. The summary cards
(``compress``) were a third of a 2×2 run's calls and time on SmolLM2-135M with 2 cores, and they
are extraction (the passages around a search's terms), which the offline engine does without a
model. So when the compressor's model is local (``research.llm.local.is_local``) and
``RESEARCH_LOCAL_COMPRESS`` is ``offline`` (the default), the cards are made offline and the run
says so wherever they show (``research.engines.labels.planned_line``: the report's note, the run
page, ``research show --json``'s ``llm.offline_by_design``, an ``llm.offline`` event). A hosted
model, or ``RESEARCH_LOCAL_COMPRESS=model``, keeps every step on the model.
"""

from __future__ import annotations

from research.config import Settings
from research.llm.local import is_local

REASONS = {
    "compress": "the compressor's model is local; RESEARCH_LOCAL_COMPRESS=model has it make them",
}
"""Why each step may be planned offline, as the ``llm.offline`` event states it."""


def offline_by_design(models: dict[str, str], settings: Settings) -> dict[str, str]:
    """``{step: reason}``: the steps of a run with role → model ``models`` that the offline
    engine answers by design (module doc); {} for a hosted compressor or
    ``RESEARCH_LOCAL_COMPRESS=model``."""
    compressor = models.get("compressor")
    if compressor and settings.local_compress == "offline" and is_local(compressor):
        return {"compress": REASONS["compress"]}
    return {}
