"""Launch: start a run (every RunConfig field → the input gate, ``launch_config`` →
jobs.start_run), or a batch of runs (the Batch tab, ``research.ui.batch_tab``), and the run
history."""

import streamlit as st

from research import jobs
from research.config import load_settings
from research.engines.labels import OFFLINE_LABEL
from research.errors import ResearchError
from research.llm.language import LANGUAGES
from research.models import GAP_TURNS_RANGE, CoStormSettings
from research.planning.syllabus import template_choices
from research.ui import context, nav
from research.ui.batch_tab import render_batch_tab
from research.ui.citations import plain
from research.ui.history import (
    delete_run_everywhere,
    filter_rows,
    history_rows,
    is_active,
    run_label,
    run_stats,
)
from research.ui.launch_form import (
    COSTORM_HELP,
    DEPTH_LABELS,
    GAP_HELP,
    MODE_HELP,
    MODE_LABELS,
    MODES,
    NOTIFY_HELP,
    PERSPECTIVES_RANGE,
    ROLES,
    SEARCH_BACKENDS,
    TEMPLATE_LABELS,
    TURNS_RANGE,
    default_models,
    form_values,
    launch_config,
    named_corpora,
)
from research.ui.notifications import settings_target_count

HISTORY_LIMIT = 200
SINCE_HELP = (
    "Only sources published on or after this date, on PubMed, ClinicalTrials.gov and corpus "
    "documents that carry a date; undated documents are kept. Backends without dates (Wikipedia, "
    "web search) are named in the report header."
)
store = context.get_store()
settings = load_settings()

st.title("Launch a research run", anchor=False)
templates = template_choices()
engines = ["extractive"] + (["litellm"] if settings.llm_model else [])

m1, m2 = st.columns(2)
mode = (
    m1.segmented_control(
        "Mode",
        MODES,
        default="storm",
        format_func=MODE_LABELS.get,
        key="launch_mode",
        help=MODE_HELP,
    )
    or "storm"
)
engine = (
    m2.segmented_control(
        "Engine",
        engines,
        default="extractive",
        key="launch_engine",
        format_func=lambda e: (
            OFFLINE_LABEL if e == "extractive" else f"litellm ({settings.llm_model})"
        ),
    )
    or "extractive"
)

single_tab, batch_tab = st.tabs(["Single run", "Batch"], key="launch_tab", bind="query-params")
with batch_tab:
    render_batch_tab(settings, engine, mode)

