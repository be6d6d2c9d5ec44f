"""The CLI's index progress bar: ``index.progress`` events → a tqdm bar on stderr.

stdout stays clean (``research run --json`` prints only the JSON there); the bar goes to stderr
and is drawn only while a run waits for its local corpus index to be built.
"""

from __future__ import annotations

import sys

from tqdm import tqdm

from research.errors import InvariantError

LABELS = {
    "loading_model": "Loading the embedding model",
    "embedding": "Indexing corpus",
    "writing": "Writing the index",
    "ready": "Index ready",
    "failed": "Indexing failed",
}


class IndexBar:
    """Feed it ``index.progress`` event payloads (``{state, done, total}``); it draws
    "Indexing corpus: 1,200/2,972 docs" on ``stream`` (default stderr) and closes at ``ready``
    or ``failed``."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self._bar: tqdm | None = None
        self.closed = False

    def update(self, data: dict) -> None:
        """Show one event's state; a no-op after the bar was closed."""

        if self.closed:
            return
        state = str(data.get("state", ""))
        total = int(data.get("total") or 0) or None
        done = int(data.get("done") or 0)
        if self._bar is None:
            self._bar = tqdm(
                total=total,
                file=self.stream,
                unit=" docs",
                dynamic_ncols=True,
                desc=LABELS.get(state, state),
                mininterval=0.2,
            )
        bar = self._bar
        if bar is None:
            raise InvariantError("Created just above")
        bar.set_description_str(LABELS.get(state, state), refresh=False)
        if total and bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()
        if state in ("ready", "failed"):
            self.close()

    def close(self) -> None:
        """Close the bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
        self.closed = True
