"""The analyst's desk on the Report page: Edit (one part at a time, citations checked, saved as a
new version), Versions (list, side-by-side diff, Restore) and Comments (per section or sentence,
resolve/reopen). The read-only share view only ever calls :func:`comments_readonly`.

Which version the page shows comes from ``?version=N`` (default: the current one).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import streamlit as st

from research.desk.diff import side_by_side_html
from research.desk.edit import part_names, part_text, restore, save_edit
from research.errors import ResearchError
from research.models import Report, RunState
from research.store.comments import Comment, CommentStore
from research.store.runs import RunStore
from research.store.versions import ReportVersion, VersionStore
from research.ui.citations import plain

MODES = ("Read", "Edit", "Versions", "Comments")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9“\"(])")


def when(ts: float | None) -> str:
    """``2026-11-20 14:03 UTC`` for a Unix time in s."""
    return datetime.fromtimestamp(ts or 0, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def current_author() -> str:
    """The signed-in identity (name, else e-mail) when the dashboard has auth on, else "analyst"."""
    try:
        if st.user.is_logged_in:
            return str(st.user.get("name") or st.user.get("email") or "analyst")
    except Exception:  # noqa: BLE001 - no auth configured: st.user raises or is empty
        pass
    return "analyst"


def requested_version() -> int | None:
    """``?version=N`` as an int, or None (absent or not a positive integer: the current one)."""
    raw = str(st.query_params.get("version") or "").strip()
    return int(raw) if raw.isdigit() and int(raw) >= 1 else None


def shown_version(store: RunStore, run_id: str) -> tuple[ReportVersion | None, str | None]:
    """``(version shown, error)``: ``?version=N`` or the current version; an unknown N gives the
    current version and a message."""
    versions = VersionStore(store)
    want = requested_version()
    try:
        return versions.get(run_id, want), None
    except ResearchError as exc:
        return versions.get(run_id), exc.message


def version_caption(v: ReportVersion, total: int) -> str:
    """``Version 2 of 3 · edit by analyst · 2026-11-20 14:03 UTC · changed: Lead`` (plain text)."""
    bits = [f"Version {v.number} of {total}", f"{v.note} by {v.author}", when(v.created_at)]
    if v.sections:
        bits.append("changed: " + ", ".join(v.sections))
    if v.number < total:
        bits.append("not the current version")
    return " · ".join(bits)


def mode_picker(run_id: str) -> str:
    """The desk's mode (Read / Edit / Versions / Comments), kept per run in the session."""
    mode = st.segmented_control(
        "Desk", MODES, default="Read", key=f"desk_mode_{run_id}", label_visibility="collapsed"
    )
    return mode or "Read"


def render_mode(store: RunStore, state: RunState, mode: str, report: Report, version: int) -> None:
    """The Edit, Versions or Comments mode, full width (Read is the page's own layout)."""
    if mode == "Edit":
        render_editor(store, state)
    elif mode == "Versions":
        render_versions(store, state)
    elif mode == "Comments":
        render_comments(store, state, report, version)


# ---------------------------------------------------------------------------------- edit
def render_editor(store: RunStore, state: RunState) -> None:
    """Edit one part (the lead or a section) of the current version; Save checks citations."""
    versions = VersionStore(store)
    current = versions.get(state.run_id)
    if current is None:
        st.info("The report can be edited once it is written.")
        return
    report = current.report
    names = part_names(report)
    st.caption(
        f"Editing version {current.number} (the current one). Saving makes version "
        f"{current.number + 1}; every [n] must cite one of the run's references."
    )
    part = st.selectbox(
        "Part to edit",
        range(len(names)),
        format_func=lambda i: names[i],
        key=f"edit_part_{state.run_id}",
    )
    with st.form(f"edit_form_{state.run_id}_{current.number}_{part}", border=True):
        text = st.text_area(
            f"Markdown of “{names[part]}”",
            value=part_text(report, part),
            height=320,
            key=f"edit_text_{state.run_id}_{current.number}_{part}",
        )
        author = st.text_input("Author", value=current_author(), max_chars=80)
        saved = st.form_submit_button(
            "Save as a new version", icon=":material/save:", type="primary"
        )
    if saved:
        try:
            outcome = save_edit(store, state.run_id, part, text, author=author)
        except ResearchError as exc:
            st.error(plain(exc.message), icon=":material/error:")
            return
        st.success(plain(outcome.message()), icon=":material/check_circle:")
        if outcome.uncited:
            st.warning(
                "Not cited anywhere any more (still listed): "
                + ", ".join(f"[{n}]" for n in outcome.uncited),
                icon=":material/link_off:",
            )
        prev = versions.get(state.run_id, outcome.version.number - 1)
        render_diff(prev, outcome.version)


