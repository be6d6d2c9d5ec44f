"""Compare: 2–4 runs side by side — configs (differences highlighted), coverage, sources, cost,
outlines, report diff."""

import streamlit as st

from research.errors import ResearchError
from research.ui import compare, context
from research.ui.citations import plain
from research.ui.history import run_label

store = context.get_store()
st.title("Compare runs", anchor=False)
runs = store.list_runs(limit=200)
labels = {r.run_id: run_label(r) for r in runs}
preset = [x for x in (st.query_params.get("runs") or "").split(",") if x in labels][
    : compare.MAX_RUNS
]
picked = st.multiselect(
    "Runs (2–4)",
    list(labels),
    default=preset,
    format_func=labels.get,
    max_selections=compare.MAX_RUNS,
    placeholder="Choose 2 to 4 runs",
)
if picked != preset:
    st.query_params["runs"] = ",".join(picked)  # the URL stays a share link
if len(picked) < 2:
    st.info("Pick at least two runs to compare.", icon=":material/info:")
    st.stop()
try:
    data = compare.load_runs(store, picked)
except ResearchError as exc:
    st.error(exc.message, icon=":material/error:")
    st.stop()

st.subheader("Cost, tokens and time", anchor=False)
st.dataframe(
    compare.cost_rows(store, data),
    hide_index=True,
    width="stretch",
    column_config={
        "cost_usd": st.column_config.NumberColumn("Cost", format="$%.4f"),
        "llm_calls": st.column_config.NumberColumn("LLM calls"),
        "duration_s": None,
    },
)

st.subheader("Configuration", anchor=False)
table = compare.config_table(data)
only_diff = st.toggle("Only fields that differ", value=False)
shown = table[table["differs"]] if only_diff else table
st.dataframe(
    compare.styled_config(shown),
    hide_index=True,
    width="stretch",
    column_config={"differs": st.column_config.CheckboxColumn("Differs")},
)

st.subheader("Coverage per question", anchor=False)
st.plotly_chart(compare.coverage_overlay(data), width="stretch")

st.subheader("Sources in common and unique", anchor=False)
counts, rows = compare.source_overlap(data)
st.dataframe(counts, hide_index=True, width="stretch")
st.dataframe(
    rows,
    hide_index=True,
    width="stretch",
    height=360,
    column_config={
        "url": st.column_config.LinkColumn("URL"),
        "title": st.column_config.TextColumn(width="large"),
    },
)

st.subheader("Outlines", anchor=False)
for col, run in zip(st.columns(len(data)), data, strict=True):
    with col, st.container(border=True):
        st.markdown(f"**{plain(run.short)}**")
        lines = compare.outline_lines(run)
        st.code("\n".join(lines) if lines else "(no outline)", language=None, wrap_lines=True)

st.subheader("Report diff", anchor=False)
base = data[0]
other = (
    st.selectbox("Diff against the first run", data[1:], format_func=lambda r: r.short)
    if len(data) > 2
    else data[1]
)
st.caption(f"--- {base.short}  +++ {other.short}")
st.code(compare.report_diff(base, other), language="diff", wrap_lines=True)
