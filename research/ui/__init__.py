"""Render helpers for the Research Desk dashboard (``streamlit_app.py`` + ``app_pages/``).

Pages stay thin (read state, render); anything with logic lives here and is unit-tested:

- ``citations``: safe Markdown from source/model text, ``[n]`` → ``#ref-n`` links.
- ``views``: stored documents shaped into rows and safe Markdown (syllabus, personas, turns, analysis).
- ``charts``: coverage data frames and the plotly coverage figure.
- ``cards``: summary-card filtering and raw-artifact reading for display/download.
- ``history``: run-history rows, durations, run labels; ``events``: event lines and phase progress.
- ``nav``: the page registry and links carrying ``?run=<id>``.
- ``context``: which run is selected (``?run=<id>``), store access, run header, live polling.
- ``progress``: live progress (phase stepper, turn/coverage bars, cost, Cancel) and share URLs.
- ``report_view``: reference lines with artifact links, download buttons, the read-only view.
- ``launch_form``: choices for every RunConfig field and the call into ``jobs.make_config``.
- ``compare``: configs, coverage, source overlap, cost and report diffs of 2–4 runs.
"""
