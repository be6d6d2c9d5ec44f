"""The collector's reads of one run (docs/design.md § Collector tools), mixed into
``research.store.collector.SourceCollector``, which sets ``r``, ``run_id`` and the syllabus cache:

- the run's syllabus from the metadata key, cached per object and re-validated on every call
  that uses it, and ``_snapshot``: metadata, the sources list and each question list in one
  pipelined round trip;
- the read tools ``get_progress``, ``coverage_gaps``, ``check_completion`` and
  ``finalize_sources`` (responses built by ``research.store.coverage``);
- ``question_counts``, ``all_sources``, ``get_source`` (``src_012`` is list index 11) and
  ``get_citation``.
"""

from __future__ import annotations

import json
from typing import Any

from research.errors import InputError
from research.models import SourceRecord, Syllabus
from research.store import keys
from research.store.connection import TextRedis
from research.store.coverage import completion_report, deficits, progress_report
from research.store.source_input import SOURCE_ID_RE


class CollectorReads:
    """The reads of ``SourceCollector`` (module doc); it sets the attributes declared here."""

    r: TextRedis
    run_id: str
    _meta_raw: str | None
    _syllabus: Syllabus | None

    # ------------------------------------------------------------------ syllabus / metadata
    def syllabus(self) -> Syllabus:
        """The run's syllabus, read from Redis metadata.

        Raises:
            InputError (code ``collector_not_initialised``): ``init`` was never called for this run.
        """
        return self._use_meta(self.r.get(keys.collector_metadata(self.run_id)))

    def _parse_meta(self, raw: str) -> Syllabus:
        try:
            return Syllabus.model_validate(json.loads(raw)["syllabus"])
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(
                f"Collector metadata of run {self.run_id} is unreadable ({exc}); "
                "re-run the planning step.",
                code="collector_not_initialised",
            ) from None

    def _use_meta(self, raw: str | None) -> Syllabus:
        if not raw:
            raise InputError(
                f"Run {self.run_id} has no source collection yet: call init(syllabus) first "
                "(the planning step does).",
                code="collector_not_initialised",
            )
        if raw != self._meta_raw or self._syllabus is None:
            self._syllabus, self._meta_raw = self._parse_meta(raw), raw
        return self._syllabus

    def _snapshot(self, *, lists: bool) -> tuple[Syllabus, Any, list[Any]]:
        """One pipelined round trip: GET metadata, then the sources list (LLEN, or LRANGE when
        ``lists``) and each question list of the cached syllabus. Retried if the syllabus changed."""
        for _ in range(3):
            syl = self._syllabus or self.syllabus()
            pipe = self.r.pipeline(transaction=False)
            pipe.get(keys.collector_metadata(self.run_id))
            for key in [
                keys.sources(self.run_id),
                *(keys.question(self.run_id, k) for k in syl.keys()),
            ]:
                pipe.lrange(key, 0, -1) if lists else pipe.llen(key)
            raw, sources, *per_question = pipe.execute()
            if self._use_meta(raw) is syl:
                return syl, sources, per_question
        raise InputError(
            f"The syllabus of run {self.run_id} keeps changing; retry.",
            code="collector_not_initialised",
        )  # pragma: no cover

    # ------------------------------------------- collector tools (docs/design.md § Collector tools)
    def get_progress(self) -> dict[str, Any]:
        """Seed 000 ``get_progress``: ``{"total", "questions", "summary", "next_focus"}`` (see
        ``progress_report``). One round trip of LLENs: cost grows with questions, not sources."""
        syl, total, counts = self._snapshot(lists=False)
        return progress_report(syl, dict(zip(syl.keys(), counts, strict=True)), int(total))

    def coverage_gaps(self) -> list[str]:
        """Every unmet question key, largest deficit first (ties: syllabus order): ``next_focus``
        without the cap of 3 (docs/design.md § Collector tools), for steering parallel conversations (one per gap)."""
        syl, _, counts = self._snapshot(lists=False)
        return list(deficits(syl, dict(zip(syl.keys(), counts, strict=True))))

    def check_completion(self, min_databases: int = 1) -> dict[str, Any]:
        """Seed 000 ``check_completion``: ``{"ready", "progress", "missing", "suggestion"}`` (see
        ``completion_report``); ready when every question has ``min_sources`` sources.

        ``min_databases`` > 1 adds the "Sources span multiple databases" criterion (docs/design.md § Completion): the
        saved sources must come from at least that many source types (pubmed, web...); the
        response then has ``"databases"`` and is not ready below it. Default 1: unchanged."""
        if min_databases <= 1:
            syl, _, counts = self._snapshot(lists=False)
            return completion_report(syl, dict(zip(syl.keys(), counts, strict=True)))
        syl, raw_sources, counts = self._snapshot(lists=True)
        types = sorted({SourceRecord.model_validate_json(x).source_type for x in raw_sources})
        return completion_report(
            syl,
            dict(zip(syl.keys(), (len(c) for c in counts), strict=True)),
            source_types=types,
            min_databases=min_databases,
        )

    def finalize_sources(self) -> dict[str, Any]:
        """Seed 000 ``finalize_sources`` (internal workflow tool; no size limit): sources
        organised by question for synthesis, in one round trip.

        Returns:
            ``{"questions": {key: {"label", "min_sources", "sources": [source dicts in
            assignment order]}}, "sources": [all source dicts, src_001 first], "total": n}``;
            source dicts are ``SourceRecord.model_dump(mode="json")``.
        """
        syl, raw_sources, per_question = self._snapshot(lists=True)
        sources = [SourceRecord.model_validate_json(x).model_dump(mode="json") for x in raw_sources]
        by_id = {s["source_id"]: s for s in sources}
        return {
            "questions": {
                q.key: {
                    "label": q.label,
                    "min_sources": q.min_sources,
                    "sources": [by_id[i] for i in ids if i in by_id],
                }
                for q, ids in zip(syl.questions, per_question, strict=True)
            },
            "sources": sources,
            "total": len(sources),
        }

    # ------------------------------------------------------------------ helpers
    def question_counts(self) -> dict[str, int]:
        """``key → number of sources`` in syllabus order (one round trip)."""
        syl, _, counts = self._snapshot(lists=False)
        return {k: int(n) for k, n in zip(syl.keys(), counts, strict=True)}

    def all_sources(self) -> list[SourceRecord]:
        """Every saved source in saving order (``src_001`` first); [] before the first save."""
        return [
            SourceRecord.model_validate_json(x)
            for x in self.r.lrange(keys.sources(self.run_id), 0, -1)
        ]

    def get_source(self, source_id: str) -> SourceRecord:
        """One source by id (O(1): ``src_012`` is list index 11).

        Raises:
            InputError (code ``unknown_source``): malformed id or no such source in this run.
        """
        m = SOURCE_ID_RE.fullmatch(source_id) if isinstance(source_id, str) else None
        raw = (
            self.r.lindex(keys.sources(self.run_id), int(m.group(1)) - 1)
            if m and int(m.group(1)) > 0
            else None
        )
        record = SourceRecord.model_validate_json(raw) if raw else None
        if record is None or record.source_id != source_id:
            raise InputError(
                f"No source {str(source_id)[:40]!r} in run {self.run_id} (ids look like src_012).",
                code="unknown_source",
            )
        return record

    def get_citation(self, citation_id: str) -> dict[str, Any] | None:
        """The stored citation dict (``citation_id, claim, source_type, source_id, direct_quote,
        context, metadata, created_at``), or None when it is not registered."""
        raw = self.r.hget(keys.citations(self.run_id), citation_id)
        return json.loads(raw) if raw else None
