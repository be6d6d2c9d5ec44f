"""The run limits and choice lists live in ``RunConfig`` (research/models.py) only; the
CLI, the launch form and ``jobs.make_config`` derive theirs from it, so changing the Field or the
Literal there is the only edit needed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

import research.cli.commands as cli
from research import models
from research.planning import syllabus
from research.ui import launch_form

ROOT = Path(__file__).resolve().parents[1]


def _run_option(flag: str):
    sub = next(
        a for a in cli.build_parser()._actions if getattr(a, "choices", None) and "run" in a.choices
    )
    return next(a for a in sub.choices["run"]._actions if flag in a.option_strings)


def test_cli_names_equal_the_model_literals():
    """The CLI shows the engine, mode and depth names of the model; the input gate checks them
    (so ``research run --engine gpt`` gets the gate's message, as the API does)."""
    for flag, field in (("--engine", "engine"), ("--mode", "mode"), ("--depth", "depth")):
        option = _run_option(flag)
        assert option.choices is None, flag
        annotation = models.RunConfig.model_fields[field].annotation
        assert option.metavar == "|".join(get_args(annotation)), flag


def test_bounds_are_the_model_fields():
    for name, rng in (
        ("max_perspectives", models.PERSPECTIVES_RANGE),
        ("max_turns", models.TURNS_RANGE),
    ):
        field = models.RunConfig.model_fields[name]
        ge = next(m.ge for m in field.metadata if hasattr(m, "ge"))
        le = next(m.le for m in field.metadata if hasattr(m, "le"))
        assert rng == (ge, le)
    assert (
        f"{models.PERSPECTIVES_RANGE[0]}–{models.PERSPECTIVES_RANGE[1]}"
        in _run_option("--max-perspectives").help
    )
    assert f"{models.TURNS_RANGE[0]}–{models.TURNS_RANGE[1]}" in _run_option("--max-turns").help
    assert launch_form.MODES == models.MODES
    assert (launch_form.PERSPECTIVES_RANGE, launch_form.TURNS_RANGE) == (
        models.PERSPECTIVES_RANGE,
        models.TURNS_RANGE,
    )


def test_no_restated_limits_in_the_entry_points():
    """No literal 1..12 / 1..10 bounds or engine/mode lists outside models.py."""
    bad = re.compile(
        r"validate_int\([^)]*,\s*\d+,\s*\d+\)|max_value=1[02]\b|\(\"extractive\", \"litellm\"\)"
        r"|\[\"storm\", \"costorm\"\]|\(\"storm\", \"costorm\"\)"
    )
    for rel in (
        "research/cli/commands.py",
        "research/jobs/launch.py",
        "research/ui/launch_form.py",
        "app_pages/launch.py",
    ):
        src = (ROOT / rel).read_text(encoding="utf-8")
        hits = [m.group(0) for m in bad.finditer(src)]
        hits = [h for h in hits if "--limit" not in h]  # not a RunConfig field
        assert hits == [], f"{rel}: {hits}"


def test_templates_are_one_literal():
    """``models.TemplateName`` is the one list: RunConfig, the syllabus module, the CLI and the
    Launch form's labels follow it."""
    assert (
        models.TEMPLATE_CHOICES
        == get_args(models.TemplateName)
        == ("auto", *syllabus.template_names())
    )
    assert syllabus.template_choices() == list(models.TEMPLATE_CHOICES)
    assert set(syllabus.TEMPLATES) == set(models.TEMPLATE_CHOICES) - {"auto"}
    assert tuple(launch_form.TEMPLATE_LABELS) == models.TEMPLATE_CHOICES
    opt = _run_option("--template")
    assert opt.default == "auto" and all(name in opt.help for name in models.TEMPLATE_CHOICES)
    with pytest.raises(ValidationError, match="template"):
        models.RunConfig(topic="T", template="oncology")
