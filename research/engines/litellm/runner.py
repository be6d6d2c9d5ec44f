"""How a litellm engine step is called: ``StepRunner``, the plumbing ``LiteLLMEngine`` sets up
in its constructor and every step method uses.

- ``_run``: the step's declared model through ``structured.call_structured`` (one re-ask on an
  invalid reply), else its fallback, with an ``llm.fallback`` event and the run's fallback
  count (auth errors and replay misses raised: ``RAISE_CODES``, except the replay gaps of
  ``REPLAY_MAY_MISS``); ``_guard``: the same for a step whose empty reply is useless;
- ``_offline``: the offline engine answering a step by design (``planned``), counted and
  announced once (``llm.offline``); ``_fallback``: the extractive engine, made on first use;
- the run's budget flag (``_on_budget``), events (``_emit``), the step counts answered offline
  (``fallbacks``), the sentence vectors shared with the fallback (``vectors``), the run's cards
  (``_cards_for``) and the ``read_artifact`` tool (``READ_ARTIFACT_TOOL``, ``_read_artifact``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from research.artifacts import read_artifact
from research.engines.litellm.structured import call_structured
from research.engines.steps import step as declared
from research.events import EventType
from research.llm.errors import BudgetExhausted, LLMError
from research.llm.session import LLMSession
from research.text.vectors import Vectors

if TYPE_CHECKING:
    from research.engines.extractive.engine import ExtractiveEngine

READ_ARTIFACT_TOOL = {
    "type": "function",
    "function": {
        "name": "read_artifact",
        "description": "Read or grep a stored raw tool output (artifact) when its summary is not enough. "
        "Returns matching lines (or the file head), at most 1500 characters.",
        "parameters": {
            "type": "object",
            "properties": {
                "file": {"type": "string", "description": "artifact_file name from the notes"},
                "pattern": {
                    "type": "string",
                    "description": "case-insensitive regex; empty for the file head",
                },
            },
            "required": ["file"],
        },
    },
}
RAISE_CODES = {"auth_error", "cassette_miss"}
# Steps whose calls depend on thread timing: which of two parallel searches cards a shared result
# first decides which one calls the compressor (``cards_once``), so a replay may ask for a card
# its recording never made. The offline compressor makes that card (the ``llm.fallback`` event
# says so; not counted as the model's fallback, which the report discloses: the recorded run had
# none); the steps that read cards find their answers by their semantic keys, so the report is
# the recorded one.
REPLAY_MAY_MISS = {"compress"}


class StepRunner:
    """The plumbing of ``LiteLLMEngine`` (module doc); its constructor sets the attributes
    declared here."""

    session: LLMSession
    run_id: str | None
    store: Any
    settings: Any
    planned: dict[str, str]
    _announced: set[str]
    _fallback_engine: ExtractiveEngine | None
    _vectors: Vectors | None
    _lock: threading.Lock

    # ------------------------------------------------------------------ plumbing
    def _on_budget(self, reason: str) -> None:
        if self.store and self.run_id:
            self.store.set_fields(
                self.run_id, budget_exhausted="True", stop_reason="budget_exhausted"
            )
            self.store.emit(self.run_id, "budget.exhausted", {"reason": reason})

    def _fallback(self):
        with self._lock:
            if self._fallback_engine is None:
                from research.engines.extractive import ExtractiveEngine  # noqa: PLC0415 - scikit-learn, only when a step falls back

                self._fallback_engine = ExtractiveEngine()
                if self._vectors is not None:  # one sentence cache per run
                    self._fallback_engine.vectors = self._vectors
            return self._fallback_engine

    @property
    def vectors(self):
        """The run's cached sentence vectors (``research.text.vectors.Vectors``,
        the extractive fallback's): the reporter's material, allocation and dedupe share them, so
        each sentence is embedded once per run (allocation re-embedded every candidate
        sentence, 0.73 s on the 4×3 drug run, on the critical path). Made without the
        extractive engine itself (whose modules import scikit-learn), which reuses it if a step
        falls back."""
        with self._lock:
            if self._fallback_engine is not None:
                return self._fallback_engine.vectors
            if self._vectors is None:
                self._vectors = Vectors()
            return self._vectors

    def _run(
        self,
        step: str,
        material: dict,
        fallback: Callable[[], Any],
        post: Callable[[Any], Any] = lambda x: x,
        *,
        inp: Any = None,
        tool_tokens: int = 0,
        tools: list[dict] | None = None,
        run_tool=None,
        reply: type | None = None,
    ) -> Any:
        """Call the declared step's model (``research.engines.steps``; ``inp`` gives the cassette
        key) and post-process (``post`` raising InvalidOutput re-asks once with its reason), or
        answer with ``fallback()`` (module doc). ``reply``: a stricter reply model than the
        declared one (its validation errors re-ask)."""
        try:
            return call_structured(
                self.session,
                declared(step),
                material,
                inp,
                reply=reply,
                tool_tokens=tool_tokens,
                tools=tools,
                run_tool=run_tool,
                post=post,
            )
        except BudgetExhausted:
            return fallback()
        except LLMError as exc:  # InvalidOutput included
            replay_gap = exc.code == "cassette_miss" and step in REPLAY_MAY_MISS
            if exc.code in RAISE_CODES and not replay_gap:
                raise
            if self.store and self.run_id and not replay_gap:
                self.store.add_fallback(self.run_id, step)
            self._emit("llm.fallback", {"step": step, "code": exc.code, "error": exc.message[:300]})
            return fallback()

    def _offline(self, step: str) -> Any:
        """The offline engine, answering ``step`` by design (``planned``): counted
        (``RunStore.add_offline``) and, the first time in this engine, an ``llm.offline`` event
        with the reason."""
        if self.store and self.run_id:
            self.store.add_offline(self.run_id, step)
            with self._lock:
                first = step not in self._announced
                self._announced.add(step)
            if first:
                self._emit("llm.offline", {"step": step, "reason": self.planned[step]})
        return self._fallback()

    def _emit(self, type_: EventType, data: dict) -> None:
        if self.store and self.run_id:
            self.store.emit(self.run_id, type_, data)

    def _read_artifact(self, name: str, args: dict) -> str:
        if name != "read_artifact" or not self.run_id:
            return "error: unknown tool"

        return (
            read_artifact(
                self.run_id,
                str(args.get("file", "")),
                str(args.get("pattern") or "") or None,
                max_chars=1500,
                settings=self.settings,
            )
            or "(no matching lines)"
        )

    def _cards_for(self, queries: set[str], known: int | None = None) -> list:
        """Stored cards of the run whose tool input is one of ``queries``; only the first
        ``known`` cards in commit order when given."""
        if not (self.store and self.run_id and queries) or known == 0:
            return []
        cards = self.store.get_cards(self.run_id)
        return [c for c in (cards if known is None else cards[:known]) if c.tool_input in queries]

    def _guard(self, step: str, material: dict, fallback, post) -> Any:
        """``_run`` for a step whose empty reply is useless (``post`` raises InvalidOutput)."""
        return self._run(step, material, fallback, post)

    def fallbacks(self) -> dict[str, int]:
        """The run's steps answered offline so far: ``{step: count}`` (``RunStore.fallbacks``;
        {} without a run)."""
        if not (self.store and self.run_id):
            return {}
        return self.store.fallbacks(self.run_id)
