"""The step registry (``research.engines.steps``): one declaration per step,
read by the litellm engines, the prompts folder, the loopback responder, accounting and cassettes."""

from __future__ import annotations

import inspect
import json
import re

from pydantic import BaseModel

from research.devtools.loopback_responder import HANDLERS, default_responder, step_of
from research.engines.base import AnswerInput, AskInput, CompressInput
from research.engines.litellm import prompts
from research.engines.litellm.costorm import LiteLLMCoStorm
from research.engines.litellm.engine import LiteLLMEngine
from research.engines.steps import STEPS, family, step
from research.llm.models import ROLES
from research.models import Perspective


def test_every_step_has_a_prompt_file_and_no_prompt_file_lacks_a_step():
    files = {p.name for p in prompts.DIR.glob("*.md")}
    declared = {s.prompt for s in STEPS.values()}
    assert declared - files == set(), "declared steps without a prompt file"
    assert files - declared == set(), "prompt files without a declared step"
    for spec in STEPS.values():
        system, user = prompts.template(spec.prompt)
        assert system and "$material" in user, spec.name


def test_every_step_has_a_loopback_case_and_no_case_lacks_a_step():
    assert set(HANDLERS) == set(STEPS)
    for spec in STEPS.values():  # the responder finds each step by the marker the prompts carry
        messages = prompts.render(spec, {"topic": "Trastuzumab"})
        assert messages[0]["content"].startswith(spec.marker)
        assert step_of({"messages": messages}) == spec.name


def test_roles_models_and_families_are_valid():
    for spec in STEPS.values():
        assert spec.role in ROLES, spec.name
        assert issubclass(spec.reply, BaseModel) and (
            spec.input is None or issubclass(spec.input, BaseModel)
        )
    assert set(family("storm")) | set(family("costorm")) == set(STEPS)
    assert [s.name for s in STEPS.values() if not s.in_context] == [
        "compress"
    ]  # out of band (docs/design.md § Context reduction)
    try:
        step("answer_questoin")
    except KeyError as exc:
        assert "answer_question" in str(exc)  # the error lists the declared steps
    else:
        raise AssertionError("an unknown step name must raise")


def test_engines_call_only_declared_steps():
    """Every ``self._run("name", …)`` / ``self._guard("name", …)`` in the two litellm engine
    classes names a declared step of its family, and every declared step is called."""

    for cls, fam in ((LiteLLMEngine, "storm"), (LiteLLMCoStorm, "costorm")):
        called = set(re.findall(r'self\._(?:run|guard)\(\s*"([a-z_]+)"', inspect.getsource(cls)))
        assert called == set(family(fam)), (cls.__name__, called ^ set(family(fam)))


def test_cassette_keys_follow_the_declared_rule():

    ask = AskInput(
        topic="t",
        perspective=Perspective(name="Oncologist", focus="f"),
        history=[],
        next_focus=[],
        max_turns=3,
    )
    assert step("ask_question").cassette_key(ask) == "ask_question|Oncologist|0"
    assert (
        step("answer_question").cassette_key(AnswerInput(topic="t", question="Why?", results=[]))
        == "answer_question|Why?"
    )
    c1 = step("compress").cassette_key(
        CompressInput(
            plan_title="p",
            step_title="s",
            step_description="d",
            tool_name="search",
            raw_output="a" * 50,
        )
    )
    assert c1.startswith("compress|") and len(c1.split("|")[1]) == 16
    assert step("plan").cassette_key(None) == "plan"
    lead = default_responder(
        {"messages": prompts.render(step("write_lead"), {"topic": "T", "sections": []})}
    )
    assert json.loads(lead.content) == {"text": "This report covers T."}
