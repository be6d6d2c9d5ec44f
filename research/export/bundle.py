"""Everything a report export needs, read once from Redis: the report, hover text per citation,
and where each cited source came from (its artifact).

Used by every export format (``research/export/{html,docx,zipper}.py``) and by the dashboard's
Report page, so the page, the downloads and ``research export`` show the same citations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from research.errors import InputError
from research.export.dating import header_line
from research.models import Reference, Report, RunState, SourceRecord
from research.store.comments import CommentStore
from research.store.followups import FollowupStore
from research.store.runs import RunStore
from research.store.versions import VersionStore

SNIPPET_CHARS = 300  # characters of the cited excerpt shown on hover


@dataclass
class ReportBundle:
    """A run's report plus per-reference context.

    Attributes:
        state: the run.
        report: the final report, or None while the run has none.
        snippets: ``source_id → excerpt`` (collector ``key_excerpts``, else the first dialogue-turn
            snippet; at most ``SNIPPET_CHARS`` characters).
        artifacts: ``source_id → artifact file`` (relative to the run's artifacts dir): the
            raw output of the search call of the first dialogue turn citing the source (the
            turn's ``artifact_files``, else the card whose ``tool_input`` is one of the turn's
            ``search_queries``).
    """

    state: RunState
    report: Report | None
    snippets: dict[str, str] = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)
    followups: list = field(
        default_factory=list
    )  # research.store.followup_models.Followup (the follow-ups appendix)
    version: int = 0  # the report version shown (0 while the run has no report)
    versions: int = 0  # how many versions the report has
    comments: list = field(default_factory=list)  # research.store.comments.Comment (appendix)
    header: str = ""  # "As of <run date>…" (research.export.dating.header_line)

    def all_references(self) -> list[Reference]:
        """The report's references, then those the follow-ups added (numbers continue)."""
        return list(self.report.references if self.report else []) + [
            r for f in self.followups for r in f.new_references
        ]

    def tooltip(self, ref: Reference) -> str:
        """Plain hover text for a citation: ``[n] title — type · id — “snippet”`` (one line)."""
        ident = " · ".join(x for x in (ref.source_type, ref.external_id) if x)
        parts = [f"[{ref.number}] {ref.title or 'untitled'}"]
        if ident:
            parts.append(ident)
        snippet = self.snippets.get(ref.source_id, "")
        if snippet:
            parts.append(f"“{snippet}”")
        return " ".join(" — ".join(parts).split())

    def tooltips(self) -> dict[int, str]:
        """``reference number → tooltip`` for every reference of the report."""
        return {r.number: self.tooltip(r) for r in self.all_references()}


def _clip(text: str, n: int = SNIPPET_CHARS) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def load_bundle(
    store: RunStore, run_id: str, *, version: int | None = None, comments: bool = False
) -> ReportBundle:
    """Read the run, its report (version ``version``; None = the current one), source excerpts
    and turn → artifact links; with ``comments``, the run's comments too (exports' appendix).

    Raises:
        RunNotFoundError: no such run. InputError: ill-formed run id; no such version (code
        ``no_such_version``).
    """
    state = store.get_run(run_id)
    versions = VersionStore(store)
    shown = versions.get(run_id, version)
    report = shown.report if shown else None
    bundle = ReportBundle(state=state, report=report, followups=FollowupStore(store).list(run_id))
    bundle.version = shown.number if shown else 0
    bundle.versions = versions.count(run_id)
    bundle.header = header_line(store, state)
    if comments:
        bundle.comments = CommentStore(store).list(run_id)
    if report is None:
        return bundle
    wanted = {r.source_id for r in report.references}
    try:
        sources: list[SourceRecord] = store.collector(run_id).all_sources()
    except InputError:
        sources = []
    for s in sources:
        if s.source_id in wanted and s.key_excerpts:
            bundle.snippets[s.source_id] = _clip(s.key_excerpts)
    artifacts, snippets = turn_sources(store, run_id, wanted)
    bundle.artifacts.update(artifacts)
    for sid, text in snippets.items():
        bundle.snippets.setdefault(sid, _clip(text))
    return bundle


def turn_sources(
    store: RunStore, run_id: str, wanted: set[str] | None = None
) -> tuple[dict[str, str], dict[str, str]]:
    """``(source id → artifact file, source id → snippet)`` for the run's turn sources (all, or
    those in ``wanted``): the raw search artifact of the first turn that found each source (the
    turn's own files, else the card of the search that ran its query) and that turn's snippet."""
    by_query: dict[tuple[str, str], str] = {}
    for card in store.get_cards(run_id):  # the search call whose raw output held the turn's sources
        by_query.setdefault((card.perspective, card.tool_input), card.artifact_file)
        by_query.setdefault(("", card.tool_input), card.artifact_file)
    artifacts: dict[str, str] = {}
    snippets: dict[str, str] = {}
    for turn in store.get_turns(run_id):
        files = list(turn.artifact_files) + [
            f
            for q in turn.search_queries
            if (f := by_query.get((turn.perspective, q)) or by_query.get(("", q)))
        ]
        for src in turn.sources:
            if wanted is not None and src.source_id not in wanted:
                continue
            if src.snippet and src.source_id not in snippets:
                snippets[src.source_id] = src.snippet
            if files and src.source_id not in artifacts:
                artifacts[src.source_id] = files[0]
    return artifacts, snippets


def require_report(bundle: ReportBundle) -> Report:
    """The bundle's report. Raises InputError (code ``report_not_ready``) when there is none."""
    if bundle.report is None:
        raise InputError(
            f"Run {bundle.state.run_id} has no report yet (status: {bundle.state.status}); "
            "export it once it is complete.",
            code="report_not_ready",
        )
    return bundle.report
