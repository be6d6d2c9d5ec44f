"""Deleting a run: its Redis keys and its folders on disk (artifacts, reports, follow-up index)."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

from research.store import keys
from research.store.connection import TextRedis

if TYPE_CHECKING:
    from research.config import Settings


class RunDeletion:
    """Delete a run everywhere it is kept (part of ``RunStore``)."""

    r: TextRedis

    def delete_run(self, run_id: str) -> None:
        """Remove every Redis key of the run (artifacts on disk are the caller's)."""
        self.r.delete(
            *keys.run_keys(run_id), *[keys.question(run_id, k) for k in self._question_keys(run_id)]
        )
        self.r.zrem(keys.RUNS_INDEX, run_id)

    def delete_run_everywhere(self, run_id: str, settings: Settings) -> list[str]:
        """Delete a run: its Redis keys (``delete_run``), its artifacts dir, its report dir and its
        follow-up evidence index (``followups/{run_id}``) under ``settings.data_dir``.
        Returns the paths removed.

        Raises:
            InputError: ill-formed run id. StoreError: Redis unreachable.
        """
        keys.check_run_id(run_id)
        self.delete_run(run_id)
        removed = []
        for d in (
            settings.artifacts_root / run_id,
            settings.reports_dir / run_id,
            settings.data_dir / "followups" / run_id,
        ):
            if d.is_dir():
                shutil.rmtree(d, ignore_errors=True)
                removed.append(str(d))
        return removed

    def _question_keys(self, run_id: str) -> list[str]:
        raw = self.r.get(keys.run_doc(run_id, "syllabus"))
        if not raw:
            return []
        return [q["key"] for q in json.loads(raw).get("questions", [])]
