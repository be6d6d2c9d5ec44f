"""Helpers for the resilience tests: a run's comparable fingerprint, subprocess env."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from research.artifacts import artifacts_dir
from research.models import Report
from research.store.collector import SourceCollector
from research.store.runs import RunStore

REPO = Path(__file__).resolve().parents[1]
TOPIC = "Trastuzumab in HER2-positive breast cancer"
SMALL = {"template": "drug", "max_perspectives": 2, "max_turns": 2}


def fingerprint(store: RunStore, run_id: str) -> dict:
    """Everything that must be identical between two runs of the same input: the report, the
    sources (minus random citation ids and timestamps), the turns, the artifact files and their
    contents, and the cards. Run ids, timestamps and citation ids differ by design."""
    report = store.get_doc(run_id, "report", Report)
    sources = [
        s.model_dump(exclude={"citation_id", "saved_at", "created_at"})
        for s in SourceCollector(store.r, run_id).all_sources()
    ]
    turns = [
        (
            t.perspective,
            t.turn_number,
            t.question,
            t.answer,
            t.search_queries,
            [(s.n, s.source_id, s.url) for s in t.sources],
        )
        for t in store.get_turns(run_id)
    ]
    root = artifacts_dir(run_id)
    files = {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
    cards = [(c.artifact_file, c.tool_input, c.card.summary_title) for c in store.get_cards(run_id)]
    return {
        "report": report.markdown if report else None,
        "sources": sources,
        "turns": turns,
        "files": files,
        "cards": cards,
    }


def diff_keys(a: dict, b: dict) -> list[str]:
    """Names of the fingerprint parts that differ."""
    return [k for k in a if a[k] != b[k]]


def subprocess_env(data_dir: Path, redis_url: str, **extra: str) -> dict:
    """Environment for a ``research`` subprocess on the test Redis and data dir."""
    env = {
        **os.environ,
        "RESEARCH_DATA_DIR": str(data_dir),
        "REDIS_URL": redis_url,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONPATH": str(REPO),
        **extra,
    }
    return env


def research_cmd(*args: str) -> list[str]:
    """``python -m research.cli ARGS`` with this interpreter."""
    return [sys.executable, "-m", "research.cli", *args]
