"""research.ui.views and research.ui.context.resolve_run (real Redis)."""

from __future__ import annotations

from research.models import (
    Analysis,
    Claim,
    Contradiction,
    DialogueTurn,
    Perspective,
    Question,
    Reference,
    Report,
    RunConfig,
    Syllabus,
)
from research.store.runs import RunStore
from research.ui import views
from research.ui.context import resolve_run


def _turn(p: str, n: int) -> DialogueTurn:
    return DialogueTurn(perspective=p, turn_number=n, question=f"q{n}", answer="a")


def test_group_turns_orders_and_keeps_unknown():
    ps = [
        Perspective(name="Basic Fact Writer", focus="f"),
        Perspective(name="Oncologist", focus="g"),
    ]
    groups = views.group_turns(
        [_turn("Oncologist", 2), _turn("Oncologist", 1), _turn("Stray", 1)], ps
    )
    assert list(groups) == ["Basic Fact Writer", "Oncologist", "Stray"]
    assert groups["Basic Fact Writer"] == []
    assert [t.turn_number for t in groups["Oncologist"]] == [1, 2]
    assert views.tab_label("x" * 50, 3).endswith("… (3)")


def test_syllabus_rows_and_perspective_card():
    syl = Syllabus(
        name="drug",
        questions=[
            Question(
                key="clinical.efficacy",
                label="Clinical Efficacy",
                description="Trial results",
                min_sources=5,
            )
        ],
    )
    assert views.syllabus_rows(syl) == [
        {
            "key": "clinical.efficacy",
            "label": "Clinical Efficacy",
            "description": "Trial results",
            "min_sources": 5,
        }
    ]
    card = views.perspective_card(
        Perspective(name="Dr <X>", focus="safety", questions=["Is it *safe*?"])
    )
    assert card.startswith("**Dr \\<X\\>**") and "- Is it \\*safe\\*?" in card


def test_analysis_markdown_links_cited_sources():
    report = Report(
        title="t",
        lead="",
        sections=[],
        markdown="",
        references=[
            Reference(number=1, source_id="src_001", title="a", url="https://a", source_type="web")
        ],
    )
    numbers = views.source_numbers(report)
    assert numbers == {"src_001": 1} and views.source_numbers(None) == {}
    analysis = Analysis(
        facts_total=3,
        cross_validated=[Claim(text="HER2 <b>", source_ids=["src_001", "src_009"])],
        contradictions=[
            Contradiction(
                subject="OS",
                statement_a="better",
                source_a="src_001",
                statement_b="same",
                source_b="src_009",
                explanation="why",
            )
        ],
    )
    md = views.claims_markdown(analysis, numbers)
    assert md == "- HER2 \\<b\\> [[1]](#ref-1) `src_009`"
    (block,) = views.contradictions_markdown(analysis, numbers)
    assert (
        "**OS**" in block and "[[1]](#ref-1)" in block and "`src_009`" in block and "_why_" in block
    )


def test_resolve_run(r):
    store = RunStore(r)
    state = store.create_run(RunConfig(topic="HER2"))
    assert resolve_run(store, state.run_id)[0].run_id == state.run_id
    assert resolve_run(store, None) == (None, None)
    none, err = resolve_run(store, "not-a-run")
    assert none is None and "is not a run id" in err
    none, err = resolve_run(store, "f" * 16)
    assert none is None and "No run" in err