with single_tab:
    with st.form("launch"):
        topic = st.text_area(
            "Research question",
            placeholder="e.g. Drug A versus drug B as first-line therapy for condition C",
            height=90,
        )
        c1, c2 = st.columns([3, 2])
        corpus = c1.text_input(
            "Corpus (JSONL file or folder of documents)", value=str(settings.default_corpus)
        )
        template = c2.selectbox(
            "Question template",
            templates,
            index=0,
            format_func=TEMPLATE_LABELS.get,
            help="auto fits the syllabus questions to your question (from the related-topic "
            "survey); drug = the six drug questions of the collector design; general = six questions for any topic",
        )
        c3, c4 = st.columns(2)
        storm_only = (
            "STORM mode only (Co-STORM uses N experts and the turn cap below)"
            if mode == "costorm"
            else None
        )
        max_perspectives = c3.number_input(
            "Max perspectives",
            min_value=PERSPECTIVES_RANGE[0],
            max_value=PERSPECTIVES_RANGE[1],
            value=4,
            disabled=mode == "costorm",
            help=storm_only,
        )
        max_turns = c4.number_input(
            "Max turns per conversation",
            min_value=TURNS_RANGE[0],
            max_value=TURNS_RANGE[1],
            value=3,
            disabled=mode == "costorm",
            help=storm_only,
        )
        s1, s2, s3 = st.columns([3, 3, 1])
        search = s1.multiselect(
            "Search backends",
            SEARCH_BACKENDS,
            default=["local"],
            help="local = the corpus above; web backends need their API keys in the environment. "
            "Leave empty to search only the named corpora.",
        )
        corpora_found = named_corpora(settings.data_dir)
        corpora = s2.multiselect(
            "Named corpora",
            corpora_found,
            disabled=not corpora_found,
            placeholder="none ingested" if not corpora_found else "Choose corpora",
        )
        min_databases = s3.number_input(
            "Min databases",
            min_value=1,
            max_value=8,
            value=1,
            help="Seed 000: a question counts as covered only when its sources come "
            "from at least this many databases (backends or corpora).",
        )
        costorm = None
        if mode == "costorm":
            st.markdown("**Co-STORM round-table**")
            d = CoStormSettings()
            k1, k2, k3 = st.columns(3)
            h = COSTORM_HELP
            costorm = {
                "experts": k1.number_input("N · experts", 1, 8, d.experts, help=h["experts"]),
                "max_node_items": k2.number_input(
                    "K · items per mind-map node",
                    2,
                    100,
                    d.max_node_items,
                    help=h["max_node_items"],
                ),
                "moderator_after": k3.number_input(
                    "L · answers before the moderator",
                    1,
                    10,
                    d.moderator_after,
                    help=h["moderator_after"],
                ),
                "alpha": k1.slider(
                    "α · moderator rerank exponent", 0.0, 1.0, d.alpha, 0.05, help=h["alpha"]
                ),
                "query_budget": k2.number_input(
                    "Query budget", 1, 500, d.query_budget, help=h["query_budget"]
                ),
                "max_turns": k3.number_input("Turn cap", 1, 200, d.max_turns, help=h["max_turns"]),
            }
        models, budget_usd, budget_tokens = None, None, None
        if engine == "litellm":
            st.markdown(
                "**Models per role** (litellm model names; API keys come from the environment)"
            )
            defaults = default_models(settings.llm_model)
            cols = st.columns(4)
            models = {
                role: cols[i % 4].text_input(
                    role, value=defaults.get(role, ""), key=f"model_{role}"
                )
                for i, role in enumerate(ROLES)
            }
            b1, b2 = st.columns(2)
            budget_usd = b1.number_input(
                "Budget (USD, 0 = no cap)", min_value=0.0, value=0.0, step=0.5
            )
            budget_tokens = b2.number_input(
                "Budget (tokens, 0 = no cap)", min_value=0, value=0, step=10_000
            )
        g1, g2 = st.columns(2)
        gap_turns = g1.number_input(
            "Gap rounds",
            min_value=GAP_TURNS_RANGE[0],
            max_value=GAP_TURNS_RANGE[1],
            value=None,
            placeholder="auto: 2, or 0 for a local model",
            disabled=mode == "costorm",
            help=GAP_HELP,
        )
        depth = g2.selectbox(
            "Report depth",
            list(DEPTH_LABELS),
            index=1,
            format_func=DEPTH_LABELS.get,
            help="How long the report is; a question with little evidence gets a shorter section.",
        )
        w1, w2 = st.columns(2)
        since = w1.text_input(
            "Sources since (YYYY[-MM[-DD]], empty = any date)",
            help=SINCE_HELP,
            max_chars=10,
        )
        language = w2.selectbox(
            "Report language",
            list(LANGUAGES),
            format_func=lambda c: LANGUAGES[c],
            help="litellm engine: prompts ask for this language (search queries stay English). "
            f"{OFFLINE_LABEL} cannot translate: it quotes the sources in their own language.",
        )
        review = st.toggle(
            "Review the plan before research",
            value=False,
            disabled=mode == "costorm",
            help="Stop after planning so you can edit the syllabus questions, perspectives and steps "
            "on the Plan page, then approve (STORM mode).",
        )
        with st.expander("Notifications", icon=":material/notifications:"):
            notify = st.text_area(
                "Notify when the run completes, fails or waits for review",
                placeholder="https://hooks.example.org/research\nslack://TokenA/TokenB/TokenC",
                help=NOTIFY_HELP,
                height=80,
                key="launch_notify",
            )
            if n_settings := settings_target_count(settings):
                st.caption(
                    f"Also notified: the {n_settings} target(s) of the server's settings "
                    "(RESEARCH_WEBHOOK_URLS / RESEARCH_APPRISE_URLS)."
                )
        submitted = st.form_submit_button("Start run", type="primary", icon=":material/play_arrow:")

    if submitted:
        values = form_values(
            corpus=corpus,
            template=template,
            max_perspectives=max_perspectives,
            max_turns=max_turns,
            engine=engine,
            mode=mode,
            search=search,
            corpora=corpora,
            models=models,
            budget_usd=budget_usd,
            budget_tokens=budget_tokens,
            costorm=costorm,
            min_databases=min_databases,
            review=review and mode == "storm",
            gap_turns=gap_turns,
            depth=depth,
            notify=notify,
        )
        values.update(since=since.strip() or None, language=language)
        try:
            st.session_state["launched_run"] = jobs.start_run(launch_config(topic, values))
        except ResearchError as exc:
            st.error(exc.message, icon=":material/error:")
        else:
            nav.go_to(
                "report", st.session_state["launched_run"]
            )  # follow the run; Launch keeps its links

    if launched := st.session_state.get("launched_run"):
        st.success(
            f"Run `{launched}` started. It keeps running if you close this tab; follow it here:",
            icon=":material/check_circle:",
        )
        nav.run_page_links(launched)

