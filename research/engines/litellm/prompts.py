"""Prompt templates, one file per declared step (``research.engines.steps``: ``spec.prompt`` in
``prompts/``; ``[system]`` and ``[user]`` parts; ``$material`` is replaced by the step's JSON
material). The system prompt starts with the step's marker ``[step: {name}]``
(``StepSpec.marker``; the loopback test server keys on it).

Context economy (docs/design.md § Context reduction): the material is serialised compactly (``compact``: no indent,
no spaces after separators), and the template's closing ``Return {...}`` shape line is sent only
when the model has no native structured output (with native ``response_format`` the schema
already travels there, so the prompt repeats neither it nor "Reply with one JSON object only").

Prompt caches (OpenAI, Anthropic, Gemini cache a prompt's longest previously seen prefix): every
static part — the step marker, the instructions, the shape line and the schema — goes first, in
the system message, and the run's material last, alone in the user message, so each step's calls
share one cacheable prefix."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from string import Template

from research.llm.steps import StepSpec

DIR = Path(__file__).resolve().parent / "prompts"


@functools.cache
def template(prompt: str) -> tuple[str, str]:
    """(system, user) text of the prompt file ``prompts/{prompt}``. Raises FileNotFoundError."""
    text = (DIR / prompt).read_text(encoding="utf-8")
    system, _, user = text.partition("[user]")
    return system.replace("[system]", "", 1).strip(), user.strip()


def compact(obj) -> str:
    """``obj`` as compact JSON (the form material takes in prompts; count tool tokens on it)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def render(
    spec: StepSpec, material: dict, schema: dict | None = None, *, native: bool = False
) -> list[dict]:
    """Messages ``[system, user]`` for the step ``spec``. ``schema``: a JSON schema to spell out
    in the system prompt (for models without native structured output). ``native``: the schema
    goes as ``response_format``, so the template's ``Return …`` shape line is left out."""
    system, user = template(spec.prompt)
    system = f"{spec.marker}\n{system}"
    shape = [ln for ln in user.splitlines() if ln.startswith("Return ")]
    user = "\n".join(ln for ln in user.splitlines() if not ln.startswith("Return ")).strip()
    if not native:  # with native structured output the response_format already asks for JSON
        system += "".join(f"\n{ln}" for ln in shape) + "\nReply with one JSON object only."
    if schema is not None:
        system += "\nIt must validate against this JSON schema:\n" + json.dumps(
            schema, separators=(",", ":")
        )
    body = Template(user).safe_substitute(material=compact(material))
    return [{"role": "system", "content": system}, {"role": "user", "content": body}]
