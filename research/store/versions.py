"""Report versions in Redis: the one place that reads and writes ``run:{id}:versions``.

Version 1 is the generated report (the run document ``report``), which is never overwritten.
Until the report is first edited nothing is stored here and version 1 is read from that
document; the first new version stores a frozen copy of it as version 1, then itself as 2.
Every later edit, restore or regeneration appends the next number; the last one is current.
"""

from __future__ import annotations

import builtins
from typing import Any

import redis
from pydantic import BaseModel, Field

from research.errors import InputError, StoreError
from research.models import Report, now
from research.store import keys
from research.store.runs import RunStore

GENERATED_AUTHOR = "generated"
DEFAULT_AUTHOR = "analyst"
MAX_AUTHOR_CHARS = 80
_WATCH_TRIES = 20


class ReportVersion(BaseModel):
    """One version of a run's report.

    ``sections``: the headings whose text changed against the version it was made from
    (``"Lead"`` for the lead; [] for version 1). ``note``: ``"generated"``, ``"edit"``,
    ``"restore of version N"`` or ``"regenerate: <instruction>"``. ``created_at`` in Unix s.
    """

    number: int = Field(ge=1)
    author: str
    created_at: float = Field(default_factory=now)
    sections: list[str] = Field(default_factory=list)
    note: str = ""
    restored_from: int | None = None
    report: Report

    def info(self) -> dict[str, Any]:
        """``{number, author, created_at, sections, note}`` (``research show --json`` ``versions``)."""
        return {
            "number": self.number,
            "author": self.author,
            "created_at": self.created_at,
            "sections": list(self.sections),
            "note": self.note,
        }


def clean_author(author: str | None) -> str:
    """The author as stored: stripped, one line, at most 80 characters; empty → ``"analyst"``."""
    text = " ".join(str(author or "").split())[:MAX_AUTHOR_CHARS]
    return text or DEFAULT_AUTHOR


class VersionStore:
    """Typed access to a run's report versions.

    Args:
        store: the ``RunStore`` (its Redis client is used; events go to the run's stream).
    """

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.r = store.r

    def _generated(self, run_id: str) -> ReportVersion | None:
        report = self.store.get_doc(run_id, "report", Report)
        if report is None:
            return None
        state = self.store.get_run(run_id)
        return ReportVersion(
            number=1,
            author=GENERATED_AUTHOR,
            created_at=state.finished_at or state.updated_at,
            note="generated",
            report=report,
        )

    def list(self, run_id: str) -> list[ReportVersion]:
        """Every version, oldest first ([] while the run has no report)."""
        raw = self.r.lrange(keys.run_versions(run_id), 0, -1)
        if raw:
            return [ReportVersion.model_validate_json(x) for x in raw]
        v1 = self._generated(run_id)
        return [v1] if v1 else []

    def count(self, run_id: str) -> int:
        """How many versions the run's report has (0 without a report, 1 before any edit)."""
        n = self.r.llen(keys.run_versions(run_id))
        return n or (1 if self.store.has_doc(run_id, "report") else 0)

    def get(self, run_id: str, number: int | None = None) -> ReportVersion | None:
        """Version ``number`` (None: the current one, the last); None when the run has no report.

        Raises:
            InputError (code ``no_such_version``): the report has no version ``number``.
        """
        if number is not None and (not isinstance(number, int) or number < 1):
            raise InputError(
                f"Version {number!r} is not a version number; use 1, 2, 3…", code="no_such_version"
            )
        stored = self.r.llen(keys.run_versions(run_id))
        if stored:
            idx = -1 if number is None else number - 1
            if number is not None and number > stored:
                raise _missing(run_id, number, stored)
            return ReportVersion.model_validate_json(self.r.lindex(keys.run_versions(run_id), idx))
        v1 = self._generated(run_id)
        if v1 is None:
            return None
        if number not in (None, 1):
            raise _missing(run_id, number, 1)
        return v1

    def report(self, run_id: str, number: int | None = None) -> Report | None:
        """The report of version ``number`` (None: current); None when the run has no report."""
        v = self.get(run_id, number)
        return v.report if v else None

    def add(
        self,
        run_id: str,
        report: Report,
        *,
        author: str | None,
        sections: builtins.list[str],
        note: str,
        restored_from: int | None = None,
    ) -> ReportVersion:
        """Store ``report`` as the next version (the first call also freezes version 1) and emit
        ``report.versioned``. Optimistic (WATCH/MULTI): two saves at once get distinct numbers.

        Raises:
            InputError (code ``report_not_ready``): the run has no generated report.
            StoreError: the list kept changing under ``_WATCH_TRIES`` attempts.
        """
        key = keys.run_versions(run_id)
        v1 = self._generated(run_id)
        if v1 is None:
            raise InputError(
                f"Run {run_id} has no report yet; a version can only follow the generated one.",
                code="report_not_ready",
            )
        version = ReportVersion(
            number=2,
            author=clean_author(author),
            sections=list(sections),
            note=note,
            restored_from=restored_from,
            report=report,
        )
        for _ in range(_WATCH_TRIES):
            with self.r.pipeline() as pipe:
                try:
                    pipe.watch(key)
                    n = pipe.llen(key)
                    version.number = (n or 1) + 1
                    pipe.multi()
                    if not n:
                        pipe.rpush(key, v1.model_dump_json())
                    pipe.rpush(key, version.model_dump_json())
                    pipe.execute()
                    break
                except redis.WatchError:
                    continue
        else:
            raise StoreError(
                f"The report of run {run_id} kept changing while saving; save again.",
                code="version_conflict",
            )
        data = {
            "number": version.number,
            "author": version.author,
            "note": note[:200],
            "sections": version.sections,
        }
        if restored_from is not None:
            data["restored_from"] = restored_from
        self.store.emit(run_id, "report.versioned", data)
        return version

    def clear(self, run_id: str) -> None:
        """Forget versions 2.. (the run document ``report``, version 1, is untouched): for run
        deletion and for tests that share one finished run."""
        self.r.delete(keys.run_versions(run_id))


def _missing(run_id: str, number: int, have: int) -> InputError:
    return InputError(
        f"Run {run_id} has no report version {number}; it has versions 1–{have}.",
        code="no_such_version",
    )
