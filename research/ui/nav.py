"""The dashboard's pages (one file each under ``app_pages/``) and links between them."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from streamlit.errors import StreamlitAPIException

from research.ui.citations import plain


@dataclass(frozen=True)
class PageSpec:
    """One page: ``path`` relative to the repo root, its title, Material icon and URL path."""

    key: str
    path: str
    title: str
    icon: str
    url_path: str


PAGES: tuple[PageSpec, ...] = (
    PageSpec("launch", "app_pages/launch.py", "Launch", ":material/rocket_launch:", "launch"),
    PageSpec("plan", "app_pages/plan.py", "Plan", ":material/checklist:", "plan"),
    PageSpec(
        "conversations",
        "app_pages/conversations.py",
        "Conversations",
        ":material/forum:",
        "conversations",
    ),
    PageSpec("mindmap", "app_pages/mindmap.py", "Mind map", ":material/account_tree:", "mindmap"),
    PageSpec("coverage", "app_pages/coverage.py", "Coverage", ":material/bar_chart:", "coverage"),
    PageSpec(
        "artifacts", "app_pages/artifacts.py", "Artifacts", ":material/inventory_2:", "artifacts"
    ),
    PageSpec("report", "app_pages/report.py", "Report", ":material/article:", "report"),
    PageSpec("corpora", "app_pages/corpora.py", "Corpora", ":material/library_books:", "corpora"),
    PageSpec("compare", "app_pages/compare.py", "Compare", ":material/compare_arrows:", "compare"),
    PageSpec("cost", "app_pages/cost.py", "Cost", ":material/payments:", "cost"),
)
RUN_PAGES = tuple(p for p in PAGES if p.key not in ("launch", "corpora", "compare"))
_BY_KEY = {p.key: p for p in PAGES}


def page(key: str) -> PageSpec:
    """The page with this key. Raises KeyError for unknown keys."""
    return _BY_KEY[key]


def page_url(key: str, run_id: str | None = None) -> str:
    """Relative URL of a page, with ``?run=<id>`` when given (a share link)."""
    url = page(key).url_path
    return f"{url}?run={run_id}" if run_id else url


def page_link(key: str, run_id: str | None = None, label: str | None = None) -> None:
    """Render a link to a page of this app carrying ``?run=<id>``.

    Uses ``st.page_link`` (in-app navigation) when the page is registered with
    ``st.navigation``; when a page script runs on its own (e.g. under ``AppTest``), falls back to
    a Markdown link to the same URL.
    """
    spec = page(key)
    text = label or spec.title
    try:
        st.page_link(
            spec.path, label=text, icon=spec.icon, query_params={"run": run_id} if run_id else None
        )
    except StreamlitAPIException:
        st.markdown(f"[{plain(text)}]({page_url(key, run_id)})")


def go_to(key: str, run_id: str | None = None) -> None:
    """Move the browser to a page of this app with ``?run=<id>`` (``st.switch_page``; the script
    stops there). Does nothing when the page is not registered with ``st.navigation`` (a page
    script run on its own, e.g. under ``AppTest``): the caller's links stay the way there."""
    try:
        st.switch_page(page(key).path, query_params={"run": run_id} if run_id else None)
    except StreamlitAPIException:
        return


def run_page_links(run_id: str, exclude: str | None = None) -> None:
    """A row of links to every run page for ``run_id`` (skipping ``exclude``)."""
    specs = [p for p in RUN_PAGES if p.key != exclude]
    for col, spec in zip(st.columns(len(specs)), specs, strict=True):
        with col:
            page_link(spec.key, run_id)
