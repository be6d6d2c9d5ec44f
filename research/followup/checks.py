"""Can this run be asked, and is this a question (bad input gets a clear
message and nothing is stored). Used by ``ask`` (the CLI and page entry), ``jobs`` (enqueueing)
and ``execute`` (the job), so none of them imports another for it."""

from __future__ import annotations

from research.errors import InputError
from research.models import RunState
from research.store.followup_models import MAX_QUESTION_CHARS
from research.store.keys import check_run_id
from research.store.runs import RunStore

NOT_ASKABLE = {
    "failed": "Run {id} failed ({error}); it has no trustworthy evidence to answer from. Resume it "
    "(`research resume {id}`) or start a new run.",
    "cancelled": "Run {id} was cancelled; follow-up questions are answered only for runs that wrote their "
    "report. Start a new run on this topic to ask it questions.",
}


NO_REPORT = (
    "Run {id} has no report yet ({status}). Follow-up answers cite into the report's reference list, "
    "whose numbers exist only once the report is written; ask again when the run is complete."
)


def validate_question(question: object) -> str:
    """The question with whitespace collapsed.

    Raises:
        InputError (code ``invalid_question``): not text, empty, or longer than
            ``MAX_QUESTION_CHARS`` (1,000) characters.
    """
    if not isinstance(question, str) or not question.strip():
        raise InputError(
            "The question is empty: type what you want to know about this run's topic.",
            code="invalid_question",
        )
    text = " ".join(question.split())
    if len(text) > MAX_QUESTION_CHARS:
        raise InputError(
            f"The question is {len(text):,} characters long; keep it under {MAX_QUESTION_CHARS:,} "
            "(ask one question at a time).",
            code="invalid_question",
        )
    return text


def check_askable(store: RunStore, run_id: str) -> RunState:
    """The run, if follow-ups can be asked of it: it has its report (so a follow-up's new
    references are numbered after the report's and no number ever means two sources) and
    saved sources, and it did not fail or get cancelled.

    Raises:
        InputError: malformed id; a failed or cancelled run (code ``not_askable``); a run whose
            report is not written yet (code ``report_not_ready``); a run with no saved source
            (code ``no_evidence``). RunNotFoundError: no such run.
    """
    state = store.get_run(check_run_id(run_id.strip() if isinstance(run_id, str) else run_id))
    if state.status in NOT_ASKABLE:
        raise InputError(
            NOT_ASKABLE[state.status].format(
                id=state.run_id, error=state.error or "no error stored"
            ),
            code="not_askable",
        )
    if not store.has_doc(state.run_id, "report"):
        raise InputError(
            NO_REPORT.format(id=state.run_id, status=state.status), code="report_not_ready"
        )
    if not store.collector(state.run_id).all_sources():
        raise InputError(
            f"Run {state.run_id} has no saved source yet ({state.status}); ask again once its "
            "conversations have found sources.",
            code="no_evidence",
        )
    return state


def search_queries(store: RunStore, run_id: str) -> dict[str, str]:
    """source id → a search query that found it (so litellm's ``read_artifact`` sees its card)."""
    out: dict[str, str] = {}
    for turn in store.get_turns(run_id):
        for s in turn.sources:
            if turn.search_queries:
                out.setdefault(s.source_id, turn.search_queries[0])
    return out
