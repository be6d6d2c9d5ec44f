"""Research Desk dashboard: ``streamlit run streamlit_app.py``.

Registers the pages under ``pages/`` with ``st.navigation`` (pages are thin: read state, render;
helpers live in ``research/ui/``) and shows the public settings in the sidebar (never secrets).
"""

import streamlit as st

from research.config import load_settings
from research.ui.citations import code, plain
from research.ui.nav import PAGES

st.set_page_config(layout="wide", page_title="Research Desk", page_icon=":material/travel_explore:")

pages = [st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url_path, default=p.key == "launch")
         for p in PAGES]
current = st.navigation({"Research Desk": pages[:1], "Run": pages[1:]})

settings = load_settings().public()  # data dir, redis mode, corpus, model name: no secrets
engine = f"litellm · {settings['llm_model']}" if settings["llm_model"] else "offline extractive mode"
with st.sidebar:
    st.caption(f"**Engine:** {plain(engine)}  \n**Redis:** {settings['redis']}  \n"
               f"**Data dir:** {code(settings['data_dir'])}")

current.run()
