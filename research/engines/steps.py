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
    StepSpec(
        "plan",
        "planner",
        b.PlanInput,
        Plan,
        max_tokens=500,
        why="a plan title and up to 8 steps of a title and one sentence each",
    ),
    StepSpec(
        "survey_queries",
        "planner",
        b.SurveyInput,
        b.QueryList,
        max_tokens=120,
        why="3–5 short search queries",
    ),
    StepSpec(
        "related_outline",
        "planner",
        b.RelatedInput,
        RelatedReply,
        key=lambda i: (i.query,),
        max_tokens=250,
        why="a topic name and up to 8 section headings (STORM bounds a whole outline at 400)",
    ),
    StepSpec(
        "fit_syllabus",
        "planner",
        b.FitInput,
        SyllabusReply,
        max_tokens=600,
        why="4–8 questions of a key, a label, one sentence and a number",
    ),
    StepSpec(
        "personas",
        "planner",
        b.PersonaInput,
        b.PersonaList,
        max_tokens=500,
        why="a name and a one-sentence focus per perspective (STORM's conversation bound)",
    ),
    # ---------------------------------------------------------------- STORM (conversations)
    StepSpec(
        "ask_question",
        "question_asker",
        b.AskInput,
        b.AskOutput,
        key=lambda i: (i.perspective.name, len(i.history)),
        max_tokens=200,
        why="one question and 1–3 search queries",
    ),
    StepSpec(
        "question_to_queries",
        "expert",
        b.QueryInput,
        b.QueryList,
        key=lambda i: (i.question,),
        max_tokens=120,
        why="1–3 short search queries",
    ),
    StepSpec(
        "answer_question",
        "expert",
        b.AnswerInput,
        b.AnswerOutput,
        key=lambda i: (i.question,),
        max_tokens=500,
        why="one grounded answer: STORM bounds a conversation turn at 500",
    ),
    StepSpec(
        "assign_questions",
        "expert",
        b.AssignInput,
        b.AssignOutput,
        key=lambda i: (i.question,),
        max_tokens=800,
        why="per result, syllabus keys and an excerpt of at most 300 characters",
    ),
    StepSpec(
        "answer_and_assign",
        "expert",
        b.AnswerAssignInput,
        AnswerAssignReply,
        key=lambda i: (i.answer.question,),
        max_tokens=900,
        why="STORM's 500 for the answer, plus keys and short excerpts per result",
    ),
    StepSpec(
        "compress",
        "compressor",
        b.CompressInput,
        SummaryCard,
        key=lambda i: (digest(i.raw_output),),
        in_context=False,
        max_tokens=400,
        why="a summary card: a title, a few sentences and a few extracted lines",
    ),
    # ---------------------------------------------------------------- STORM (analysis, report)
    StepSpec(
        "analyze",
        "planner",
        b.AnalysisInput,
        AnalysisReply,
        max_tokens=700,
        why="claims and contradictions named by fact id, a sentence each",
    ),
    StepSpec(
        "draft_outline",
        "outline",
        b.OutlineInput,
        Outline,
        max_tokens=400,
        why="headings only: STORM bounds an outline at 400",
    ),
    StepSpec(
        "refine_outline",
        "outline",
        b.RefineInput,
        Outline,
        max_tokens=400,
        why="headings only: STORM bounds an outline at 400",
    ),
    StepSpec(
        "write_section",
        "writer",
        b.SectionInput,
        b.TextOutput,
        key=lambda i: (i.section.heading,),
        max_tokens=700,
        why="one section: STORM bounds a section at 700",
    ),
    StepSpec(
        "write_lead",
        "writer",
        b.LeadInput,
        b.TextOutput,
        max_tokens=600,
        why="a lead of one finding per syllabus question (STORM's 4000 polishes a whole article, not a lead)",
    ),
    StepSpec(
        "regenerate_section",
        "writer",
        b.RegenerateInput,
        b.TextOutput,
        key=lambda i: (i.heading, digest(i.instruction + "|" + i.text)),
        max_tokens=700,
        why="one section: STORM bounds a section at 700",
    ),
    # ---------------------------------------------------------------- Co-STORM
    StepSpec(
        "costorm_experts",
        "planner",
        cs.ExpertsInput,
        b.PersonaList,
        family="costorm",
        max_tokens=500,
        why="a name and a one-sentence focus per expert (STORM's conversation bound)",
    ),
    StepSpec(
        "costorm_intent",
        "expert",
        cs.IntentInput,
        cs.IntentOutput,
        family="costorm",
        key=lambda i: (i.expert.name, len(i.history)),
        max_tokens=60,
        why="one intent label",
    ),
    StepSpec(
        "costorm_question",
        "question_asker",
        cs.ExpertQuestionInput,
        b.TextOutput,
        family="costorm",
        key=lambda i: (i.expert.name, len(i.history)),
        max_tokens=150,
        why="one question",
    ),
    StepSpec(
        "costorm_queries",
        "expert",
        cs.TurnQueryInput,
        b.QueryList,
        family="costorm",
        key=lambda i: (i.intent, i.question),
        max_tokens=120,
        why="1–3 short search queries",
    ),
    StepSpec(
        "costorm_answer",
        "expert",
        cs.ExpertAnswerInput,
        b.AnswerOutput,
        family="costorm",
        key=lambda i: (i.intent, i.question),
        max_tokens=500,
        why="one grounded answer: STORM bounds a conversation turn at 500",
    ),
    StepSpec(
        "costorm_polish",
        "polish",
        cs.UtteranceInput,
        b.TextOutput,
        family="costorm",
        key=lambda i: (digest(i.utterance),),
        max_tokens=500,
        why="one utterance copy-edited, no longer than the answer it polishes",
    ),
    StepSpec(
        "costorm_moderator",
        "question_asker",
        cs.ModeratorInput,
        cs.ModeratorOutput,
        family="costorm",
        key=lambda i: (len(i.history),),
        max_tokens=250,
        why="one moderator question with the item numbers it rests on",
    ),
    StepSpec(
        "costorm_update_experts",
        "planner",
        cs.ExpertUpdateInput,
        b.PersonaList,
        family="costorm",
        key=lambda i: (digest(i.question),),
        max_tokens=500,
        why="a name and a one-sentence focus per expert (STORM's conversation bound)",
    ),
    StepSpec(
        "costorm_placement",
        "outline",
        cs.PlacementInput,
        PlacementReply,
        family="costorm",
        key=lambda i: (digest(i.text + "|".join(i.candidates)),),
        max_tokens=80,
        why="a candidate number and at most a short node name",
    ),
    StepSpec(
        "costorm_subtopics",
        "outline",
        cs.SubtopicInput,
        cs.SubtopicOutput,
        family="costorm",
        key=lambda i: (i.path, len(i.items)),
        max_tokens=400,
        why="a few subtopic names and one index per item",
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
