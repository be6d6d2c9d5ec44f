"""Item 7 — dashboard: script-run time of every page on a big finished run.

The run comes from ``research.devtools.scale_run.build_scale_run`` (engineer D's generator:
1,000 sources, 100 turns, 500 artifacts by default) written into a private Redis and temp data
dir. Each page of ``research.ui.nav.PAGES`` is run with ``streamlit.testing.v1.AppTest``
(``?run=<id>``): one warm-up run (imports, caches), then ``reps`` fresh AppTest runs, median
counted. Baseline (same run, same way): the page on a tiny run (10 sources, 1 turn, 1 artifact),
so the ratio says how much the page slows with run size; the target (≤ 2 s) is on the value.
"""

from __future__ import annotations

import logging
import statistics
import time
from pathlib import Path

import redis
from streamlit.testing.v1 import AppTest

from bench.common import Figure, scoped_env
from bench.redis_env import private_redis
from research.devtools.scale_run import build_scale_run
from research.ui.nav import PAGES

REPO = Path(__file__).resolve().parents[1]


def _page_time(path: str, run_id: str, reps: int) -> tuple[float, list[str]]:

    times, errors = [], []
    for i in range(reps + 1):
        at = AppTest.from_file(str(REPO / path), default_timeout=120)
        at.query_params["run"] = run_id
        t0 = time.perf_counter()
        at.run()
        dt = time.perf_counter() - t0
        if at.exception:
            errors = [str(e.value)[:120] for e in at.exception]
        if i:  # the first run is the warm-up
            times.append(dt)
    return statistics.median(times), errors


def run(sources: int = 1000, turns: int = 100, artifacts: int = 500, reps: int = 2) -> list[Figure]:
    """Measure every page; returns one item-7 figure per page (seconds)."""

    for name in list(logging.root.manager.loggerDict):  # bare-mode ScriptRunContext warnings
        if name.startswith("streamlit"):
            logging.getLogger(name).setLevel(logging.ERROR)

    figs = []
    with private_redis() as (url, d):
        data = d / "data"
        data.mkdir()
        with scoped_env(
            RESEARCH_DATA_DIR=str(data), REDIS_URL=url, RESEARCH_INDEX_DIR=str(d / "indexes")
        ):
            r = redis.Redis.from_url(url, decode_responses=True)
            t0 = time.perf_counter()
            big = build_scale_run(r, data, sources=sources, turns=turns, artifacts=artifacts)
            build_s = time.perf_counter() - t0
            tiny = build_scale_run(r, data, sources=10, turns=1, artifacts=1)
            for spec in PAGES:
                small_s, _ = _page_time(spec.path, tiny, reps)
                big_s, errors = _page_time(spec.path, big, reps)
                note = f"page raised: {errors[0]}" if errors else ""
                figs.append(
                    Figure(
                        7,
                        f"dashboard.{spec.key} page",
                        big_s,
                        "s",
                        baseline=small_s,
                        baseline_label="same page, tiny run",
                        target="<= 2",
                        target_on="value",
                        note=note,
                        status="FAIL" if errors else "",
                    )
                )
            r.close()
    figs[0].note = (
        (figs[0].note + "; " if figs[0].note else "")
        + f"scale run {sources:,} sources / {turns} turns / {artifacts} artifacts built in {build_s:.1f} s; "
        f"median of {reps} AppTest runs after a warm-up"
    )
    return figs
