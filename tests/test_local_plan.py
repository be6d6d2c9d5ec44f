"""A local model's default plan of steps, against the loopback server as a stand-in with exact
behaviour: with only ``OPENAI_API_BASE`` set, a run does no gap rounds unless asked and its
summary cards are made by the offline engine by design — stated on the report, the run page,
the Cost page, in ``research show --json`` and as an ``llm.offline`` event; the two settings
(``RESEARCH_LOCAL_GAP_TURNS``, ``RESEARCH_LOCAL_COMPRESS``) hand the steps back to the model;
a hosted model keeps 2 gap rounds and its model-made cards."""

from __future__ import annotations

from test_llm_local import _local as _base_url_only

from research import jobs
from research.config import load_settings
from research.devtools.loopback_llm import LoopbackLLM
from research.devtools.loopback_responder import step_of
from research.engines.labels import planned_line
from research.engines.litellm.engine import LiteLLMEngine
from research.engines.litellm.planned import offline_by_design
from research.jobs.run_config import default_gap_turns
from research.llm.models import resolve_models
from research.llm.usage import usage_report
from research.models import GapReport, Report, RunConfig
from research.store.connection import get_redis
from research.store.runs import RunStore
from research.ui.cost import cards_caption
from research.ui.launch_form import form_values
from research.ui.progress import progress_info

MODEL = "openai/smollm2"  # a name no price table knows: free only because it is local
HOSTED = "openai/gpt-4o-mini"
TOPIC = "Trastuzumab in HER2-positive breast cancer"


def _local(monkeypatch, srv: LoopbackLLM) -> None:
    """A local user's settings (``test_llm_local._local``: the base URL only), and the local
    plan's own settings left at their defaults."""
    _base_url_only(monkeypatch, srv)
    for name in ("RESEARCH_LOCAL_GAP_TURNS", "RESEARCH_LOCAL_COMPRESS"):
        monkeypatch.setenv(name, "")  # empty = unset


def _run(finished_corpus, **options):
    return jobs.run_foreground(
        jobs.make_config(
            TOPIC,
            corpus=str(finished_corpus),
            template="drug",
            engine="litellm",
            models={"*": MODEL},
            max_perspectives=1,
            max_turns=1,
            **options,
        )
    )


def test_a_local_model_runs_no_gap_round_and_makes_its_cards_offline_saying_so(
    llm_env, monkeypatch, finished_corpus, data_dir
):
    with LoopbackLLM() as srv:
        _local(monkeypatch, srv)
        state = _run(finished_corpus)
        steps = {step_of(body) for body in srv.bodies}
    assert state.status == "complete", state.error
    assert state.config.gap_turns == 0  # the local default, none given
    assert "compress" not in steps and "ask_question" in steps  # the model still converses
    store = RunStore(get_redis())
    cards = store.count_cards(state.run_id)
    rep = usage_report(store, state.run_id)
    assert cards and rep["offline_by_design"] == {"compress": cards}
    assert "compress" not in rep["by_step"] and rep["fallbacks"].get("compress") is None
    events = [e for e in store.events(state.run_id) if e.type == "llm.offline"]
    assert [e.data["step"] for e in events] == ["compress"]
    assert "RESEARCH_LOCAL_COMPRESS=model" in events[0].data["reason"]
    line = planned_line({"compress": cards})
    assert line.startswith("By design for a local model, the summary cards were made in ")
    report = store.get_doc(state.run_id, "report", Report)
    assert f"> {line}" in report.markdown  # the report's note
    assert jobs.run_snapshot(state.run_id)["llm"]["offline_by_design"] == {"compress": cards}
    assert progress_info(store, store.get_run(state.run_id)).offline == {"compress": cards}
    assert cards_caption(rep) == line  # the Cost page names who made the cards
    gaps = store.get_doc(state.run_id, "gaps", GapReport)
    assert gaps is not None and gaps.rounds == 0
    assert all(q.met or "gap searches were off" in q.reason for q in gaps.questions)


