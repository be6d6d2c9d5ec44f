"""The one validator of an edited plan, shared by the Plan page, the CLI
(``research approve --plan FILE``) and the litellm planner's proposed questions.

A plan edit is JSON of the shape ``research plan RUN_ID --json`` prints:
``{"plan": {plan_title, steps: [{step_id, title, description}]}, "syllabus": {name, questions:
[{key, label, description, min_sources}]}, "perspectives": [{name, focus, questions}]}``; an edit
may carry any subset of the three keys (the others are kept). Rules (each broken rule is one
line of the error, naming the row and what to fix):

- syllabus: 1–12 questions; ``key`` in ``area.name`` form (lower-case letters, digits and ``_``
  on each side of one dot, ≤ 64 characters; a blank key is derived from the label as
  ``custom.<label>``), keys unique, label 1–80 characters, description ≤ 300,
  ``min_sources`` a whole number 1–20;
- perspectives: 1–12, names unique (case-insensitive) and non-empty, focus non-empty;
- plan: ≥ 1 step, each with a title; steps are renumbered 1..n; the plan title stays (it names
  the run's artifact folder, docs/design.md § Artifact offload).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import BaseModel, Field

from research.errors import InputError
from research.models import Perspective, Plan, Question, Step, Syllabus

LABEL_MAX = 80  # characters of a syllabus question's label

KEY_RE = re.compile(r"^[a-z0-9_]+\.[a-z0-9_]+$")
MAX_KEY_CHARS = 64
MIN_SOURCES, MAX_SOURCES = 1, 20
MAX_QUESTIONS = MAX_PERSPECTIVES = 12
PARTS = ("plan", "syllabus", "perspectives")


class PlanBundle(BaseModel):
    """What the analyst reviews: ``{plan, syllabus, perspectives}`` (all validated)."""

    plan: Plan
    syllabus: Syllabus
    perspectives: list[Perspective] = Field(default_factory=list)


def _blank(v: Any) -> bool:
    return (
        v is None
        or (isinstance(v, float) and math.isnan(v))
        or (isinstance(v, str) and not v.strip())
    )


def _text(v: Any) -> str:
    return "" if _blank(v) else re.sub(r"\s+", " ", str(v)).strip()


def _key_from(label: str) -> str:
    words = "_".join(re.findall(r"[a-z0-9]+", label.lower()))[: MAX_KEY_CHARS - 7].strip("_")
    return f"custom.{words}" if words else ""


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or _blank(v):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return int(f) if f.is_integer() else None


def _rows(value: Any, what: str, errors: list[str]) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        errors.append(f"{what} must be a list of objects.")
        return []
    return value


def check_questions(rows: Any, errors: list[str]) -> list[Question]:
    """Syllabus rows → questions; problems appended to ``errors`` (module doc rules)."""
    out, seen = [], set()
    rows = _rows(rows, "syllabus questions", errors)
    for i, row in enumerate(rows, start=1):
        label, desc = _text(row.get("label")), _text(row.get("description"))
        key = _text(row.get("key")).lower() or _key_from(label)
        where = f"Question {i}" + (f" ({key})" if key else "")
        if not label:
            errors.append(f"{where}: give it a label.")
        elif len(label) > LABEL_MAX:
            errors.append(
                f"{where}: the label has {len(label)} characters; keep it to {LABEL_MAX}."
            )
        if len(desc) > 300:
            errors.append(f"{where}: the description has {len(desc)} characters; keep it to 300.")
        if not key:
            errors.append(f"Question {i}: give it a key like 'clinical.safety'.")
        elif not KEY_RE.fullmatch(key) or len(key) > MAX_KEY_CHARS:
            errors.append(
                f"{where}: the key must be area.name — lower-case letters, digits or _ on each side "
                f"of one dot, at most {MAX_KEY_CHARS} characters (e.g. 'clinical.safety')."
            )
        elif key in seen:
            errors.append(f"{where}: the key is used twice; keys must be unique.")
        seen.add(key)
        n = _int(row.get("min_sources"))
        if n is None or not MIN_SOURCES <= n <= MAX_SOURCES:
            errors.append(
                f"{where}: min_sources must be a whole number from {MIN_SOURCES} to {MAX_SOURCES} "
                f"(got {row.get('min_sources')!r})."
            )
        if label and key and n is not None:
            out.append(Question(key=key, label=label, description=desc, min_sources=max(1, n)))
    if not rows:
        errors.append("The syllabus needs at least one question.")
    elif len(rows) > MAX_QUESTIONS:
        errors.append(f"The syllabus has {len(rows)} questions; keep it to {MAX_QUESTIONS}.")
    return out


def check_perspectives(rows: Any, old: list[Perspective], errors: list[str]) -> list[Perspective]:
    """Perspective rows → perspectives (questions kept from the old persona of the same name)."""
    by_name = {p.name.lower(): p for p in old}
    out, seen = [], set()
    rows = _rows(rows, "perspectives", errors)
    for i, row in enumerate(rows, start=1):
        name, focus = _text(row.get("name")), _text(row.get("focus"))
        where = f"Perspective {i}" + (f" ({name})" if name else "")
        if not name:
            errors.append(f"{where}: give it a name.")
        elif name.lower() in seen:
            errors.append(f"{where}: the name is used twice; names must be unique.")
        if not focus:
            errors.append(f"{where}: give it a focus (what this persona researches).")
        seen.add(name.lower())
        qs = row.get("questions")
        if not isinstance(qs, list):
            prev = by_name.get(name.lower())
            qs = prev.questions if prev and prev.focus == focus else []
        if name and focus:
            out.append(
                Perspective(
                    name=name[:80], focus=focus[:300], questions=[_text(q) for q in qs if _text(q)]
                )
            )
    if not rows:
        errors.append("Keep at least one perspective.")
    elif len(rows) > MAX_PERSPECTIVES:
        errors.append(f"There are {len(rows)} perspectives; keep it to {MAX_PERSPECTIVES}.")
    return out


def check_steps(rows: Any, errors: list[str]) -> list[Step]:
    """Plan step rows → steps numbered 1..n."""
    out: list[Step] = []
    rows = _rows(rows, "plan steps", errors)
    for i, row in enumerate(rows, start=1):
        title = _text(row.get("title"))
        if not title:
            errors.append(f"Step {i}: give it a title.")
            continue
        out.append(
            Step(
                step_id=len(out) + 1,
                title=title[:120],
                description=_text(row.get("description"))[:600],
            )
        )
    if not rows:
        errors.append("The plan needs at least one step.")
    return out


def apply_edit(current: PlanBundle, edit: Any) -> PlanBundle:
    """``current`` with the parts ``edit`` gives replaced, validated (module doc).

    Raises:
        InputError (code ``invalid_plan``): every problem, one per line; nothing is changed.
    """
    errors: list[str] = []
    if not isinstance(edit, dict):
        raise InputError(
            "The plan file must be a JSON object with any of the keys plan, syllabus, perspectives.",
            code="invalid_plan",
        )
    unknown = sorted(set(edit) - set(PARTS))
    if unknown:
        errors.append(f"Unknown keys {', '.join(unknown)}: use plan, syllabus and perspectives.")
    syllabus, plan, persp = current.syllabus, current.plan, current.perspectives
    if "syllabus" in edit:
        raw = edit["syllabus"]
        rows = raw.get("questions") if isinstance(raw, dict) else raw
        syllabus = Syllabus(name=current.syllabus.name, questions=check_questions(rows, errors))
    if "perspectives" in edit:
        persp = check_perspectives(edit["perspectives"], current.perspectives, errors)
    if "plan" in edit:
        raw = edit["plan"]
        rows = raw.get("steps") if isinstance(raw, dict) else raw
        plan = Plan(plan_title=current.plan.plan_title, steps=check_steps(rows, errors))
    if errors:
        raise InputError(
            "The edited plan is not valid:\n- " + "\n- ".join(errors), code="invalid_plan"
        )
    return PlanBundle(plan=plan, syllabus=syllabus, perspectives=persp)


def load_edit(text: str, source: str = "the plan file") -> dict:
    """Parse a JSON plan edit. Raises InputError naming the line and column of a JSON error."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}).",
            code="invalid_plan",
        ) from None
    if not isinstance(data, dict):
        raise InputError(
            f"{source} must hold a JSON object with any of the keys plan, syllabus, perspectives.",
            code="invalid_plan",
        )
    return data


def diff(old: PlanBundle, new: PlanBundle) -> dict:
    """What an edit changed (the ``plan.edited`` event): per part, keys/names ``added``,
    ``removed`` and ``changed``; ``steps`` before → after counts and whether any step changed."""

    def by(items, attr):
        return {getattr(x, attr): x for x in items}

    out: dict[str, Any] = {}
    for part, old_items, new_items, attr in (
        ("questions", old.syllabus.questions, new.syllabus.questions, "key"),
        ("perspectives", old.perspectives, new.perspectives, "name"),
    ):
        a, b = by(old_items, attr), by(new_items, attr)
        out[part] = {
            "added": [k for k in b if k not in a],
            "removed": [k for k in a if k not in b],
            "changed": [k for k in b if k in a and a[k] != b[k]],
        }
    out["steps"] = {
        "before": len(old.plan.steps),
        "after": len(new.plan.steps),
        "changed": old.plan.steps != new.plan.steps,
    }
    out["changed"] = (
        any(
            v["added"] or v["removed"] or v["changed"]
            for k, v in out.items()
            if k in ("questions", "perspectives")
        )
        or out["steps"]["changed"]
    )
    return out
