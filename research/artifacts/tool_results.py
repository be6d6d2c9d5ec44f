"""Tool-result compression and file offloading (docs/design.md § Tool-result compression).

After every tool call: the raw output is written to disk (always, docs/design.md § Artifact offload), the engine
compresses it into a summary card ``{summary_title, summary, extraction, is_useful}``
(§4.4), and only a useful card enters the agent's working memory, as one assistant message
``{summary_title, summary, extraction, artifact_file}`` (§6.1). Useless cards inject nothing
(§6.2).

Layout (docs/design.md § Artifacts on disk)::

    {data_dir}/research_artifacts/{run_id}/{plan_title}/
        {plan_title}__step{step_id}_{step_title}__{tool_name}.{ext}      (first call)
        {plan_title}__step{step_id}_{step_title}__{tool_name}__2.{ext}   (second call) ...

Names are lowercase snake_case ASCII, deterministic, never derived from the summary, and can
never escape the run's artifacts dir whatever the plan title holds.
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from research.config import Settings, load_settings
from research.engines.base import CompressInput, Engine
from research.errors import ArtifactError
from research.llm.tokens import count_tokens
from research.models import ArtifactRecord, Step, SummaryCard
from research.store.keys import check_run_id
from research.store.runs import RunStore

MAX_PART = 48  # chars per name component; keeps full names well under 255 bytes
MAX_SEQ = 10_000
CARD_WAIT_S = 600  # longest wait for an earlier call's card (a compress call in flight)
MERGED_FACTS = 5  # extraction bullets of a card made from earlier cards


def slug(text: str, max_len: int = MAX_PART, fallback: str = "untitled") -> str:
    """Lowercase snake_case ASCII slug of ``text`` (``fallback`` when nothing is left).

    Unicode is transliterated where NFKD allows (é → e); every other run of non
    ``[a-z0-9]`` characters (spaces, dots, slashes, control characters) becomes one ``_``.
    """
    ascii_text = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode()
    s = re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")
    s = s[:max_len].rstrip("_")
    return s or fallback


def artifact_filename(
    plan_title: str, step_id: int, step_title: str, tool_name: str, ext: str, seq: int = 1
) -> str:
    """Seed 001 §5.3 filename: ``{plan_title}__step{step_id}_{step_title}__{tool_name}[__{seq}].{ext}``."""
    base = f"{slug(plan_title)}__step{int(step_id)}_{slug(step_title)}__{slug(tool_name)}"
    if seq > 1:
        base += f"__{seq}"
    return f"{base}.{slug(ext, 8)}"


def artifacts_dir(run_id: str, settings: Settings | None = None) -> Path:
    """``{data_dir}/research_artifacts/{run_id}`` (not created)."""
    settings = settings or load_settings()
    return settings.artifacts_root / check_run_id(run_id)


def artifact_path(run_id: str, artifact_file: str, settings: Settings | None = None) -> Path:
    """Absolute path of a run's artifact given its relative name.

    Raises:
        ArtifactError: when the name is absolute, contains ``..`` or otherwise resolves outside
            the run's artifacts dir, or the file does not exist.
    """
    root = artifacts_dir(run_id, settings).resolve()
    if not artifact_file or "\x00" in artifact_file or Path(artifact_file).is_absolute():
        raise ArtifactError(f"'{artifact_file[:80]}' is not an artifact name of this run.")
    path = (root / artifact_file).resolve()
    if not path.is_relative_to(root):
        raise ArtifactError(
            f"'{artifact_file[:80]}' is outside this run's artifacts; pick a file from the list."
        )
    if not path.is_file():
        raise ArtifactError(f"Artifact '{artifact_file[:80]}' does not exist for run {run_id}.")
    return path


def _serialize(raw: Any) -> tuple[str, str]:
    """(text, ext): JSON for structured output, plain text for strings."""
    if isinstance(raw, str):
        return raw, "txt"
    return json.dumps(raw, ensure_ascii=False, indent=2, default=str), "json"


def context_message(record: ArtifactRecord) -> dict | None:
    """Seed 001 §6: the single assistant message for a useful card, else None.

    Contains no plan title, step title, tool name or raw data.
    """
    if not record.card.is_useful:
        return None
    content = {
        "summary_title": record.card.summary_title,
        "summary": record.card.summary,
        "extraction": record.card.extraction,
        "artifact_file": Path(record.artifact_file).name,
    }
    return {"role": "assistant", "content": json.dumps(content, ensure_ascii=False)}


class ArtifactStore:
    """Offloads one run's tool outputs and keeps their cards (docs/design.md § Tool-result compression).

    Args:
        run_id: the run.
        plan_title: the plan's title (sanitized into the directory and file names).
        engine: anything with ``compress(CompressInput) -> SummaryCard``.
        store: where records are appended (``run:{id}:cards``) and events emitted.
        settings: for the data dir.
    """

    def __init__(
        self,
        run_id: str,
        plan_title: str,
        engine: Engine,
        store: RunStore,
        settings: Settings | None = None,
    ) -> None:
        self.run_id = check_run_id(run_id)
        self.plan_title = plan_title
        self.engine = engine
        self.store = store
        self.root = artifacts_dir(run_id, settings)
        self.plan_dir = self.root / slug(plan_title)
        # result key → the call that carded it first in this run (engines with ``cards_once``)
        self._carded: dict[str, _Carding] = {}
        self._carded_lock = threading.Lock()

    def _claim(self, step: Step, tool_name: str, ext: str) -> Path:
        """Atomically create the next free ``__n`` file (O_EXCL: safe across threads/processes)."""
        self.plan_dir.mkdir(parents=True, exist_ok=True)
        for seq in range(1, MAX_SEQ):
            path = self.plan_dir / artifact_filename(
                self.plan_title, step.step_id, step.title, tool_name, ext, seq
            )
            try:
                with open(path, "x", encoding="utf-8"):
                    return path
            except FileExistsError:
                continue
        raise ArtifactError(f"more than {MAX_SEQ} calls of {tool_name} in step {step.step_id}")

    def prepare(
        self,
        step: Step,
        tool_name: str,
        raw_output: Any,
        *,
        tool_input: str = "",
        perspective: str = "",
    ) -> PreparedCall:
        """Serialize and compress a tool output without writing anything (thread-safe; used to
        compress in parallel and commit in a deterministic order).

        Each document once per run, for an engine whose ``cards_once`` is true (a model call per
        compression): a search result that an earlier call of this run already carded goes to
        the compressor as a reference to that card (``CompressInput.carded``), and a search
        whose results were all carded before gets a card made from those cards
        (``merged_card``) with no engine call. The raw output is kept whole either way."""
        text, ext = _serialize(raw_output)
        keys = result_keys(raw_output) if getattr(self.engine, "cards_once", False) else []
        mine = _Carding(query=tool_input)
        earlier: dict[str, _Carding] = {}
        if keys:
            with self._carded_lock:
                earlier = {k: self._carded[k] for k in keys if k in self._carded}
                for k in keys:
                    self._carded.setdefault(k, mine)
        try:
            if keys and len(earlier) == len(keys):
                card = merged_card(tool_input, list(earlier.values()))
            else:
                card = self.engine.compress(
                    CompressInput(
                        plan_title=self.plan_title,
                        step_title=step.title,
                        step_description=step.description,
                        tool_name=tool_name,
                        raw_output=text,
                        query=tool_input,
                        carded={k: c.reference() for k, c in earlier.items()},
                    )
                )
            mine.card = card
        finally:
            mine.done.set()
        return PreparedCall(
            step=step,
            tool_name=tool_name,
            text=text,
            ext=ext,
            card=card,
            tool_input=tool_input,
            perspective=perspective,
        )

    def _reserve(self, call_id: str, step: Step, tool_name: str, ext: str) -> Path:
        """The file reserved for tool call ``call_id``: the same name on every attempt (a resumed
        call never makes ``__2``); new names are numbered by a Redis counter (atomic, Lua)."""
        base = artifact_filename(self.plan_title, step.step_id, step.title, tool_name, ext)
        base_key = base.rsplit(".", 1)[0]
        seq = self.store.calls.reserve(self.run_id, call_id, base_key)
        self.plan_dir.mkdir(parents=True, exist_ok=True)
        return self.plan_dir / artifact_filename(
            self.plan_title, step.step_id, step.title, tool_name, ext, seq
        )

    def commit(
        self, call: PreparedCall, call_id: str | None = None
    ) -> tuple[ArtifactRecord, dict | None]:
        """Write the raw file, store the record and emit ``tool.called``.

        With ``call_id`` (unique within the run, e.g. ``conv0.t2.1``) the call is idempotent: a
        call already recorded returns its stored record (nothing written, no event); a call
        reserved but not recorded (the process died) rewrites its own file.
        """
        step, tool_name = call.step, call.tool_name
        if call_id is not None:
            done = self.store.calls.recorded(self.run_id, call_id)
            if done:
                return done, context_message(done)
            path = self._reserve(call_id, step, tool_name, call.ext)
            path.write_text(call.text, encoding="utf-8")
        else:
            path = self._claim(step, tool_name, call.ext)
            path.write_text(call.text, encoding="utf-8")
        rel = path.relative_to(self.root).as_posix()
        record = ArtifactRecord(
            artifact_file=rel,
            tool_name=tool_name,
            step_id=step.step_id,
            step_title=step.title,
            perspective=call.perspective,
            tool_input=call.tool_input[:500],
            raw_chars=len(call.text),
            raw_tokens=count_tokens(call.text),
            card=call.card,
        )
        message = context_message(record)
        record.card_tokens = count_tokens(message["content"]) if message else 0
        if call_id is None:
            self.store.append_card(self.run_id, record)
        else:  # the card and the "recorded" mark land together (MULTI), so a crash never doubles a card
            self.store.calls.record(self.run_id, call_id, record)
        self.store.emit(
            self.run_id,
            "tool.called",
            {
                "tool": tool_name,
                "step": step.step_id,
                "file": rel,
                "is_useful": call.card.is_useful,
                "perspective": call.perspective,
            },
        )
        return record, message

    def record(
        self,
        step: Step,
        tool_name: str,
        raw_output: Any,
        *,
        tool_input: str = "",
        perspective: str = "",
        call_id: str | None = None,
    ) -> tuple[ArtifactRecord, dict | None]:
        """Write the raw output, compress it, store the card (``prepare`` then ``commit``).

        Returns:
            (record, message): ``message`` is the docs/design.md § Working memory: assistant message, or None when
            the card is not useful.
        """
        return self.commit(
            self.prepare(
                step, tool_name, raw_output, tool_input=tool_input, perspective=perspective
            ),
            call_id,
        )


@dataclass
class _Carding:
    """The card of the call that carded a document first in this run, as later calls see it:
    the call's tool input, and its card once compressed (``done`` set; ``card`` None when the
    compression failed)."""

    query: str
    done: threading.Event = field(default_factory=threading.Event)
    card: SummaryCard | None = None

    def reference(self) -> str:
        """How the compressor is told the document is carded: the earlier card's title when it
        is ready, else the search that carded it."""
        if self.done.is_set() and self.card is not None:
            return f"card '{self.card.summary_title}'"
        return f"card of the search '{self.query[:120]}'"


def result_keys(raw_output: Any) -> list[str]:
    """The distinct result keys (``doc_id``, else ``url``) of a search tool's raw output
    ``{"results": [{doc_id, url, …}, …]}``, in order; [] for any other output."""
    results = raw_output.get("results") if isinstance(raw_output, dict) else None
    if not isinstance(results, list):
        return []
    keys = [str(r.get("doc_id") or r.get("url") or "") for r in results if isinstance(r, dict)]
    return list(dict.fromkeys(k for k in keys if k))


def merged_card(query: str, earlier: list[_Carding], wait_s: float = CARD_WAIT_S) -> SummaryCard:
    """The card of a search whose results were all carded by earlier calls of the run, made
    from their cards with no model call (waits up to ``wait_s`` s for cards still being
    compressed): their titles in the summary, their first facts as the extraction, useful when
    any of them is."""
    seen, cards = set(), []
    for c in earlier:
        if id(c) in seen:
            continue
        seen.add(id(c))
        c.done.wait(wait_s)
        if c.card is not None:
            cards.append((c.query, c.card))
    useful = [(q, c) for q, c in cards if c.is_useful]
    named = "; ".join(f"'{c.summary_title}' (search: {q[:80]})" for q, c in (useful or cards))
    facts = list(dict.fromkeys(f for _, c in useful for f in c.extraction))[:MERGED_FACTS]
    return SummaryCard(
        summary_title=(
            useful[0][1].summary_title
            if len(useful) == 1
            else f"Results already summarised by {len(cards)} earlier searches"
        ),
        summary=f"Every result of the search '{query[:120]}' was already carded earlier in "
        f"this run: {named or 'no card was made'}.",
        extraction=facts,
        is_useful=bool(useful),
    )


@dataclass
class PreparedCall:
    """A compressed tool output not yet written (``ArtifactStore.prepare``)."""

    step: Step
    tool_name: str
    text: str
    ext: str
    card: SummaryCard
    tool_input: str = ""
    perspective: str = ""


def read_artifact(
    run_id: str,
    artifact_file: str,
    pattern: str | None = None,
    *,
    max_chars: int = 4000,
    settings: Settings | None = None,
) -> str:
    """Seed 001 §8 file retrieval: the artifact's text, or only lines matching ``pattern``.

    Args:
        artifact_file: a name relative to the run's artifacts dir, or a bare file name from a
            context message (searched in the run's plan dirs).
        pattern: case-insensitive regex; None returns the head of the file.
        max_chars: cap on the returned text (chars).

    Raises:
        ArtifactError: unsafe or unknown name; InputError-like message on a bad regex.
    """
    root = artifacts_dir(run_id, settings)
    name = artifact_file
    if "/" not in name and root.is_dir():
        hits = [
            f"{d.name}/{name}"
            for d in sorted(root.iterdir())
            if d.is_dir() and (d / name).is_file()
        ]
        name = hits[0] if hits else name
    text = artifact_path(run_id, name, settings).read_text(encoding="utf-8", errors="replace")
    if pattern:
        try:
            rx = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ArtifactError(f"pattern {pattern!r} is not a valid regex: {exc}") from exc
        text = "\n".join(line for line in text.splitlines() if rx.search(line))
    return text[:max_chars]
