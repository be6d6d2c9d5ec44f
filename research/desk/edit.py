"""Editing a report: one part (the lead or one section) at a time, its citations checked, stored
as a new version (``research.store.versions``); restoring an old version as a new one.

Citation rule on save: every ``[n]`` in the edited report must resolve to the run's reference
list (the report's references, then those follow-ups added: 1..N). An edit citing anything else
is refused with a message and nothing is stored. A reference that is no longer cited anywhere
(report or follow-up answers) stays in the list and is reported, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from research.citations import LOCAL_RE
from research.errors import InputError
from research.models import Report, ReportSection
from research.store.followups import FollowupStore
from research.store.runs import RunStore
from research.store.versions import ReportVersion, VersionStore

LEAD = "Lead"
MAX_PART_CHARS = 60_000  # characters of one edited part (a long section is ~5,000)
REFS_HEADING = "\n## References"


@dataclass
class EditOutcome:
    """What a save did: the new ``version``, the ``changed`` part names, and the reference
    numbers no longer cited anywhere (``uncited``, kept in the list and reported)."""

    version: ReportVersion
    changed: list[str]
    uncited: list[int] = field(default_factory=list)

    def message(self) -> str:
        """One line for the analyst: what was saved and which references went uncited."""
        line = f"Saved as version {self.version.number} ({', '.join(self.changed)})."
        if self.uncited:
            line += (
                " References no longer cited anywhere (kept in the list): "
                + ", ".join(f"[{n}]" for n in self.uncited)
                + "."
            )
        return line


def part_names(report: Report) -> list[str]:
    """``["Lead", heading 1, heading 2, …]``: the editable parts, index 0 the lead."""
    return [LEAD, *[s.heading for s in report.sections]]


def part_text(report: Report, part: int) -> str:
    """The markdown of part ``part`` (0 = lead, i = section i). Raises InputError when out of range."""
    _check_part(report, part)
    return report.lead if part == 0 else report.sections[part - 1].text


def find_part(report: Report, heading: str) -> int:
    """The part index of ``heading`` (case- and space-insensitive; "Lead" is 0).

    Raises:
        InputError (code ``unknown_section``): no section has that heading (the message lists them).
    """
    want = " ".join(str(heading or "").split()).casefold()
    for i, name in enumerate(part_names(report)):
        if " ".join(name.split()).casefold() == want:
            return i
    raise InputError(
        f"The report has no section '{str(heading)[:80]}'; its sections are: "
        + "; ".join(part_names(report)),
        code="unknown_section",
    )


def _check_part(report: Report, part: int) -> None:
    if not isinstance(part, int) or not 0 <= part <= len(report.sections):
        raise InputError(
            f"Part {part!r} is not in the report (0 = lead, 1–{len(report.sections)} = sections).",
            code="unknown_section",
        )


def rebuild_markdown(old: Report, lead: str, sections: list[ReportSection]) -> str:
    """``old.markdown`` with its lead and sections replaced: the header the report writer put
    before the lead (title, engine note, backend warnings) and its References block are kept
    verbatim, so an edit changes only what the analyst changed."""
    md = old.markdown
    start = md.find(old.lead) if old.lead.strip() else -1
    head = md[:start] if start >= 0 else f"# {old.title}\n\n"
    cut = md.rfind(REFS_HEADING)
    tail = md[cut:].strip("\n") if cut >= 0 else ""
    parts = [head.rstrip("\n"), "", lead.strip(), ""]
    levels = [s.level for s in sections]
    for s, level in zip(sections, levels, strict=True):
        parts += [f"{'#' * (level + 1)} {s.heading}", "", s.text.strip(), ""]
    if tail:
        parts.append(tail)
    return "\n".join(parts).strip() + "\n"


def replace_part(report: Report, part: int, text: str) -> Report:
    """A copy of ``report`` with part ``part`` set to ``text`` and its markdown rebuilt."""
    _check_part(report, part)
    levels = report.section_levels()
    lead = text if part == 0 else report.lead
    sections = [
        s.model_copy(update={"level": lv, **({"text": text} if i == part else {})})
        for i, (s, lv) in enumerate(zip(report.sections, levels, strict=True), start=1)
    ]
    return report.model_copy(
        update={
            "lead": lead,
            "sections": sections,
            "markdown": rebuild_markdown(report, lead, sections),
        }
    )


def cited_numbers(text: str) -> list[int]:
    """The ``[n]`` numbers in ``text`` in order of first appearance."""
    return list(dict.fromkeys(int(n) for n in LOCAL_RE.findall(text or "")))


def check_citations(text: str, n_refs: int, *, where: str = "") -> None:
    """Raise InputError (code ``bad_citation``) naming every ``[n]`` of ``text`` outside 1..n_refs."""
    bad = [n for n in cited_numbers(text) if not 1 <= n <= n_refs]
    if bad:
        marks = ", ".join(f"[{n}]" for n in bad)
        scope = f" in {where}" if where else ""
        have = f"1–{n_refs}" if n_refs else "none"
        raise InputError(
            f"Citation {marks}{scope} does not resolve: the run's references are {have}. "
            "Cite an existing reference or remove the marker; nothing was saved.",
            code="bad_citation",
        )


def uncited_references(report: Report, n_refs: int, extra_texts: list[str]) -> list[int]:
    """Reference numbers 1..n_refs cited neither in ``report`` nor in ``extra_texts``."""
    texts = [report.lead, *[s.text for s in report.sections], *extra_texts]
    cited = {n for t in texts for n in cited_numbers(t)}
    return [n for n in range(1, n_refs + 1) if n not in cited]


def _changed_parts(old: Report, new: Report) -> list[str]:
    names = part_names(new)
    before = [old.lead, *[s.text for s in old.sections]]
    after = [new.lead, *[s.text for s in new.sections]]
    if len(before) != len(after):
        return names
    return [n for n, a, b in zip(names, before, after, strict=True) if a.strip() != b.strip()]


def save_edit(
    store: RunStore,
    run_id: str,
    part: int,
    text: str,
    *,
    author: str | None,
    note: str = "edit",
) -> EditOutcome:
    """Replace part ``part`` of the current version with ``text`` and store a new version.

    Args:
        part: 0 = the lead, i = section i (``part_names``).
        text: the new markdown of that part (citations ``[n]`` into the run's references).
        author: who edited (signed-in identity, else "analyst").

    Raises:
        InputError: code ``report_not_ready`` (no report), ``unknown_section``, ``bad_citation``
            (a ``[n]`` that does not resolve), ``empty_edit`` / ``too_long`` / ``unchanged``.
            Nothing is stored when it raises.
    """
    versions = VersionStore(store)
    current = versions.get(run_id)
    if current is None:
        raise InputError(f"Run {run_id} has no report to edit yet.", code="report_not_ready")
    report = current.report
    _check_part(report, part)
    text = (text or "").replace("\r\n", "\n").strip()
    name = part_names(report)[part]
    if not text:
        raise InputError(
            f"The new text of '{name}' is empty; write something or keep the old text.",
            code="empty_edit",
        )
    if len(text) > MAX_PART_CHARS:
        raise InputError(
            f"'{name}' is {len(text):,} characters; at most {MAX_PART_CHARS:,} per part.",
            code="too_long",
        )
    followups = FollowupStore(store)
    n_refs = len(followups.references(run_id, report))
    check_citations(text, n_refs, where=f"'{name}'")
    new = replace_part(report, part, text)
    changed = _changed_parts(report, new)
    if not changed:
        raise InputError(f"'{name}' is unchanged; nothing was saved.", code="unchanged")
    answers = [f.answer for f in followups.list(run_id)]
    version = versions.add(run_id, new, author=author, sections=changed, note=note)
    return EditOutcome(version, changed, uncited_references(new, n_refs, answers))


def restore(store: RunStore, run_id: str, number: int, *, author: str | None) -> ReportVersion:
    """Store version ``number``'s report as a new (current) version; older versions stay.

    Raises:
        InputError: no such version (``no_such_version``); no report (``report_not_ready``);
            it is already the current text (``unchanged``).
    """
    versions = VersionStore(store)
    old = versions.get(run_id, number)
    current = versions.get(run_id)
    if old is None or current is None:
        raise InputError(f"Run {run_id} has no report yet.", code="report_not_ready")
    changed = _changed_parts(current.report, old.report)
    if not changed:
        raise InputError(
            f"Version {number} has the same text as the current version {current.number}; "
            "nothing was restored.",
            code="unchanged",
        )
    return versions.add(
        run_id,
        old.report,
        author=author,
        sections=changed,
        note=f"restore of version {number}",
        restored_from=number,
    )
