"""The step registry: ONE declaration per litellm-engine step — name, model
role, input and reply models, prompt file (``engines/litellm/prompts/{name}.md``), cassette key
rule and whether its prompt counts as context.

Who reads it: ``LiteLLMEngine`` and ``LiteLLMCoStorm`` (role, reply model, cassette key; via
``structured.call_structured``), ``litellm/prompts.py`` (prompt file, step marker), the LLM
session, accounting and cassettes (``research.llm.steps.StepSpec`` handed to
``LLMSession.call``), and the loopback responder (``research/devtools/loopback_responder.py``:
one reply builder per declared step). ``tests/test_steps.py`` checks that every step has a
prompt file and a loopback case, that no prompt file lacks a step and that roles are valid.

STORM steps: docs/design.md § STORM pipeline and docs/design.md § Tool-result compression (planner,
compression); Co-STORM steps: docs/design.md § Co-STORM round-table and the Co-STORM paper §3 / appendix B.
"""

from __future__ import annotations

from research.engines import base as b
from research.engines import costorm_steps as cs
from research.engines.replies import (
    AnalysisReply,
    AnswerAssignReply,
    PlacementReply,
    RelatedReply,
    SyllabusReply,
)
from research.llm.steps import StepSpec, digest
from research.models import Outline, Plan, SummaryCard

_DECLARED = [
    # ---------------------------------------------------------------- STORM (planning)
    StepSpec("plan", "planner", b.PlanInput, Plan),
    StepSpec("survey_queries", "planner", b.SurveyInput, b.QueryList),
    StepSpec("related_outline", "planner", b.RelatedInput, RelatedReply, key=lambda i: (i.query,)),
    StepSpec("fit_syllabus", "planner", b.FitInput, SyllabusReply),
    StepSpec("personas", "planner", b.PersonaInput, b.PersonaList),
    # ---------------------------------------------------------------- STORM (conversations)
    StepSpec(
        "ask_question",
        "question_asker",
        b.AskInput,
        b.AskOutput,
        key=lambda i: (i.perspective.name, len(i.history)),
    ),
    StepSpec(
        "question_to_queries", "expert", b.QueryInput, b.QueryList, key=lambda i: (i.question,)
    ),
    StepSpec(
        "answer_question", "expert", b.AnswerInput, b.AnswerOutput, key=lambda i: (i.question,)
    ),
    StepSpec(
        "assign_questions", "expert", b.AssignInput, b.AssignOutput, key=lambda i: (i.question,)
    ),
    StepSpec(
        "answer_and_assign",
        "expert",
        b.AnswerAssignInput,
        AnswerAssignReply,
        key=lambda i: (i.answer.question,),
    ),
    StepSpec(
        "compress",
        "compressor",
        b.CompressInput,
        SummaryCard,
        key=lambda i: (digest(i.raw_output),),
        in_context=False,
    ),
    # ---------------------------------------------------------------- STORM (analysis, report)
    StepSpec("analyze", "planner", b.AnalysisInput, AnalysisReply),
    StepSpec("draft_outline", "outline", b.OutlineInput, Outline),
    StepSpec("refine_outline", "outline", b.RefineInput, Outline),
    StepSpec(
        "write_section", "writer", b.SectionInput, b.TextOutput, key=lambda i: (i.section.heading,)
    ),
    StepSpec("write_lead", "writer", b.LeadInput, b.TextOutput),
    StepSpec(
        "regenerate_section",
        "writer",
        b.RegenerateInput,
        b.TextOutput,
        key=lambda i: (i.heading, digest(i.instruction + "|" + i.text)),
    ),
    # ---------------------------------------------------------------- Co-STORM
    StepSpec("costorm_experts", "planner", cs.ExpertsInput, b.PersonaList, family="costorm"),
    StepSpec(
        "costorm_intent",
        "expert",
        cs.IntentInput,
        cs.IntentOutput,
        family="costorm",
        key=lambda i: (i.expert.name, len(i.history)),
    ),
    StepSpec(
        "costorm_question",
        "question_asker",
        cs.ExpertQuestionInput,
        b.TextOutput,
        family="costorm",
        key=lambda i: (i.expert.name, len(i.history)),
    ),
    StepSpec(
        "costorm_queries",
        "expert",
        cs.TurnQueryInput,
        b.QueryList,
        family="costorm",
        key=lambda i: (i.intent, i.question),
    ),
    StepSpec(
        "costorm_answer",
        "expert",
        cs.ExpertAnswerInput,
        b.AnswerOutput,
        family="costorm",
        key=lambda i: (i.intent, i.question),
    ),
    StepSpec(
        "costorm_polish",
        "polish",
        cs.UtteranceInput,
        b.TextOutput,
        family="costorm",
        key=lambda i: (digest(i.utterance),),
    ),
    StepSpec(
        "costorm_moderator",
        "question_asker",
        cs.ModeratorInput,
        cs.ModeratorOutput,
        family="costorm",
        key=lambda i: (len(i.history),),
    ),
    StepSpec(
        "costorm_update_experts",
        "planner",
        cs.ExpertUpdateInput,
        b.PersonaList,
        family="costorm",
        key=lambda i: (digest(i.question),),
    ),
    StepSpec(
        "costorm_placement",
        "outline",
        cs.PlacementInput,
        PlacementReply,
        family="costorm",
        key=lambda i: (digest(i.text + "|".join(i.candidates)),),
    ),
    StepSpec(
        "costorm_subtopics",
        "outline",
        cs.SubtopicInput,
        cs.SubtopicOutput,
        family="costorm",
        key=lambda i: (i.path, len(i.items)),
    ),
]

STEPS: dict[str, StepSpec] = {s.name: s for s in _DECLARED}
"""Every declared step by name (module doc)."""
if len(STEPS) != len(_DECLARED):
    raise ValueError("research.engines.steps: a step is declared twice")


def step(name: str) -> StepSpec:
    """The declaration of ``name``. Raises KeyError naming the declared steps."""
    try:
        return STEPS[name]
    except KeyError:
        raise KeyError(f"unknown step {name!r}; declared steps: {', '.join(STEPS)}") from None


def family(name: str) -> dict[str, StepSpec]:
    """The steps of one family (``"storm"`` or ``"costorm"``), in declaration order."""
    return {n: s for n, s in STEPS.items() if s.family == name}
