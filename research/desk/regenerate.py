"""Regenerating one report section with the analyst's instruction ("shorter", "only phase III
trials", "focus on elderly patients"): ``propose`` computes the new text (nothing stored),
``accept`` stores it as a new version (``research.desk.edit.save_edit``: citations checked),
``regenerate`` does both (the CLI: it has no one to ask). The ranking is ``research.desk.material``.

Material: the run's evidence passages (``RunStore.evidence``, whole sentences of saved sources).
A section that answers a syllabus question draws on that question's passages; any other section
on the whole run's evidence. The instruction is an extra query: every passage is scored with the
one evidence judgement (``research.evidence.judge.score_passages``) against the instruction and
(for a section without a question) against its heading, and ranked by the mean of that and its
score for the section. Only sources in the run's reference list (the report's, then those
follow-ups added) are cited, by their numbers, so every ``[n]`` of the new text resolves.

Engines (the run's own):
* extractive (labelled): the best ``target_sentences`` passages, at most ``PER_SOURCE`` per
  source, near-duplicates dropped, in reading order, each cited ``[n]``;
* litellm: the ``regenerate_section`` step (its prompt file, accounted in the run's LLM usage
  and budget) writes from the current text, the instruction and the best passages as snippets.
  A run whose budget is spent gets the extractive text (no model is called).

``research``: first one research-more turn through ``research ask --research``
(``research.followup.ask.ask``): the follow-up is stored with the run like any other, and the
sources its answer cites join the reference list properly, so the section may cite them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from research.citations import LOCAL_RE
from research.desk.edit import EditOutcome, find_part, part_names, save_edit
from research.desk.material import PER_SOURCE, choose, rank, section_question, target_sentences
from research.engines.base import RegenerateInput, Snippet
from research.engines.labels import OFFLINE_LABEL
from research.engines.litellm.engine import LiteLLMEngine
from research.errors import InputError
from research.followup.ask import ask
from research.followup.checks import check_askable
from research.models import EvidencePassage, RunState
from research.store.followups import FollowupStore
from research.store.runs import RunStore
from research.store.versions import ReportVersion, VersionStore
from research.text import ensure_period

MAX_INSTRUCTION_CHARS = 500
SNIPPETS = 10  # passages shown to the litellm writer
Say = Callable[[str], None]


@dataclass
class Candidate:
    """A regenerated section, not yet stored: ``part`` (section index, 1 = first), its
    ``heading``, the ``instruction``, the version it was made from (``base_version``), the
    ``old_text`` and ``new_text`` (citations ``[n]`` into the run's references), the engine that
    wrote it (``engine_label``; ``extractive``) and, with research-more, the follow-up that
    researched (``followup_id``) and how many new sources it saved."""

    run_id: str
    part: int
    heading: str
    instruction: str
    base_version: int
    old_text: str
    new_text: str
    engine_label: str
    extractive: bool
    followup_id: str | None = None
    sources_added: int = 0
    cited: list[int] = field(default_factory=list)


def validate_instruction(instruction: object) -> str:
    """The instruction with whitespace collapsed.

    Raises:
        InputError (code ``invalid_instruction``): not text, empty, or over 500 characters.
    """
    if not isinstance(instruction, str) or not instruction.strip():
        raise InputError(
            'The instruction is empty: say how to rewrite the section ("shorter", "only phase '
            'III trials", "focus on elderly patients").',
            code="invalid_instruction",
        )
    text = " ".join(instruction.split())
    if len(text) > MAX_INSTRUCTION_CHARS:
        raise InputError(
            f"The instruction is {len(text):,} characters; keep it under "
            f"{MAX_INSTRUCTION_CHARS:,}.",
            code="invalid_instruction",
        )
    return text


def check(
    store: RunStore, run_id: str, heading: str, instruction: str
) -> tuple[RunState, ReportVersion, int, str]:
    """The cheap checks of a regeneration, before any model or search: ``(run, current
    version, section's part index, instruction as used)``. Raises what ``propose`` raises for
    bad input (all but ``nothing_to_cite``)."""
    instruction = validate_instruction(instruction)
    state = check_askable(store, run_id)
    current = VersionStore(store).get(state.run_id)
    if current is None:  # check_askable saw the report: only a concurrent deletion gets here
        raise InputError(f"Run {state.run_id} has no report.", code="report_not_ready")
    part = find_part(current.report, heading)
    if part == 0:
        raise InputError(
            "The lead summarises the sections and cannot be regenerated; regenerate a section "
            "or edit the lead. Sections: " + "; ".join(part_names(current.report)[1:]),
            code="not_a_section",
        )
    return state, current, part, instruction


def propose(
    store: RunStore,
    run_id: str,
    heading: str,
    instruction: str,
    *,
    research: bool = False,
    settings=None,
    on_progress: Say | None = None,
) -> Candidate:
    """The section ``heading`` of the current version written again with ``instruction``
    (module doc). Nothing of the report is stored; with ``research`` the research-more
    follow-up is (as ``research ask --research``).

    Raises:
        InputError: ``invalid_instruction``; ``unknown_section`` (no such heading: the message
            lists them); ``not_a_section`` (the lead); ``not_askable`` / ``report_not_ready`` /
            ``no_evidence`` (``check_askable``); ``nothing_to_cite`` (no passage of a referenced
            source for this section). RunNotFoundError.
    """
    say = on_progress or (lambda _msg: None)
    state, current, part, instruction = check(store, run_id, heading, instruction)
    section = current.report.sections[part - 1]
    question = section_question(store, state.run_id, current.report, section.heading)
    followup_id, added = None, 0
    if research:
        say("researching more first: one Analyst follow-up turn")
        asked = f"{question.label if question else section.heading}: {instruction}"
        f = ask(state.run_id, asked, research=True, store=store, settings=settings)
        followup_id, added = f.id, f.sources_added
    refs = FollowupStore(store).references(state.run_id, current.report)
    numbers = {r.source_id: r.number for r in refs}
    say("ranking the run's evidence by the instruction")
    ranked = rank(store, state, section.heading, question, instruction, numbers)
    n = target_sentences(section.text, instruction)
    chosen = choose(ranked, n)
    if not chosen:
        raise InputError(
            f"The run's evidence has no passage of a referenced source for '{section.heading}'; "
            "nothing was saved. Research more first (--research) to find some.",
            code="nothing_to_cite",
        )
    text, label = _write(
        store,
        state,
        section.heading,
        section.text,
        question,
        instruction,
        ranked,
        chosen,
        numbers,
        n,
        settings,
        say,
    )
    return Candidate(
        run_id=state.run_id,
        part=part,
        heading=section.heading,
        instruction=instruction,
        base_version=current.number,
        old_text=section.text,
        new_text=text,
        engine_label=label,
        extractive=label.startswith(OFFLINE_LABEL),
        followup_id=followup_id,
        sources_added=added,
        cited=list(dict.fromkeys(int(x) for x in LOCAL_RE.findall(text))),
    )


def _write(
    store,
    state,
    heading,
    old_text,
    question,
    instruction,
    ranked,
    chosen,
    numbers,
    n,
    settings,
    say,
) -> tuple[str, str]:
    """``(new text, engine label)``: the litellm step, or the extractive text (module doc)."""
    extractive = " ".join(
        f"{ensure_period(p.passage.strip())}[{numbers[p.source_id]}]" for p in chosen
    )
    if state.config.engine != "litellm":
        return extractive, OFFLINE_LABEL
    engine = LiteLLMEngine(state.config, state.run_id, store, settings)
    spent = (
        "reached during the run" if state.budget_exhausted else engine.session.budget.exhausted()
    )
    if spent:
        return extractive, f"{OFFLINE_LABEL} (the run's LLM budget is spent: {spent})"
    say("writing the section with the litellm engine")
    by_source: dict[str, list[EvidencePassage]] = {}
    for p in ranked[: SNIPPETS * PER_SOURCE]:
        if len(by_source) < SNIPPETS or p.source_id in by_source:
            by_source.setdefault(p.source_id, []).append(p)
    titles = {s.source_id: s.title for s in store.collector(state.run_id).all_sources()}
    snippets = [
        Snippet(
            n=numbers[sid],
            source_id=sid,
            title=titles.get(sid, ""),
            text=" ".join(p.passage for p in sorted(ps, key=lambda p: p.start)[:PER_SOURCE]),
        )
        for sid, ps in by_source.items()
    ]
    out = engine.regenerate_section(
        RegenerateInput(
            topic=state.topic,
            heading=heading,
            text=old_text,
            instruction=instruction,
            snippets=snippets,
            question=question,
            max_sentences=min(12, n),
        )
    )
    return out.text.strip() or extractive, engine.label


def accept(store: RunStore, candidate: Candidate, *, author: str | None) -> EditOutcome:
    """Store ``candidate`` as a new version (``save_edit``, note ``regenerate: <instruction>``).

    Raises:
        InputError: ``stale_candidate`` (the report got a new version since the candidate was
            made from version ``base_version``: regenerate again); those of ``save_edit``
            (``bad_citation``, ``unchanged`` …). Nothing is stored when it raises.
    """
    current = VersionStore(store).get(candidate.run_id)
    if current is None or current.number != candidate.base_version:
        now = current.number if current else 0
        raise InputError(
            f"The report is at version {now} now, not {candidate.base_version} that this text was "
            "made from; regenerate again. Nothing was saved.",
            code="stale_candidate",
        )
    note = f"regenerate: {candidate.instruction}"[:200]
    return save_edit(
        store, candidate.run_id, candidate.part, candidate.new_text, author=author, note=note
    )


def regenerate(
    store: RunStore,
    run_id: str,
    heading: str,
    instruction: str,
    *,
    research: bool = False,
    author: str | None = None,
    settings=None,
    on_progress: Say | None = None,
) -> tuple[Candidate, EditOutcome]:
    """``propose`` then ``accept`` (the CLI: it stores the result, there is no one to ask).
    Raises what those raise; nothing of the report is stored when it raises."""
    candidate = propose(
        store,
        run_id,
        heading,
        instruction,
        research=research,
        settings=settings,
        on_progress=on_progress,
    )
    return candidate, accept(store, candidate, author=author)
