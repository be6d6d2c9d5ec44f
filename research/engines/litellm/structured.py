"""Structured output: the step's pydantic model as ``response_format`` (JSON schema,
non-strict) where ``litellm.supports_response_schema`` says so, else the schema spelled out in
the prompt. For a local OpenAI-compatible server (a ``JSON_OBJECT_PROVIDERS`` model at a local
address, ``research.llm.local``) the schema goes as ``{"type": "json_object", "schema": …}``
instead: llama.cpp's servers turn it into a grammar the reply must follow, and vLLM holds the
reply to JSON, so a small model writes short JSON instead of prose up to its bound; the prompt
keeps the template's ``Return {…}`` shape line but not the schema (read on every call, it was a
fifth of a small model's prompt tokens). A server that refuses that format (HTTP 400 or 422) is
asked again without it, the schema spelled out in the prompt, and the process stops sending the
format to that model at that address.

``<think>`` blocks are stripped; the reply is validated; on failure (bad JSON, schema error,
truncated output, a weak reply ``post`` refuses) the model is re-asked ONCE with the reason; a
second failure raises ``InvalidOutput``. Tool calls (``read_artifact``) are executed between
turns, at most ``MAX_TOOL_ROUNDS`` rounds.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ValidationError

from research.engines.litellm import prompts
from research.errors import InvariantError
from research.llm.errors import InvalidOutput, LLMError
from research.llm.local import api_base, is_local, provider_prefix
from research.llm.model_map import litellm
from research.llm.session import LLMSession
from research.llm.steps import StepSpec
from research.llm.tokens import count_tokens

M = TypeVar("M", bound=BaseModel)
THINK_RE = re.compile(r"<think>.*?(</think>|$)", re.S | re.I)
FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
MAX_TOOL_ROUNDS = 2
JSON_OBJECT_PROVIDERS = ("openai", "hosted_vllm", "llamafile")
"""litellm providers that pass a ``json_object`` ``response_format`` with a schema through as is
(to llama.cpp's or llama-cpp-python's server, llamafile or vLLM at a local address)."""
_json_object_refused: set[tuple[str, str]] = set()  # (model, base URL) that answered 400/422 to it


def strip_think(text: str) -> str:
    """Remove ``<think>…</think>`` blocks (an unclosed one runs to the end)."""
    return THINK_RE.sub("", text or "").strip()


def extract_json(text: str) -> str:
    """The JSON object in a reply: the text itself, a fenced block, or the outermost {...}."""
    text = strip_think(text)
    m = FENCE_RE.search(text)
    if m:
        text = m.group(1).strip()
    if not text.startswith("{"):
        start, end = text.find("{"), text.rfind("}")
        if start != -1 and end > start:
            text = text[start : end + 1]
    return text


@functools.lru_cache(maxsize=64)
def native_schema(model: str) -> bool:
    """True when litellm says ``model`` accepts a JSON-schema ``response_format``."""
    try:
        return bool(litellm().supports_response_schema(model=model))
    except Exception:  # noqa: BLE001 - unknown models: use prompt instructions
        return False


def reply_format(model: str, reply_model: type[BaseModel], schema: dict) -> dict | None:
    """The ``response_format`` for ``model`` (module doc): OpenAI's ``json_schema`` where litellm
    says the model takes it, ``json_object`` with ``schema`` for a local OpenAI-compatible server
    that has not refused it (by model and base URL), else None (the schema is only in the
    prompt)."""
    if native_schema(model):
        return {
            "type": "json_schema",
            "json_schema": {"name": reply_model.__name__, "schema": schema, "strict": False},
        }
    if (
        (model, api_base(model) or "") not in _json_object_refused
        and provider_prefix(model) in JSON_OBJECT_PROVIDERS
        and is_local(model)
    ):
        return {"type": "json_object", "schema": schema}
    return None


@functools.lru_cache(maxsize=64)
def native_tools(model: str) -> bool:
    """True when litellm says ``model`` supports native function calling."""
    try:
        return bool(litellm().supports_function_calling(model=model))
    except Exception:  # noqa: BLE001 - unknown models: use prompt instructions
        return False


def call_structured(
    session: LLMSession,
    spec: StepSpec,
    material: dict,
    inp=None,
    *,
    reply: type[M] | None = None,
    tool_tokens: int = 0,
    tools: list[dict] | None = None,
    run_tool: Callable[[str, dict], str] | None = None,
    post: Callable[[M], Any] | None = None,
) -> Any:
    """Render the step's prompt, call its role's model, return the validated reply, or
    ``post(reply)`` when ``post`` is given.

    ``spec``: the step's declaration (``research.engines.steps``): role, reply model (``reply``
    overrides it with a stricter one), reply bound (``spec.max_tokens``), cassette key
    (``spec.cassette_key(inp)``, + the tool round and re-ask count). ``post``: the caller's
    clean-up; raising ``InvalidOutput`` or ``ValueError`` there (a weak reply) re-asks as a
    validation error does.

    Raises:
        InvalidOutput: still invalid after one re-ask. LLMError / BudgetExhausted from the session.
    """
    reply_model: type[BaseModel] = reply or spec.reply
    step, semantic = spec.name, spec.cassette_key(inp)
    model = session.models[spec.role]
    native = native_schema(model)
    schema = reply_model.model_json_schema()
    fmt = reply_format(model, reply_model, schema)
    # a grammar made from the schema holds the reply to it, so the prompt keeps only the shape
    # line, as with native structured output (on a small local model the schema was a fifth
    # of the prompt tokens, read on every call)
    grammar = bool(fmt and fmt["type"] == "json_object")
    messages = prompts.render(spec, material, None if native or grammar else schema, native=native)
    use_tools = tools if (tools and run_tool and native_tools(model)) else None
    reasked, rounds = False, 0
    while True:
        try:
            result = session.call(
                spec,
                messages=messages,
                response_format=fmt,
                tools=use_tools,
                semantic=f"{semantic}|{rounds}|{int(reasked)}",
                tool_tokens=tool_tokens,
            )
        except LLMError as exc:
            if not (fmt and fmt["type"] == "json_object" and exc.code == "bad_request"):
                raise
            _json_object_refused.add((model, api_base(model) or ""))
            fmt = None  # the schema goes in the prompt instead
            messages = prompts.render(spec, material, schema, native=native) + messages[2:]
            continue
        if result.tool_calls and use_tools and rounds < MAX_TOOL_ROUNDS:
            rounds += 1
            messages = messages + [
                {
                    "role": "assistant",
                    "content": result.content or None,
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"]},
                        }
                        for c in result.tool_calls
                    ],
                }
            ]
            if run_tool is None:
                raise InvariantError("Tools are only offered together with their runner")
            for c in result.tool_calls:
                try:
                    args = json.loads(c["arguments"] or "{}")
                    out = run_tool(c["name"], args if isinstance(args, dict) else {})
                except Exception as exc:
                    out = f"error: {exc}"
                tool_tokens += count_tokens(out)
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": out})
            continue
        try:
            if result.finish_reason == "length":
                raise ValueError(
                    f"the reply was cut off at {spec.max_tokens} tokens; answer more briefly"
                )
            parsed = cast(M, reply_model.model_validate_json(extract_json(result.content)))
            return post(parsed) if post is not None else parsed
        except (ValidationError, ValueError, InvalidOutput) as exc:
            if reasked:
                raise InvalidOutput(
                    f"{step}: the model's reply did not validate after a re-ask: {str(exc)[:300]}"
                ) from exc
            reasked = True
            messages = messages + [
                {"role": "assistant", "content": result.content or ""},
                {
                    "role": "user",
                    "content": f"Your reply did not validate: {str(exc)[:600]}\n"
                    "Reply again with only the corrected JSON object.",
                },
            ]
