"""RunContext: everything one run's steps share (store, collector, engine, retriever, artifacts).

Also the search tool: every search is a tool call that goes through seed 001's compression and
offload (``ArtifactStore.record``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from research.artifacts import ArtifactStore
from research.config import Settings
from research.engines.base import Engine
from research.errors import RunCancelled
from research.models import Plan, RunConfig, SearchResult, Step, Syllabus
from research.search.base import Retriever
from research.store.collector import SourceCollector
from research.store.runs import RunStore

SEARCH_TOOL = "search_local"
_WORD = re.compile(r"[a-z0-9]+")


@dataclass
class RunContext:
    """Shared state of one executing run (not persisted; Redis + artifacts are)."""

    run_id: str
    config: RunConfig
    settings: Settings
    store: RunStore
    collector: SourceCollector
    engine: Engine
    retriever: Retriever
    plan: Plan | None = None
    syllabus: Syllabus | None = None
    artifacts: ArtifactStore | None = None

    def emit(self, type_: str, data: dict | None = None) -> None:
        """Append an event to the run's stream."""
        self.store.emit(self.run_id, type_, data)

    def check_cancel(self) -> None:
        """Raise RunCancelled at a step boundary when the analyst asked to cancel."""
        if self.store.cancel_requested(self.run_id):
            raise RunCancelled("The run was cancelled by the analyst; everything so far is kept.")

    def step_for(self, hint: str) -> Step:
        """The plan step that best matches ``hint`` (word overlap with title + description).

        Tool calls are filed under a step so artifact names follow seed 001 §5.3; the first step
        wins ties, so survey calls land on step 1.
        """
        assert self.plan is not None
        words = set(_WORD.findall(hint.lower()))

        def overlap(step: Step) -> int:
            return len(words & set(_WORD.findall(f"{step.title} {step.description}".lower())))

        return max(self.plan.steps, key=overlap)

    def search(self, query: str, step: Step, *, k: int | None = None, perspective: str = "",
               memory: list[dict] | None = None, exclude: set[str] | None = None) -> list[SearchResult]:
        """Run the retriever as a tool call: raw results → artifact + summary card (seed 001).

        Returns the results; a useful card's context message is appended to ``memory`` (the
        caller's working memory, seed 001 §6); useless cards add nothing. ``exclude``: URLs the
        caller has already seen; up to 3k candidates are fetched so that k new ones come back.
        """
        assert self.artifacts is not None
        k = k or self.config.results_per_query
        results = self.retriever.search(query, 3 * k if exclude else k)
        skipped = 0
        if exclude:
            fresh = [r for r in results if r.url not in exclude]
            skipped = len(results) - len(fresh)
            results = fresh[:k]
        raw = {"query": query, "backend": getattr(self.retriever, "name", "local"),
               "skipped_already_seen": skipped, "results": [r.model_dump(mode="json") for r in results]}
        _, message = self.artifacts.record(step, SEARCH_TOOL, raw, tool_input=query, perspective=perspective)
        if message is not None and memory is not None:
            memory.append(message)
        return results