# ---------------------------------------------------------------------------------- versions
def render_diff(a: ReportVersion, b: ReportVersion) -> None:
    """The side-by-side diff (difflib) of two versions."""
    st.markdown(f"**Version {a.number} → version {b.number}**")
    st.html(side_by_side_html(a.report, b.report, f"Version {a.number}", f"Version {b.number}"))


def render_versions(store: RunStore, state: RunState) -> None:
    """The version list, a diff between any two versions and Restore (a new version)."""
    versions = VersionStore(store).list(state.run_id)
    if not versions:
        st.info("The report has no version yet.")
        return
    st.dataframe(
        [
            {
                "Version": v.number,
                "Author": v.author,
                "Time": when(v.created_at),
                "What": v.note,
                "Changed": ", ".join(v.sections),
            }
            for v in reversed(versions)
        ],
        hide_index=True,
        width="stretch",
    )
    if len(versions) < 2:
        st.caption("Only the generated version so far: edit a part to make version 2.")
        return
    numbers = [v.number for v in versions]
    a_col, b_col = st.columns(2)
    a = a_col.selectbox("Compare version", numbers, index=len(numbers) - 2, key="diff_a")
    b = b_col.selectbox("with version", numbers, index=len(numbers) - 1, key="diff_b")
    render_diff(versions[a - 1], versions[b - 1])
    st.divider()
    old = [n for n in numbers if n != numbers[-1]]
    r_col, btn_col = st.columns([2, 1], vertical_alignment="bottom")
    pick = r_col.selectbox("Restore version", old, index=0, key="restore_pick")
    if btn_col.button("Restore as a new version", icon=":material/restore:", key="restore_btn"):
        try:
            v = restore(store, state.run_id, pick, author=current_author())
        except ResearchError as exc:
            st.error(plain(exc.message), icon=":material/error:")
            return
        st.success(
            f"Version {pick} restored as version {v.number}.", icon=":material/check_circle:"
        )
        st.rerun()


# ---------------------------------------------------------------------------------- comments
def sentences(text: str) -> list[str]:
    """The sentences of a part (split after . ! ? before a capital, digit or quote)."""
    return [s.strip() for s in _SENTENCE_RE.split(" ".join((text or "").split())) if s.strip()]


def _comment_md(c: Comment) -> str:
    status = f"✅ resolved by {plain(c.status_by)}" if c.status == "resolved" else "💬 open"
    quote = f"  \n> {plain(c.quote)}" if c.quote else ""
    return (
        f"**{plain(c.section)}** · {plain(c.author)} · {when(c.created_at)} · "
        f"version {c.version} · {status}{quote}  \n{plain(c.text)}"
    )


def render_comments(store: RunStore, state: RunState, report: Report, version: int) -> None:
    """Add a comment on a section (optionally one sentence of it); list, resolve and reopen."""
    comments = CommentStore(store)
    names = part_names(report)
    part = st.selectbox(
        "Section to comment on",
        range(len(names)),
        format_func=lambda i: names[i],
        key=f"comment_part_{state.run_id}",
    )
    with st.form(f"comment_form_{state.run_id}_{part}", clear_on_submit=True, border=True):
        choices = ["(the whole section)", *sentences(part_text(report, part))]
        quote = st.selectbox(
            "Sentence", choices, key=f"comment_quote_{part}", help="or one sentence of it"
        )
        text = st.text_area("Comment", max_chars=4000, key=f"comment_text_{part}")
        author = st.text_input("Author", value=current_author(), max_chars=80)
        add = st.form_submit_button("Add comment", icon=":material/add_comment:", type="primary")
    if add:
        try:
            comments.add(
                state.run_id,
                section=names[part],
                quote="" if quote == choices[0] else quote,
                text=text,
                author=author,
                version=version,
            )
            st.success("Comment added.", icon=":material/check_circle:")
        except ResearchError as exc:
            st.error(plain(exc.message), icon=":material/error:")
    rows = comments.list(state.run_id)
    counts = comments.counts(state.run_id)
    st.markdown(f"**Comments** ({counts['open']} open, {counts['resolved']} resolved)")
    for c in rows:
        with st.container(border=True):
            st.markdown(_comment_md(c))
            resolved = c.status == "resolved"
            if st.button(
                "Reopen" if resolved else "Resolve",
                key=f"comment_{c.id}_{c.status}",
                icon=":material/undo:" if resolved else ":material/done:",
            ):
                comments.set_status(state.run_id, c.id, resolved=not resolved, by=current_author())
                st.rerun()


def comments_readonly(store: RunStore, run_id: str) -> None:
    """The run's comments as plain cards (the read-only share view: no form, no buttons)."""
    rows = CommentStore(store).list(run_id)
    if not rows:
        return
    st.subheader(f"Comments ({len(rows)})", anchor=False)
    for c in rows:
        with st.container(border=True):
            st.markdown(_comment_md(c))
