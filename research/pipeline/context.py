"""RunContext: everything one run's steps share (store, collector, engine, retriever, artifacts).

A context is built whole and never changed: a phase that produces the plan and syllabus, or that
records its tool calls its own way, makes a new context with :func:`dataclasses.replace`
(:meth:`RunContext.planned`, :meth:`RunContext.recording`) and passes it on. So a context that a
thread of parallel conversations holds means the same thing for the whole of that thread.

Also the search tool: every search is a tool call that goes through the compression (docs/design.md
§ Tool-result compression) and offload (``ArtifactStore.record``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from research.artifacts import ArtifactStore
from research.config import Settings
from research.engines.base import Engine
from research.errors import InvariantError, RunCancelled
from research.events import EventType
from research.models import ArtifactRecord, Plan, RunConfig, SearchResult, Step, Syllabus
from research.search.base import Retriever
from research.search.scrape import ScrapeError, scrape_url
from research.store.collector import SourceCollector
from research.store.runs import RunStore
from research.text.vectors import Vectors

SEARCH_TOOL = "search_local"  # the tool name with the default backend list ["local"]
SCRAPE_TOOL = "scrape_url"
_WORD = re.compile(r"[a-z0-9]+")


class ToolRecorder(Protocol):
    """What records a tool call: the ``ArtifactStore`` itself, or a recorder over it
    (``research.pipeline.recorders``: numbered or deferred calls). Returns the stored record
    (None while deferred) and the working-memory message of a useful card (else None)."""

    def record(
        self,
        step: Step,
        tool_name: str,
        raw_output: Any,
        *,
        tool_input: str = "",
        perspective: str = "",
    ) -> tuple[ArtifactRecord | None, dict | None]: ...


@dataclass(frozen=True, eq=False)
class RunContext:
    """Shared state of one executing run (not persisted; Redis + artifacts are). Frozen: see the
    module docstring.

    ``plan``, ``syllabus`` and ``artifacts`` are None until planning (``research.pipeline.
    planning``) makes the context that carries them. ``recorder``: where this context's tool
    calls are recorded (None: straight into ``artifacts``). ``stop_check``: called first by
    :meth:`check_cancel`; it raises to stop the job (the runner's lease check). Contexts made
    from one another share ``search_issues`` (the same list, under the same lock).
    """

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
    recorder: ToolRecorder | None = None
    stop_check: Callable[[], None] | None = None
    search_issues: list = field(default_factory=list)  # BackendIssue of every failed/empty search
    _issue_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def planned(self, plan: Plan, syllabus: Syllabus, artifacts: ArtifactStore) -> RunContext:
        """This context with the run's plan, syllabus and artifact store."""
        return replace(self, plan=plan, syllabus=syllabus, artifacts=artifacts)

    def recording(self, recorder: ToolRecorder | None) -> RunContext:
        """This context with its tool calls recorded by ``recorder`` (None: by the artifact
        store)."""
        return replace(self, recorder=recorder)

    def emit(self, type_: EventType, data: dict | None = None) -> None:
        """Append a declared event (``research/events.py``) to the run's stream; see
        ``RunStore.emit`` for the errors."""
        self.store.emit(self.run_id, type_, data)

    def vectors(self) -> Vectors:
        """The engine's cached sentence vectors (``Engine.vectors``), shared by every step of
        the run."""
        return self.engine.vectors

    def check_cancel(self) -> None:
        """Raise RunCancelled at a step boundary when the analyst asked to cancel (after
        ``stop_check``, which raises what it raises)."""
        if self.stop_check is not None:
            self.stop_check()
        if self.store.cancel_requested(self.run_id):
            raise RunCancelled("The run was cancelled by the analyst; everything so far is kept.")

    def step_for(self, hint: str) -> Step:
        """The plan step that best matches ``hint`` (word overlap with title + description).

        Tool calls are filed under a step so artifact names follow docs/design.md § Artifact offload; the first step
        wins ties, so survey calls land on step 1.
        """
        if self.plan is None:
            raise InvariantError("step_for() needs the run's plan: call planning.plan first.")
        words = set(_WORD.findall(hint.lower()))

        def overlap(step: Step) -> int:
            return len(words & set(_WORD.findall(f"{step.title} {step.description}".lower())))

        return max(self.plan.steps, key=overlap)

    def need_syllabus(self) -> Syllabus:
        """The run's syllabus. Raises InvariantError before planning stored it."""
        if self.syllabus is None:
            raise InvariantError("The run has no syllabus yet: call planning.plan first.")
        return self.syllabus

    def need_artifacts(self) -> ArtifactStore:
        """The run's artifact store. Raises InvariantError before planning made it."""
        if self.artifacts is None:
            raise InvariantError(
                "Tool calls need the run's artifact store: call planning.plan first."
            )
        return self.artifacts

    def _tool_recorder(self) -> ToolRecorder:
        return self.recorder if self.recorder is not None else self.need_artifacts()

    def search_tool_name(self) -> str:
        """Artifact tool name of a search: ``search_<backend>`` with one backend (``search_local``
        by default, ``search_pubmed``...), ``search`` with several (backends in the raw output)."""
        names = getattr(self.retriever, "names", None) or [getattr(self.retriever, "name", "local")]
        return f"search_{names[0]}" if len(names) == 1 else "search"

    def prime_searches(self, queries: list[str]) -> None:
        """Tell the retriever the queries about to be searched (their query vectors are
        embedded in one batch instead of one forward pass per search)."""
        prime = getattr(self.retriever, "prime", None)
        if prime is not None:
            prime(list(queries))

    def search(
        self,
        query: str,
        step: Step,
        *,
        k: int | None = None,
        perspective: str = "",
        memory: list[dict] | None = None,
        exclude: set[str] | None = None,
    ) -> list[SearchResult]:
        """Run the retriever as a tool call: raw results → artifact + summary card (docs/design.md
        § Tool-result compression).

        Returns the results; a useful card's context message is appended to ``memory`` (the
        caller's working memory, docs/design.md § Working memory); useless cards add nothing. ``exclude``: URLs the
        caller has already seen; up to 3k candidates are fetched so that k new ones come back.
        With a ``MultiRetriever`` every backend failure or empty result becomes an
        event ``search.failed`` / ``search.empty`` ``{backend, query, reason, message}``, is kept
        in ``search_issues`` (the report header lists failed backends) and the run goes on.
        """
        self._tool_recorder()
        k = k or self.config.results_per_query
        want = 3 * k if exclude else k
        issues, counts = [], {}
        if hasattr(self.retriever, "search_all"):
            outcome = self.retriever.search_all(query, want)
            results, issues, counts = outcome.results, outcome.issues, outcome.counts
        else:
            results = self.retriever.search(query, want)
        for issue in issues:
            self.emit(
                issue.event_type,
                {**issue.as_event(), "step": step.step_id, "perspective": perspective},
            )
        if issues:
            with self._issue_lock:
                self.search_issues.extend(issues)
        skipped = 0
        if exclude:
            fresh = [r for r in results if r.url not in exclude]
            skipped = len(results) - len(fresh)
            results = fresh[:k]
        raw = {
            "query": query,
            "backend": getattr(self.retriever, "name", "local"),
            "skipped_already_seen": skipped,
            "results": [r.model_dump(mode="json") for r in results],
        }
        if counts and len(counts) > 1:
            raw["backends"] = {
                name: {
                    "results": n,
                    **next(({"issue": i.reason} for i in issues if i.backend == name), {}),
                }
                for name, n in counts.items()
            }
        _, message = self._tool_recorder().record(
            step, self.search_tool_name(), raw, tool_input=query, perspective=perspective
        )
        if message is not None and memory is not None:
            memory.append(message)
        return results

    def failed_backends(self) -> dict[str, dict]:
        """Backends that failed during the run: ``{backend: {"failures": n, "reasons": [..]}}``
        (empty results are not failures)."""
        out: dict[str, dict] = {}
        with self._issue_lock:
            issues = list(self.search_issues)
        for issue in issues:
            if issue.kind != "failed":
                continue
            entry = out.setdefault(issue.backend, {"failures": 0, "reasons": []})
            entry["failures"] += 1
            if issue.reason not in entry["reasons"]:
                entry["reasons"].append(issue.reason)
        return out

    def scrape(
        self, url: str, step: Step, *, perspective: str = "", memory: list[dict] | None = None
    ):
        """``research.search.scrape.scrape_url`` as a tool call: the raw HTML and the extracted
        text each become an artifact (``scrape_url_html``, ``scrape_url``); a refused or failed
        fetch is an event ``scrape.failed`` and is re-raised (``ScrapeError``).

        Returns the ``ScrapeResult``.
        """

        self._tool_recorder()
        try:
            page = scrape_url(url)
        except ScrapeError as exc:
            self.emit(
                "scrape.failed",
                {"url": url[:300], "reason": exc.reason, "message": exc.message[:300]},
            )
            raise
        self._tool_recorder().record(
            step, f"{SCRAPE_TOOL}_html", page.html, tool_input=url, perspective=perspective
        )
        _, message = self._tool_recorder().record(
            step,
            SCRAPE_TOOL,
            {"url": page.url, "final_url": page.final_url, "title": page.title, "text": page.text},
            tool_input=url,
            perspective=perspective,
        )
        if message is not None and memory is not None:
            memory.append(message)
        return page
