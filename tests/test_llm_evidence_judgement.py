"""The model's evidence judgement on the litellm engine: the call that answers a turn and assigns
its results to syllabus questions sees the sentences the embedding judgement put forward, and a
question counts for a result only when the model names it (the embedding score pre-filters)."""

from __future__ import annotations

import json

from research.devtools.loopback_llm import LoopbackLLM, Reply
from research.devtools.loopback_responder import default_responder, material_of, step_of
from research.engines import base as b
from research.engines.litellm import LiteLLMEngine
from research.engines.litellm import material as mat
from research.models import RunConfig, SearchResult
from research.planning.syllabus import get_template
from tests.llm_fixtures import MODEL

TOPIC = "Trastuzumab in HER2-positive breast cancer"


def _results(n: int) -> list[SearchResult]:
    return [
        SearchResult(
            url=f"https://example.org/{i}",
            title=f"Trial {i}",
            snippets=[f"Result of trial {i}."],
            query="q",
        )
        for i in range(1, n + 1)
    ]


def _input(evidence: list[dict[str, str]], focus: list[str]) -> b.AnswerAssignInput:
    syl = get_template("drug")
    return b.AnswerAssignInput(
        answer=b.AnswerInput(
            topic=TOPIC, question="Does it work?", results=_results(len(evidence))
        ),
        syllabus=syl,
        focus=focus,
        evidence=evidence,
    )


def test_the_candidates_go_to_the_model_focus_first_and_bounded():
    syl = get_template("drug")
    first, last = syl.keys()[0], syl.keys()[-1]
    long = "Disease-free survival improved with the drug in the adjuvant trial " * 6
    evidence = [{first: "Sentence one of trial one.", last: long} for _ in range(6)]
    lines = mat.candidate_lines(_input(evidence, focus=[last]))
    assert len(lines) == mat.MAX_EVIDENCE
    assert all(line.split("] ", 1)[1].startswith(f"{last}:") for line in lines[:6])  # focus first
    assert lines[6] == f"[1] {first}: Sentence one of trial one."
    assert all(len(line.split(": ", 1)[1]) <= mat.EVIDENCE_CHARS for line in lines)
    assert "evidence" not in mat.answer_assign(_input([{}, {}], focus=[]), [])


def test_the_model_names_the_keys_whose_sentence_answers(llm_env, monkeypatch):
    """A responder that judges like a model would: it names a key for a result only when the
    sentence put forward for it states a result. The engine's assignment is that judgement."""
    eff, safety = "clinical.efficacy", "clinical.safety"

    def judging(body: dict) -> Reply:
        if step_of(body) != "answer_and_assign":
            return default_responder(body)
        m = material_of(body)
        named: dict[int, list[str]] = {}
        for line in m.get("evidence", []):
            n, rest = line[1:].split("] ", 1)
            key, sentence = rest.split(": ", 1)
            if "improved" in sentence:
                named.setdefault(int(n), []).append(key)
        reply = {
            "answer": "Trial 1 found a benefit [1].",
            "cited": [1],
            "relevant_questions": [named.get(i, []) for i in range(1, 3)],
            "key_excerpts": ["", ""],
        }
        return Reply(content=json.dumps(reply))

    with LoopbackLLM(responder=judging) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        engine = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        out = engine.answer_and_assign(
            _input(
                [
                    {eff: "Survival improved with the drug (HR 0.6).", safety: "It is a drug."},
                    {eff: "The trial enrolled 200 patients."},
                ],
                focus=[eff],
            )
        )
        sent = material_of(next(x for x in srv.bodies if step_of(x) == "answer_and_assign"))
    assert sent["evidence"][0] == f"[1] {eff}: Survival improved with the drug (HR 0.6)."
    assert out.assigned is not None
    assert out.assigned.relevant_questions == [[eff], []]
