"""Reply sanitising of the litellm engines (``LiteLLMEngine`` and ``LiteLLMCoStorm``): what is
kept of a valid reply before it becomes the step's output.

- ``CITE_RE``: a citation marker ``[n]`` (group 1 = n); ``_keep_cites``: markers outside the
  material's numbers dropped, spaces tidied;
- ``cited_only``: a ``TextOutput`` reply model that makes ``call_structured`` re-ask once when the
  text cites a number outside the material, or nothing;
- ``_assignment``: a reply's question assignment made whole (per result: valid syllabus keys,
  deduplicated, and a ≤ 300-character excerpt);
- ``_outline``: an outline without boilerplate headings, ≤ 10 sections (InvalidOutput when none
  is left).
"""

from __future__ import annotations

import re

from pydantic import field_validator

from research.citations import LOCAL_RE
from research.engines.base import AssignOutput, TextOutput
from research.llm.errors import InvalidOutput
from research.models import Outline

CITE_RE = LOCAL_RE  # [n], group 1 = n


def _keep_cites(text: str, valid: set[int]) -> str:
    """Drop ``[n]`` markers whose n is not in ``valid``; tidy spaces."""
    text = CITE_RE.sub(lambda m: m.group(0) if int(m.group(1)) in valid else "", text)
    return re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", text)).strip()


def cited_only(valid: set[int]) -> type[TextOutput]:
    """A ``TextOutput`` reply model whose validation fails (so ``call_structured`` re-asks once)
    when the text cites a number outside ``valid`` or cites nothing while ``valid`` is non-empty."""
    allowed = sorted(valid)

    class SectionText(TextOutput):
        @field_validator("text")
        @classmethod
        def _cites_only_material(cls, text: str) -> str:
            used = {int(n) for n in CITE_RE.findall(text)}
            bad = sorted(used - valid)
            if bad:
                raise ValueError(
                    f"the text cites {bad}, which are not snippet numbers; cite only {allowed}"
                )
            if allowed and not used:
                raise ValueError(
                    f"the text cites nothing; support each sentence with a snippet number from {allowed}"
                )
            return text

    return SectionText


def _assignment(
    relevant: list[list[str]], excerpts: list[str], results: list, keys: set[str]
) -> AssignOutput:
    """A reply's assignment made whole: per result, valid syllabus keys (deduplicated) and a
    ≤ 300-char excerpt (the result's snippet where the reply has none)."""
    n = len(results)
    rel = [[k for k in dict.fromkeys(ks) if k in keys] for ks in relevant][:n]
    rel += [[] for _ in range(n - len(rel))]
    exc = [str(x)[:300] for x in excerpts][:n]
    exc += [(" ".join(r.snippets) or r.title)[:300] for r in results[len(exc) :]]
    return AssignOutput(relevant_questions=rel, key_excerpts=exc)


def _outline(o: Outline) -> Outline:
    bad = {"references", "see also", "introduction", "external links"}
    sections = [s for s in o.sections if s.heading.strip() and s.heading.strip().lower() not in bad]
    if not sections:
        raise InvalidOutput(
            "outline: no usable section (each needs a heading other than "
            "References, See also, Introduction or External links)"
        )
    return Outline(sections=sections[:10])
