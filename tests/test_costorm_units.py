"""Co-STORM units on small hand-built cases (docs/design.md § Co-STORM round-table): the α rerank formula, mind-map
insert / reorganize / clean, the moderator trigger, each stop condition, state round trip and
the analyst queue. Real embedder (all-MiniLM-L6-v2), real redis-server."""

from __future__ import annotations

import math

import pytest

from research.config import load_settings
from research.costorm import moderator, state
from research.costorm.discourse import Table
from research.costorm.mindmap import MindItem, MindMap, MindNode
from research.costorm.pipeline import STOP_BUDGET, STOP_COVERAGE, STOP_TURNS, stop_reason
from research.engines.costorm_steps import PoolItem
from research.engines.extractive.costorm import ExtractiveCoStorm, _good_name
from research.errors import InputError
from research.models import (
    CoStormSettings,
    CoStormTurn,
    Question,
    RunConfig,
    SearchResult,
    Syllabus,
)
from research.pipeline.context import RunContext
from research.search.embeddings import get_embedder
from research.store.collector import SourceCollector
from research.store.runs import RunStore
from research.text.vectors import Vectors

TOPIC = "Trastuzumab in HER2-positive breast cancer"


@pytest.fixture(scope="module")
def steps():

    return ExtractiveCoStorm(Vectors(get_embedder()))


def turn(n: int, intent: str, kind: str = "expert", role: str = "E1", **kw) -> CoStormTurn:
    return CoStormTurn(turn_number=n, role=role, kind=kind, intent=intent, utterance=f"u{n}", **kw)


# ---------------------------------------------------------------------- α formula
def test_rerank_score_pins_the_formula():
    assert moderator.rerank_score(0.8, 0.2, 0.5) == pytest.approx(math.sqrt(0.8) * math.sqrt(0.8))
    assert moderator.rerank_score(0.9, 0.3, 0.25) == pytest.approx(0.9**0.25 * 0.7**0.75)
    assert moderator.rerank_score(0.6, 0.9, 1.0) == pytest.approx(0.6)  # α = 1: topic only
    assert moderator.rerank_score(0.6, 0.9, 0.0) == pytest.approx(0.1)  # α = 0: novelty only
    assert moderator.rerank_score(-0.2, 0.5, 0.5) == 0.0  # cosines clipped to [0, 1]
    assert moderator.rerank_score(0.7, -0.3, 0.5) == pytest.approx(math.sqrt(0.7))


def test_rerank_prefers_on_topic_information_far_from_its_question(steps):
    q = "What is the recommended dose of trastuzumab?"
    res = SearchResult(url="u", title="t")
    items = [
        PoolItem(
            text="Trastuzumab is given at 8 mg/kg loading dose then 6 mg/kg every three weeks.",
            question=q,
            turn=1,
            result=res,
        ),
        PoolItem(
            text="Trastuzumab causes cardiotoxicity, with declines in left ventricular ejection fraction "
            "in HER2-positive breast cancer patients.",
            question=q,
            turn=1,
            result=res,
        ),
        PoolItem(text="The football season starts in August.", question=q, turn=1, result=res),
    ]
    ranked = moderator.rerank(items, TOPIC, 0.5, steps.vectors)
    assert ranked[0][1] is items[1]  # on topic, not what the dose question asked
    assert ranked[-1][1] is items[2]  # off topic
    cos_t = steps.vectors.sim([TOPIC], [items[1].text])[0][0]
    cos_q = steps.vectors.sim([q], [items[1].text])[0][0]
    assert ranked[0][0] == pytest.approx(moderator.rerank_score(cos_t, cos_q, 0.5), abs=1e-5)
    only_topic = moderator.rerank(items, TOPIC, 1.0, steps.vectors)
    assert [s for s, _ in only_topic] == sorted([s for s, _ in only_topic], reverse=True)


# ---------------------------------------------------------------------- moderator trigger
def test_moderator_speaks_after_L_consecutive_answers():
    h = [turn(1, "original_question", "moderator", "Moderator"), turn(2, "potential_answer")]
    assert not moderator.should_speak(h, 2)
    h.append(turn(3, "further_details", role="E2"))
    assert moderator.should_speak(h, 2)
    assert not moderator.should_speak(h, 3)
    h.append(turn(4, "information_request"))
    assert moderator.consecutive_answers(h) == 0 and not moderator.should_speak(h, 1)


