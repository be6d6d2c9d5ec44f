"""``StepSpec``: what the LLM layer needs to know about one engine step.

The table of steps is ``research.engines.steps.STEPS`` (one declaration per step); this module
holds the declaration's type, so the session, accounting and cassettes (this layer) read a
step's name, role, context accounting and cassette key from the spec they are handed, without
importing the engines. Units: none (names and rules).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from research.llm.models import ROLES

MARKER = "[step: {}]"
"""First line of every step's system prompt (the loopback test server keys on it; short because
it travels in every prompt)."""


def digest(text: str) -> str:
    """16 hex chars of sha256(``text``): a cassette key part for long inputs."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _no_key(_inp: Any) -> tuple[()]:
    return ()


@dataclass(frozen=True)
class StepSpec:
    """One step of the litellm engine (STORM or Co-STORM).

    Fields:
        name: the step's name (prompt file ``prompts/{name}.md``, accounting ``by_step`` key,
            cassette key prefix, loopback responder case).
        role: the model role that answers it (one of ``research.llm.models.ROLES``).
        input: the engine input model the step is computed from (documentation and key rule).
        reply: the pydantic model the model must return (sent as ``response_format``).
        key: cassette key rule: ``key(input) -> tuple`` of the parts of the input that do not
            depend on thread timing (perspective, turn, question …); () → the step name alone.
        in_context: False for out-of-band steps (the compressor): their prompt tokens are not
            counted as context (docs/design.md § Context reduction).
        family: ``"storm"`` or ``"costorm"`` (which engine object exposes it).
        max_tokens: the reply's bound (tokens), sent as ``max_tokens`` on every call of the step
            and enforced by the client (``research.llm.client``): a reply cut there is handled
            as any bad reply (re-asked once, then the step's fallback).
        why: the reason for that bound (what the reply holds; STORM's own bounds where it has
            one: 500 conversation, 400 outline, 700 section, 4000 polish).

    Raises:
        ValueError: at declaration, for a role outside ``ROLES``, a bad family, or a bound
            that is not positive or has no reason.
    """

    name: str
    role: str
    input: type[BaseModel] | None
    reply: type[BaseModel]
    key: Callable[[Any], tuple[Any, ...]] = field(default=_no_key, compare=False)
    in_context: bool = True
    family: str = "storm"
    max_tokens: int = 0
    why: str = ""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(
                f"step {self.name}: role {self.role!r} is not one of {', '.join(ROLES)}"
            )
        if self.family not in ("storm", "costorm"):
            raise ValueError(f"step {self.name}: family must be 'storm' or 'costorm'")
        if self.max_tokens <= 0 or not self.why.strip():
            raise ValueError(
                f"step {self.name}: declare max_tokens (> 0, tokens) and why (the reason)"
            )

    @property
    def prompt(self) -> str:
        """The prompt file name (``{name}.md``)."""
        return f"{self.name}.md"

    @property
    def marker(self) -> str:
        """The system prompt's first line."""
        return MARKER.format(self.name)

    def cassette_key(self, inp: Any = None) -> str:
        """The semantic cassette key: ``name|part|part…`` (``key(inp)``; the name alone when
        ``inp`` is None or the rule has no parts)."""
        parts = self.key(inp) if inp is not None else ()
        return "|".join([self.name, *(str(p) for p in parts)])
