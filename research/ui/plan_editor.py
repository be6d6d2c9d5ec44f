"""The Plan page's editor for a run in ``awaiting_review``.

Three ``st.data_editor`` tables in one form — syllabus questions (key, label, description,
min_sources), perspectives (name, focus) and plan steps (title, description); rows can be added
and removed. **Approve and start research** turns the tables into a plan edit
(``edit_from_rows``), validates it with the one validator (``research.planning.edit`` via
``research.jobs.review.validate``: every problem listed, nothing stored) and calls
``research.jobs.review.approve`` (the run continues in the background). **Cancel run** ends it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from research.errors import ResearchError
from research.jobs import review
from research.planning.edit import MAX_SOURCES, MIN_SOURCES, PlanBundle
from research.store.runs import RunStore

QUESTION_COLUMNS = ("key", "label", "description", "min_sources")
PERSPECTIVE_COLUMNS = ("name", "focus")
STEP_COLUMNS = ("title", "description")


def question_frame(bundle: PlanBundle) -> pd.DataFrame:
    """Editable syllabus rows (``QUESTION_COLUMNS``)."""
    return pd.DataFrame(
        [q.model_dump() for q in bundle.syllabus.questions], columns=list(QUESTION_COLUMNS)
    )


def perspective_frame(bundle: PlanBundle) -> pd.DataFrame:
    """Editable perspective rows (``PERSPECTIVE_COLUMNS``)."""
    return pd.DataFrame(
        [{"name": p.name, "focus": p.focus} for p in bundle.perspectives],
        columns=list(PERSPECTIVE_COLUMNS),
    )


def step_frame(bundle: PlanBundle) -> pd.DataFrame:
    """Editable plan step rows (``STEP_COLUMNS``; step ids are renumbered on approval)."""
    return pd.DataFrame(
        [{"title": s.title, "description": s.description} for s in bundle.plan.steps],
        columns=list(STEP_COLUMNS),
    )


def _records(frame: Any) -> list[dict]:
    if isinstance(frame, pd.DataFrame):
        return frame.astype(object).where(frame.notna(), None).to_dict("records")
    return list(frame or [])


def edit_from_rows(questions: Any, perspectives: Any, steps: Any) -> dict:
    """The three edited tables (DataFrames or lists of dicts) as a plan edit
    ``{syllabus: {questions}, perspectives, plan: {steps}}`` for ``research.planning.edit``."""
    return {
        "syllabus": {"questions": _records(questions)},
        "perspectives": _records(perspectives),
        "plan": {"steps": _records(steps)},
    }


def _question_config() -> dict:
    return {
        "key": st.column_config.TextColumn(
            "Key", help="area.name, e.g. monitoring.cardiac_function (unique)", width="medium"
        ),
        "label": st.column_config.TextColumn("Question", width="medium", help="a short heading"),
        "description": st.column_config.TextColumn("What the sources must answer", width="large"),
        "min_sources": st.column_config.NumberColumn(
            "Min sources",
            min_value=MIN_SOURCES,
            max_value=MAX_SOURCES,
            step=1,
            default=3,
            width="small",
            help=f"distinct sources needed, {MIN_SOURCES}–{MAX_SOURCES}",
        ),
    }


def render_editor(store: RunStore, run_id: str) -> None:
    """Draw the editor for a run awaiting review; Approve / Cancel act on it (module doc)."""
    bundle = review.plan_bundle(run_id, store)
    st.info(
        "Research has not started: review the plan below, edit any table (add rows at the bottom, "
        "select rows to delete them), then approve.",
        icon=":material/rate_review:",
    )
    with st.form(f"plan_review_{run_id}", border=False):
        st.subheader(
            f"Question syllabus · {len(bundle.syllabus.questions)} questions", anchor=False
        )
        st.caption(
            "Each question gets its own coverage bar and report section; sources are assigned to "
            "questions as they are found."
        )
        questions = st.data_editor(
            question_frame(bundle),
            num_rows="dynamic",
            hide_index=True,
            width="stretch",
            column_config=_question_config(),
            key=f"edit_questions_{run_id}",
        )
        left, right = st.columns([1, 1])
        with left:
            st.subheader(f"Perspectives · {len(bundle.perspectives)}", anchor=False)
            perspectives = st.data_editor(
                perspective_frame(bundle),
                num_rows="dynamic",
                hide_index=True,
                width="stretch",
                key=f"edit_perspectives_{run_id}",
                column_config={
                    "name": st.column_config.TextColumn("Persona", width="medium"),
                    "focus": st.column_config.TextColumn("Focus", width="large"),
                },
            )
        with right:
            st.subheader(f"Plan steps · {len(bundle.plan.steps)}", anchor=False)
            steps = st.data_editor(
                step_frame(bundle),
                num_rows="dynamic",
                hide_index=True,
                width="stretch",
                key=f"edit_steps_{run_id}",
                column_config={
                    "title": st.column_config.TextColumn("Step", width="medium"),
                    "description": st.column_config.TextColumn("What to search for", width="large"),
                },
            )
        approved = st.form_submit_button(
            "Approve and start research", type="primary", icon=":material/play_arrow:"
        )
    if approved:
        edit = edit_from_rows(questions, perspectives, steps)
        try:
            review.approve(run_id, edit, by="dashboard", run="background", store=store)
        except ResearchError as exc:
            st.error(exc.message, icon=":material/error:")
            return
        st.toast(
            "Plan approved: research started with the edited plan.", icon=":material/check_circle:"
        )
        st.rerun()
    with st.popover("Cancel run", icon=":material/stop_circle:"):
        st.caption("End this run without researching; the plan stays readable.")
        if st.button("Yes, cancel the run", key=f"cancel_review_{run_id}", type="primary"):
            review.cancel(run_id, by="dashboard", store=store)
            st.rerun()