polling = any(is_active(r.status) for r in store.list_runs(limit=HISTORY_LIMIT))


@st.fragment(run_every=context.POLL_S if polling else None)
def history() -> None:
    st.subheader("Run history", anchor=False)
    current = store.list_runs(limit=HISTORY_LIMIT)
    if polling and not any(is_active(r.status) for r in current):
        st.rerun()  # the last active run finished: redraw once without polling
    if not current:
        st.caption("No runs yet.")
        return
    ids = [r.run_id for r in current]
    stats = run_stats(store, ids)
    rows = history_rows(current, {k: v["sources"] for k, v in stats.items()}, stats=stats)
    f1, f2 = st.columns([2, 1])
    query = f1.text_input("Search runs", placeholder="topic, run id or mode", key="hist_query")
    statuses = f2.multiselect("Status", sorted({r.status for r in current}), key="hist_status")
    shown = filter_rows(rows, query, statuses)
    st.caption(f"{len(shown)} of {len(rows)} runs · click a column header to sort")
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        column_order=[
            "topic",
            "mode",
            "status",
            "sources",
            "citations",
            "cost_usd",
            "duration_s",
            "created",
            "report",
            "plan",
            "coverage",
            "artifacts",
            "run_id",
        ],
        column_config={
            "topic": st.column_config.TextColumn("Topic", width="large"),
            "mode": st.column_config.TextColumn("Mode"),
            "status": st.column_config.TextColumn("Status"),
            "sources": st.column_config.NumberColumn("Sources"),
            "citations": st.column_config.NumberColumn("Citations"),
            "cost_usd": st.column_config.NumberColumn("Cost", format="$%.4f"),
            "duration_s": st.column_config.NumberColumn("Duration", format="%.0f s"),
            "created": st.column_config.TextColumn("Created"),
            "report": st.column_config.LinkColumn("Report", display_text="report"),
            "plan": st.column_config.LinkColumn("Plan", display_text="plan"),
            "coverage": st.column_config.LinkColumn("Coverage", display_text="coverage"),
            "artifacts": st.column_config.LinkColumn("Artifacts", display_text="artifacts"),
            "run_id": st.column_config.TextColumn("Run id"),
        },
    )
    labels = {r.run_id: run_label(r) for r in current}
    o1, o2 = st.columns([3, 1], vertical_alignment="bottom")
    pick = o1.selectbox(
        "Open or delete a run",
        ids,
        index=None,
        format_func=labels.get,
        placeholder="Choose a run",
        key="hist_pick",
    )
    if pick:
        nav.run_page_links(pick)
        with o2.popover("Delete run", icon=":material/delete:"):
            st.warning(
                f"Delete **{plain(run_label(current[ids.index(pick)]))}** with its Redis state, "
                "artifacts and report files? This cannot be undone."
            )
            if is_active(current[ids.index(pick)].status):
                st.caption("The run is still active: cancel it first.")
            elif st.button("Yes, delete it", type="primary", key=f"del_{pick}"):
                delete_run_everywhere(store, pick)
                st.session_state.pop("hist_pick", None)
                st.toast("Run deleted.")
                st.rerun()


history()
