"""Research Desk dashboard: ``streamlit run streamlit_app.py``.

Registers the pages under ``app_pages/`` with ``st.navigation`` (the folder is deliberately not
named ``pages/``: Streamlit would treat that as a legacy pages-folder app, and a share link opened
first after a server start would bypass ``st.navigation`` for the server's life). Pages are thin
(read state, render; helpers live in ``research/ui/``). The sidebar shows the public settings (never secrets).

Access: when ``.streamlit/secrets.toml`` has an ``[auth]`` section (OIDC), every page
is behind ``st.login`` — nothing else renders until the analyst is logged in. With the thread
job backend this process is the worker: interrupted runs are resumed once when it starts.
"""

import streamlit as st

from research.config import load_settings
from research.engines.labels import OFFLINE_LABEL
from research.search.local import start_background_build
from research.store.connection import set_role
from research.ui.citations import code, plain
from research.ui.health import redis_health
from research.ui.nav import PAGES, RUN_PAGES, page
from research.ui.resume import resume_on_start

st.set_page_config(layout="wide", page_title="Research Desk", page_icon=":material/travel_explore:")


def _auth_configured() -> bool:
    """True when secrets.toml has an ``[auth]`` section (OIDC provider for ``st.login``)."""
    try:
        return "auth" in st.secrets
    except Exception:
        return False


def _logged_in() -> bool:
    """``st.user.is_logged_in`` (False when no identity is known, e.g. before any login)."""
    try:
        return bool(st.user.is_logged_in)
    except (AttributeError, KeyError):
        return False


if _auth_configured() and not _logged_in():
    st.title("Research Desk")
    st.info("Sign in to open the research desk.", icon=":material/lock:")
    if st.button("Log in", icon=":material/login:", type="primary"):
        st.login()
    st.stop()


# Before anything touches Redis: the dashboard's lease keeps the embedded server up while it runs.
set_role("dashboard")
resume_on_start()  # thread backend: this process is the worker (logged and retried on failure)


@st.cache_resource(show_spinner=False)
def _index_default_corpus_once() -> bool:
    """Start building (or loading) the default corpus's search index in a background thread
    once per server process, so an analyst's first run usually finds it ready (
    ``RESEARCH_PREINDEX=0`` turns it off). The Corpora page and the run pages show its progress."""

    s = load_settings()
    if not s.preindex or not s.default_corpus.exists():
        return False
    start_background_build(s.default_corpus, s.index_dir)
    return True


_index_default_corpus_once()

# The default page is served at "/" and only reserves its own path, so Launch reserves one
# nobody types and a hidden page at /launch (a typed or bookmarked URL) sends the browser to "/".
pages = {
    p.key: st.Page(
        p.path,
        title=p.title,
        icon=p.icon,
        url_path="home" if p.key == "launch" else p.url_path,
        default=p.key == "launch",
    )
    for p in PAGES
}
run_keys = {p.key for p in RUN_PAGES}


def _to_launch() -> None:
    """``/launch``: the Launch page, served at ``/``, with the same query."""
    st.switch_page(pages["launch"], query_params=st.query_params.to_dict())


current = st.navigation(
    {
        "Research Desk": [pg for k, pg in pages.items() if k not in run_keys],
        "Run": [pg for k, pg in pages.items() if k in run_keys],
        "": [
            st.Page(
                _to_launch, title="Launch", url_path=page("launch").url_path, visibility="hidden"
            )
        ],
    }
)

settings = load_settings().public()  # data dir, redis mode, corpus, model name: no secrets
engine = f"litellm · {settings['llm_model']}" if settings["llm_model"] else OFFLINE_LABEL
with st.sidebar:
    st.caption(
        f"**Default engine:** {plain(engine)}  \n{redis_health()}  \n"
        f"**Data dir:** {code(settings['data_dir'])}"
    )
    if _auth_configured() and _logged_in():
        st.button("Log out", on_click=st.logout, icon=":material/logout:")

current.run()
