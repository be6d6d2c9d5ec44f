"""Input validation for Co-STORM launch options (``jobs.make_config``, the CLI, the Launch form)."""

from __future__ import annotations

from pydantic import ValidationError

from research.errors import InputError
from research.models import CoStormSettings

MODES = ("storm", "costorm")
LABELS = {
    "experts": "experts (N)",
    "max_node_items": "max node items (K)",
    "moderator_after": "moderator after (L)",
    "alpha": "alpha (α)",
    "query_budget": "query budget",
    "max_turns": "Co-STORM turn cap",
}


def validate_mode(mode: str) -> str:
    """``mode`` if it is 'storm' or 'costorm'. Raises InputError naming the valid modes."""
    if mode not in MODES:
        raise InputError(f"Unknown mode {str(mode)[:30]!r}: use 'storm' or 'costorm'.")
    return mode


def validate_costorm(values: dict | CoStormSettings | None) -> CoStormSettings:
    """Co-STORM settings from a dict of field → value (None values = defaults).

    Raises:
        InputError: an unknown field or a value out of range, saying which and the allowed range.
    """
    if isinstance(values, CoStormSettings):
        return values
    given = {k: v for k, v in (values or {}).items() if v is not None}
    unknown = set(given) - set(CoStormSettings.model_fields)
    if unknown:
        raise InputError(
            f"Unknown Co-STORM setting(s) {sorted(unknown)}; use {sorted(CoStormSettings.model_fields)}."
        )
    try:
        return CoStormSettings(**given)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err.get("loc") else "?"
        info = CoStormSettings.model_fields.get(field)
        meta = info.metadata if info else []
        lo = next((m.ge for m in meta if hasattr(m, "ge")), None)
        hi = next((m.le for m in meta if hasattr(m, "le")), None)
        raise InputError(
            f"Co-STORM {LABELS.get(field, field)}: {err['msg'].lower()} (got {given.get(field)!r}; "
            f"allowed range {lo}–{hi})."
        ) from None
