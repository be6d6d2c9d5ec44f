"""One exception tree for Research Desk; every error carries a stable ``code``.

Messages say what to fix. Codes are stable strings that the CLI prints and the UI shows.
"""

from __future__ import annotations


class ResearchError(Exception):
    """Base of all Research Desk errors.

    Attributes:
        code: stable machine-readable identifier, e.g. ``"invalid_input"``.
        message: human sentence that says what went wrong and what to fix.
    """

    code = "research_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message


class InputError(ResearchError):
    """Bad user input (topic, options, paths). Nothing was written."""

    code = "invalid_input"


class CorpusError(ResearchError):
    """A corpus path is missing, empty or unreadable."""

    code = "corpus_error"


class UnknownQuestionError(InputError):
    """A syllabus question key that the run does not have (docs/design.md § Question syllabus: invalid questions)."""

    code = "unknown_question"


class RunNotFoundError(ResearchError):
    """No run with this id exists in the store."""

    code = "run_not_found"


class StoreError(ResearchError):
    """Redis could not be reached or started."""

    code = "store_unavailable"


class ArtifactError(ResearchError):
    """An artifact path was unsafe or the file could not be read/written."""

    code = "artifact_error"


class EngineError(ResearchError):
    """An engine step failed (bad model output after re-ask, provider error...)."""

    code = "engine_error"


class InvariantError(ResearchError):
    """A production invariant does not hold (a bug, not bad input): raised instead of ``assert``,
    which ``python -O`` strips."""

    code = "invariant_violated"


class RunCancelled(ResearchError):
    """Raised inside a job when the analyst cancelled the run."""

    code = "cancelled"


class AccessError(ResearchError):
    """The caller may not do this here: a served run naming a corpus that is not registered on
    the server (``corpus_not_registered``), a token whose scope does not allow the request
    (``insufficient_scope``). The HTTP API answers 403."""

    code = "forbidden"
