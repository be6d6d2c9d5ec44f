"""Prompt templates, one file per step in ``prompts/{step}.md`` (``[system]`` and ``[user]``
parts; ``$material`` is replaced by the step's JSON material). The system prompt starts with
the marker ``[research-desk step: {step}]`` (the loopback test server keys on it)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from string import Template

DIR = Path(__file__).resolve().parent / "prompts"


@functools.lru_cache(maxsize=None)
def template(step: str) -> tuple[str, str]:
    """(system, user) text of ``prompts/{step}.md``. Raises FileNotFoundError."""
    text = (DIR / f"{step}.md").read_text(encoding="utf-8")
    system, _, user = text.partition("[user]")
    return system.replace("[system]", "", 1).strip(), user.strip()


def render(step: str, material: dict, schema: dict | None = None) -> list[dict]:
    """Messages ``[system, user]`` for ``step``. ``schema``: a JSON schema to spell out in the
    system prompt (for models without native structured output)."""
    system, user = template(step)
    system = f"[research-desk step: {step}]\n{system}\nReply with one JSON object only."
    if schema is not None:
        system += "\nIt must validate against this JSON schema:\n" + json.dumps(schema, separators=(",", ":"))
    body = Template(user).safe_substitute(material=json.dumps(material, ensure_ascii=False, indent=1))
    return [{"role": "system", "content": system}, {"role": "user", "content": body}]