def test_the_settings_and_an_explicit_option_hand_the_steps_back_to_the_model(
    llm_env, monkeypatch, finished_corpus, data_dir
):
    with LoopbackLLM() as srv:
        _local(monkeypatch, srv)
        monkeypatch.setenv("RESEARCH_LOCAL_COMPRESS", "model")
        monkeypatch.setenv("RESEARCH_LOCAL_GAP_TURNS", "1")
        state = _run(finished_corpus)
        steps = {step_of(body) for body in srv.bodies}
    assert state.status == "complete", state.error
    assert state.config.gap_turns == 1 and "compress" in steps
    store = RunStore(get_redis())
    assert usage_report(store, state.run_id)["offline_by_design"] == {}
    report = store.get_doc(state.run_id, "report", Report)
    assert "By design for a local model" not in report.markdown
    monkeypatch.setenv("RESEARCH_LOCAL_GAP_TURNS", "")
    explicit = jobs.make_config(TOPIC, engine="litellm", models={"*": MODEL}, gap_turns="2")
    assert explicit.gap_turns == 2  # --gap-turns beats the local default


def test_a_hosted_model_keeps_two_gap_rounds_and_its_model_made_cards(monkeypatch, data_dir):
    for name in ("OPENAI_API_BASE", "OPENAI_BASE_URL", "RESEARCH_LOCAL_GAP_TURNS"):
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("RESEARCH_LOCAL_COMPRESS", "offline")
    models = resolve_models({"*": HOSTED})
    assert default_gap_turns("litellm", {"*": HOSTED}) == 2
    assert default_gap_turns("extractive") == 2
    assert offline_by_design(models, load_settings()) == {}
    engine = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": HOSTED}))
    assert engine.planned == {} and engine.compress_in_background and engine.cards_once
    # a local compressor beside hosted roles: only the cards go offline, the gap rounds stay
    mixed = {"*": HOSTED, "compressor": "ollama/llama3.1:8b"}
    assert default_gap_turns("litellm", mixed) == 2
    assert set(offline_by_design(resolve_models(mixed), load_settings())) == {"compress"}


def test_bad_values_of_the_local_settings_keep_their_defaults(monkeypatch):
    monkeypatch.setenv("RESEARCH_LOCAL_GAP_TURNS", "9")
    monkeypatch.setenv("RESEARCH_LOCAL_COMPRESS", "sometimes")
    settings = load_settings()
    assert (settings.local_gap_turns, settings.local_compress) == (0, "offline")
    monkeypatch.setenv("RESEARCH_LOCAL_GAP_TURNS", "3")
    monkeypatch.setenv("RESEARCH_LOCAL_COMPRESS", "MODEL")
    settings = load_settings()
    assert (settings.local_gap_turns, settings.local_compress) == (3, "model")


def test_the_launch_forms_empty_gap_rounds_field_leaves_the_runs_default(monkeypatch, data_dir):
    """The Launch form's "Gap rounds" left empty passes no value, so a run on a local model gets
    the local default (0) and one on a hosted model 2; a number typed there wins."""
    for name in ("OPENAI_API_BASE", "OPENAI_BASE_URL", "RESEARCH_LOCAL_GAP_TURNS"):
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")  # a hosted model's check
    common = dict(corpus="", template="drug", max_perspectives=1, max_turns=1, engine="litellm")
    common |= dict(mode="storm", search=[], corpora=[])
    empty = form_values(**common, models={"*": "ollama/llama3.1:8b"})
    assert empty["gap_turns"] is None

    def config(values: dict) -> RunConfig:
        return jobs.make_config(TOPIC, **{k: v for k, v in values.items() if k != "corpus"})

    assert config(empty).gap_turns == 0
    assert config(form_values(**common, models={"*": HOSTED})).gap_turns == 2
    typed = form_values(**common, models={"*": "ollama/llama3.1:8b"}, gap_turns=1)
    assert config(typed).gap_turns == 1
