"""research.ui.cards: card filters, pagination and raw-artifact reading through artifact_path."""

from __future__ import annotations

import json

import pytest

from research.artifacts import artifacts_dir
from research.errors import ArtifactError, InputError
from research.models import ArtifactRecord, SummaryCard
from research.ui import cards

RUN = "0123456789abcdef"


def _rec(name: str, tool: str, useful: bool, raw: int = 1000, card: int = 50) -> ArtifactRecord:
    return ArtifactRecord(
        artifact_file=f"plan/{name}",
        tool_name=tool,
        step_id=1,
        step_title="s",
        raw_chars=raw * 4,
        raw_tokens=raw,
        card_tokens=card if useful else 0,
        card=SummaryCard(summary_title=name, summary="s", extraction=["x"], is_useful=useful),
    )


CARDS = [
    _rec("a.json", "search_local", True),
    _rec("b.json", "search_local", False),
    _rec("c.txt", "survey", True),
]


def test_filter_cards():
    assert [c.artifact_file for c in cards.filter_cards(CARDS)] == [
        "plan/a.json",
        "plan/b.json",
        "plan/c.txt",
    ]
    assert [c.card.summary_title for c in cards.filter_cards(CARDS, "useful")] == [
        "a.json",
        "c.txt",
    ]
    assert [c.card.summary_title for c in cards.filter_cards(CARDS, "not useful")] == ["b.json"]
    assert [c.card.summary_title for c in cards.filter_cards(CARDS, "useful", ["survey"])] == [
        "c.txt"
    ]
    assert cards.tool_names(CARDS) == ["search_local", "survey"]
    with pytest.raises(InputError, match="usefulness must be one of"):
        cards.filter_cards(CARDS, "maybe")


def test_paginate_clamps():
    items = list(range(31))
    assert cards.paginate(items, 1, 15) == (list(range(15)), 3)
    assert cards.paginate(items, 3, 15) == ([30], 3)
    assert cards.paginate(items, 99, 15)[0] == [30]
    assert cards.paginate([], 1, 15) == ([], 1)


def test_reduction_and_sizes():
    assert cards.reduction_pct(CARDS) == round(100 * (1 - 100 / 3000), 1)
    assert cards.reduction_pct([]) is None
    assert cards.human_size(512) == "512 B" and cards.human_size(2048) == "2.0 KB"
    assert (
        cards.mime_type("x.json") == "application/json" and cards.mime_type("x.txt") == "text/plain"
    )


def test_load_raw_json_text_truncation_and_escape(data_dir):
    root = artifacts_dir(RUN)
    (root / "plan").mkdir(parents=True)
    (root / "plan" / "a.json").write_text(
        json.dumps({"results": [{"title": "HER2"}]}), encoding="utf-8"
    )
    (root / "plan" / "big.txt").write_text("z" * 50_000, encoding="utf-8")

    view = cards.load_raw(RUN, "plan/a.json")
    assert (
        view.parsed == {"results": [{"title": "HER2"}]}
        and not view.truncated
        and view.language == "json"
    )

    big = cards.load_raw(RUN, "plan/big.txt", max_chars=1000)
    assert (
        big.truncated and len(big.text) == 1000 and big.size_bytes == 50_000 and big.parsed is None
    )
    assert cards.raw_bytes(RUN, "plan/big.txt") == b"z" * 50_000

    for bad in ("../../etc/passwd", "/etc/passwd", "plan/missing.json"):
        with pytest.raises(ArtifactError):
            cards.load_raw(RUN, bad)
        with pytest.raises(ArtifactError):
            cards.raw_bytes(RUN, bad)
