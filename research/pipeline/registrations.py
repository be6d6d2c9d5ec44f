"""The trials a run found registered without results: what each one tests and measures first.

A trial's registry record with no results answers no question on what was found
(``evidence.passages.registration_only``), and no section quotes a protocol's plans ("patients
will be randomized …": ``material.clean_sentences``). Which trials are under way is still what an
analyst asks when the results are open, so the report ends with the section ``HEADING``: per
registration on the question, the sentences of its record that say how participants are
allocated or treated and what the trial measures first. These are the columns of a systematic
review's table of ongoing studies (Cochrane Handbook for Systematic Reviews of Interventions,
"Characteristics of ongoing studies": methods, participants, interventions, outcomes).
"""

from __future__ import annotations

import re

from research.evidence.passages import REGISTRY, has_results, on_question_docs
from research.models import SourceRecord
from research.pipeline.material import near_duplicates
from research.pipeline.sections import DUPLICATE_SIM
from research.text import ensure_period, is_whole, norm_key, split_sentences
from research.text.frame import frame_question
from research.text.frame_match import setting_share
from research.text.vectors import Vectors

HEADING = "Registered trials without results"
MAX_TRIALS = 6  # registrations listed at most (in the order the run saved them)
# how participants are allocated or what they are given
_ALLOCATION = re.compile(
    r"\brandomi[sz]ed\b|\brandomly\s+assigned\b|\ballocated\b|\bassigned\s+to\b|"
    r"\bwill\s+(?:receive|be\s+given|be\s+treated|be\s+infused|be\s+administered)\b",
    re.I,
)
# what the trial measures first
_OUTCOME = re.compile(
    r"\bprimary\s+(?:outcomes?|objectives?|end\s?-?points?|aims?|goals?)\b|"
    r"\bprimary\s+(?:efficacy|safety)\s+(?:outcomes?|end\s?-?points?)\b",
    re.I,
)


_HEADER_FIELD = re.compile(r"^\s*(?:Official\s+title|Conditions?)\s*:", re.I)
_OUTCOME_FIELD = re.compile(r"^\s*Primary\s+outcomes?\s*:\s*\S", re.I)
OUTCOME_FIELD_WORDS = 60  # a longer list of outcomes is a protocol's table, not a sentence


def registry_sources(sources: list[SourceRecord]) -> list[SourceRecord]:
    """The run's saved trial registry records, in saved order."""
    return [s for s in sources if s.source_type == REGISTRY]


def header(title: str, text: str) -> str:
    """What a registration says it is about: its title and its "Official title:" and
    "Conditions:" fields (one per line in the record's ``text``)."""
    fields = [line for line in (text or "").splitlines() if _HEADER_FIELD.match(line)]
    return "\n".join([title, *fields])


def on_question(
    vectors: Vectors, topic: str, records: list[SourceRecord], texts: dict[str, str]
) -> list[tuple[str, str, str]]:
    """``(source id, registry id, record text)`` of the ``records`` that may be evidence on the
    question (the run's one gate, ``passages.on_question_docs``, on title and text) and, for a
    question with a setting, whose ``header`` names a word of it (``frame_match.setting_share``): a
    record's long description can name a question's population and outcome in passing (a
    pandemic-stress trial's "anxiety, depression"), its titles and conditions say what it
    studies. At most ``MAX_TRIALS``."""
    docs = [(r.title or r.url, texts.get(r.source_id, "")) for r in records]
    keep = on_question_docs(vectors, topic, docs)
    frame = frame_question(topic)
    kept = [
        (r.source_id, r.external_id, t)
        for r, (title, t), k in zip(records, docs, keep, strict=True)
        if k and (not frame.framed or setting_share(header(title, t), frame) > 0)
    ]
    return kept[:MAX_TRIALS]


def trial_sentences(text: str) -> list[str]:
    """Up to two whole sentences of a registration's ``text``, in text order: the first that says
    how participants are allocated or treated, and the first that names its primary outcome or
    objective (else the record's "Primary outcomes:" field, up to ``OUTCOME_FIELD_WORDS``
    words); [] when it has neither, or when the record has results (a "Results:" line: its
    findings are evidence, quoted in the sections)."""
    if has_results(text):
        return []
    # a record's fields are one per line; split_sentences ends a sentence at a line break and
    # drops the field's label ("Summary: ")
    sents = [s for s in split_sentences(text or "") if is_whole(s)]
    # the registry's own field of primary outcomes when no sentence names them
    listed = [
        ensure_period(line.strip())
        for line in (text or "").splitlines()
        if _OUTCOME_FIELD.match(line) and len(line.split()) <= OUTCOME_FIELD_WORDS
    ]
    picks: list[str] = []
    for pattern, fallback in ((_ALLOCATION, []), (_OUTCOME, listed)):
        hit = next((s for s in sents if pattern.search(s) and s not in picks), None)
        if hit or fallback:
            picks.append(hit or fallback[0])
    order = sents + listed
    return sorted(picks, key=order.index)


def section_text(trials: list[tuple[str, str, str]], vectors: Vectors | None = None) -> str:
    """Draft text (``[@source_id]`` citations) of the section: for each ``(source_id, registry
    id, record text)``, one paragraph, "NCT01234567: " and its ``trial_sentences``; "" when no
    record has any. A sentence another record already said (the same words, or with
    ``vectors`` cosine ≥ ``sections.DUPLICATE_SIM``, the report's own near-duplicate bar) is
    left out, so the count the section opens with is the paragraphs the report keeps."""
    found = [(sid, ext, trial_sentences(text)) for sid, ext, text in trials]
    flat = [s for _, _, sents in found for s in sents]
    repeated = iter(
        near_duplicates(vectors, flat, DUPLICATE_SIM) if vectors and flat else [False] * len(flat)
    )
    paras = []
    seen: set[str] = set()  # two records of one trial (a pilot and its main study) say it once
    for sid, ext, sents in found:
        kept = [s for s in sents if not next(repeated) and norm_key(s) not in seen]
        seen.update(norm_key(s) for s in kept)
        if kept:
            quoted = " ".join(f"{s.rstrip()}[@{sid}]" for s in kept)
            paras.append(f"{ext}: {quoted}" if ext else quoted)
    if not paras:
        return ""
    n = len(paras)
    intro = (
        f"The sources include {n} registered {'trial' if n == 1 else 'trials'} on the question "
        "with no results yet; what each allocates and measures first, as registered:"
    )
    return "\n\n".join([intro, *paras])