def test_moderator_uses_information_since_its_last_turn():
    res = SearchResult(url="u", title="t")
    pool = [
        PoolItem(text="a", question="q", turn=2, result=res),
        PoolItem(text="b", question="q", turn=5, result=res),
    ]
    h = [
        turn(1, "potential_answer"),
        turn(3, "original_question", "moderator", "Moderator"),
        turn(4, "potential_answer"),
    ]
    assert [p.text for p in moderator.since_last_moderator(pool, h)] == ["b"]


# ---------------------------------------------------------------------- mind map
def _item(text: str, sid: str = "src_001") -> MindItem:
    return MindItem(id=0, text=text, source_id=sid)


CARDIAC = [
    "Trastuzumab is associated with cardiotoxicity and a decline in left ventricular ejection fraction.",
    "Congestive heart failure occurred in 4% of patients receiving trastuzumab with anthracyclines.",
    "Cardiac monitoring with echocardiography every three months is recommended during trastuzumab.",
    "Beta-blockers and ACE inhibitors were tested to prevent trastuzumab cardiotoxicity.",
]
EFFICACY = [
    "Adjuvant trastuzumab improved disease-free survival in HER2-positive early breast cancer.",
    "One year of trastuzumab reduced the risk of recurrence by about half in the HERA trial.",
    "Overall survival was longer with trastuzumab plus chemotherapy than chemotherapy alone.",
    "Pathologic complete response rates rose when trastuzumab was added to neoadjuvant chemotherapy.",
]


def test_insert_uses_existing_concept_or_creates_one(steps):
    mm = MindMap.new(TOPIC)
    mm.root.children = [MindNode(name="Cardiac Safety"), MindNode(name="Survival Benefit")]
    mm.root.children[0].items, mm.items = [0], [_item(CARDIAC[0]).model_copy(update={"id": 0})]
    p = mm.add_item(
        _item(CARDIAC[1]),
        "What cardiac safety problems does trastuzumab cause?",
        steps,
        steps.vectors,
        10,
    )
    assert p == f"{TOPIC} > Cardiac Safety"
    p2 = mm.add_item(
        _item("Trastuzumab costs about 40,000 dollars per year of treatment."),
        "What does trastuzumab treatment cost for health systems?",
        steps,
        steps.vectors,
        10,
    )
    assert p2.startswith(TOPIC + " > ") and "Cardiac" not in p2 and "Survival" not in p2
    assert mm.find(p2).items == [2]
    assert mm.problems() == [] or mm.problems() == [f"{TOPIC} > Survival Benefit: no information"]


def test_reorganize_splits_an_overfull_node_and_clean_keeps_it_sound(steps):
    mm = MindMap.new(TOPIC)
    for text in CARDIAC + EFFICACY:
        mm.add_item(
            _item(text),
            "What do sources report about trastuzumab outcomes and monitoring?",
            steps,
            steps.vectors,
            k=100,
        )
    assert len(mm.root.children) == 1 and len(mm.root.children[0].items) == 8
    path = f"{TOPIC} > {mm.root.children[0].name}"
    mm.reorganize(path, steps, steps.vectors, k=3)
    assert mm.problems() == []
    assert mm.depth() >= 2
    node = mm.find(path)
    assert len(node.children) >= 2
    # every item is still held exactly once, and the two themes were mostly separated
    placed = mm.item_paths()
    assert sorted(placed) == list(range(8))
    cardiac_homes = {placed[i] for i in range(4)}
    efficacy_homes = {placed[i] for i in range(4, 8)}
    assert len(cardiac_homes & efficacy_homes) <= 1


def test_insert_triggers_reorganize_beyond_K(steps):
    mm = MindMap.new(TOPIC)
    for text in CARDIAC + EFFICACY:
        mm.add_item(
            _item(text),
            "What do sources report about trastuzumab outcomes and monitoring?",
            steps,
            steps.vectors,
            k=5,
        )
    assert mm.problems() == []
    assert all(len(n.items) <= 5 or n.hold for _, n in mm.walk())
    assert mm.depth() >= 2


def test_clean_removes_empty_nodes_and_collapses_single_children():
    mm = MindMap.new(TOPIC)
    mm.items = [_item(t).model_copy(update={"id": i}) for i, t in enumerate(["a", "b", "c"])]
    leaf = MindNode(name="Leaf", items=[1])
    mm.root.children = [
        MindNode(name="A", items=[0], children=[MindNode(name="Only", children=[leaf])]),
        MindNode(name="Empty", children=[MindNode(name="Empty too")]),
        MindNode(name="B", items=[2]),
    ]
    mm.clean()
    names = [(p, n.items) for p, n in mm.walk()]
    assert names == [(TOPIC, []), (f"{TOPIC} > A", [0, 1]), (f"{TOPIC} > B", [2])]
    assert mm.problems() == []
    again = MindMap.model_validate_json(mm.model_dump_json())  # serializable for Redis
    assert again == mm


# ---------------------------------------------------------------------- stop conditions
def _table(r, tmp_path, costorm: CoStormSettings, min_sources: int = 1) -> Table:
    store = RunStore(r)
    config = RunConfig(topic=TOPIC, mode="costorm", costorm=costorm)
    run_id = store.create_run(config).run_id
    collector = SourceCollector(r, run_id)
    collector.init(
        Syllabus(
            name="t",
            questions=[
                Question(
                    key="clinical.efficacy",
                    label="Efficacy",
                    description="d",
                    min_sources=min_sources,
                )
            ],
        )
    )
    ctx = RunContext(
        run_id=run_id,
        config=config,
        settings=load_settings(),
        store=store,
        collector=collector,
        engine=None,
        retriever=None,
    )
    return Table(ctx=ctx, steps=None, vectors=None, session=state.load(r, run_id, TOPIC))


def test_each_stop_condition(r, data_dir, tmp_path):
    t = _table(r, tmp_path, CoStormSettings(query_budget=5, max_turns=3))
    assert stop_reason(t) == ""
    t.session.meta.queries_used = 5
    assert stop_reason(t) == STOP_BUDGET
    t.session.meta.queries_used = 1
    t.session.turns = [turn(1, "potential_answer", warm_start=True)] + [
        turn(i, "potential_answer") for i in (2, 3)
    ]
    assert stop_reason(t) == ""  # warm-start turns do not count
    t.session.turns.append(turn(4, "potential_answer"))
    assert stop_reason(t) == STOP_TURNS
    t.ctx.collector.save_source("pubmed", "PMID:1", "https://x.org/1", "T", ["clinical.efficacy"])
    assert stop_reason(t) == STOP_COVERAGE  # coverage first: check_completion ready


# ---------------------------------------------------------------------- state + analyst
def test_commit_and_load_round_trip(r, data_dir, tmp_path):
    t = _table(r, tmp_path, CoStormSettings())
    s, rid = t.session, t.ctx.run_id
    s.meta.queries_used = 3
    s.pool.append(PoolItem(text="x", question="q", turn=1, result=SearchResult(url="u", title="t")))
    state.commit(r, rid, s, turn(1, "potential_answer"))
    state.commit(r, rid, s, turn(2, "information_request"))
    back = state.load(r, rid, TOPIC)
    assert [x.turn_number for x in back.turns] == [1, 2]
    assert back.meta.queries_used == 3 and back.pool == s.pool and back.mindmap == s.mindmap


def test_analyst_messages_are_validated_and_queued(r, data_dir, tmp_path):
    t = _table(r, tmp_path, CoStormSettings())
    store, rid = t.ctx.store, t.ctx.run_id
    with pytest.raises(InputError):
        state.post_analyst_message(store, rid, "   ")
    with pytest.raises(InputError):
        state.post_analyst_message(store, rid, "x" * 1001)
    assert state.post_analyst_message(store, rid, "  What about  cost? ") == 1
    assert state.pending_messages(r, rid) == ["What about cost?"]
    store.set_status(rid, "complete")
    with pytest.raises(InputError, match="complete"):
        state.post_analyst_message(store, rid, "late")
    storm = store.create_run(RunConfig(topic=TOPIC)).run_id
    with pytest.raises(InputError, match="STORM"):
        state.post_analyst_message(store, storm, "hello")
    assert state.pending_messages(r, rid) == ["What about cost?"]


def test_a_unit_or_a_span_of_time_names_no_concept():
    """ "Square Meter" (of "mg per square meter") and "Absolute 10-year Risk" name no concept an
    analyst would look for; a condition or a measure of the body does."""
    assert not _good_name("Square Meter") and not _good_name("Absolute 10-year Risk")
    assert not _good_name("Deficits")
    assert _good_name("Nephrotoxicity") and _good_name("Body Composition")
