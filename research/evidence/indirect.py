"""Each arm of a comparison on its own, for a report whose sources hold no trial of one arm
against the other.

A question "A versus B" is answered by trials that compare A with B (``passages.compares``:
``planning.question_roles.BOTH_ARMS``). When the run found none, the report says so, and what an analyst
can still weigh is what each arm did in its own trials, against placebo, another treatment or
nothing: an indirect comparison through other comparators (Bucher et al., J Clin Epidemiol
1997; docs/evidence.md § Indirect evidence). The report labels it as such and never counts it
as an answer (the question stays open).

``arm_results(vectors, topic, question, results) → list[ArmResult]``: per arm, in the arms'
order, up to ``MAX_PER_ARM`` sources whose title names that arm and not the other, that are
about what the intervention is for (``frame_match.names_target``) in the question's setting
(``passages.COMPARES_SETTING``), report results (no protocol, no registration without
results) and study no added treatment (``comparators.studies_another``); from each, its best
passage for ``question`` (the judgement of ``passages.document_evidence``) that names the arm
and states a result (``findings.states_result``) of the question's family: a harm for a
question on harms (``planning.question_roles.HARMS``), anything but a harm alone for the others
(``findings.outcome_family``).
"""

from __future__ import annotations

from dataclasses import dataclass

from research.evidence.passages import (
    COMPARES_SETTING,
    document_evidence,
    family_of,
    published_protocol,
    rank_for,
    registration_only,
    result_text,
)
from research.models import EvidencePassage, Question, SearchResult
from research.planning.question_roles import HARMS
from research.text.comparators import studies_another
from research.text.entities import drug_names
from research.text.findings import states_result
from research.text.frame import QuestionFrame, frame_question
from research.text.frame_match import arms_of, names_target, setting_share
from research.text.populations import contradicts_setting
from research.text.vectors import Vectors

MAX_PER_ARM = 2  # sources quoted for each arm: the strongest trials, not a list of all


@dataclass(frozen=True)
class ArmResult:
    """One arm's result in a source of its own: ``arm`` (index into the frame's arms), the
    ``result`` it came from and the ``passage`` quoted (its ``source_id`` empty: the caller
    saves the source)."""

    arm: int
    result: SearchResult
    passage: EvidencePassage


def one_arm(result: SearchResult, topic: str) -> int | None:
    """The index of the one arm of the comparison ``topic`` that ``result`` studies (module
    doc: its title names that arm and not the other; the target, the setting, results), else
    None."""
    return _one_arm(result, frame_question(topic))


def _one_arm(result: SearchResult, frame: QuestionFrame) -> int | None:
    if len(frame.arms) < 2 or published_protocol(result) or registration_only(result):
        return None
    title = result.title or ""
    named = arms_of(title, frame, loose=True)
    if sum(named) != 1:
        return None
    whole = f"{title}\n{result_text(result)}"
    if not names_target(whole, frame) or setting_share(whole, frame) < COMPARES_SETTING:
        return None
    if studies_another(title, frame) or contradicts_setting(title, frame):
        return None
    return named.index(True)


def arm_results(
    vectors: Vectors,
    topic: str,
    question: Question,
    results: list[SearchResult],
    taken: frozenset[str] = frozenset(),
) -> list[ArmResult]:
    """Per arm (module doc), the best passages on ``question`` of the sources that study that
    arm alone, best first, none of them in ``taken`` (passages another question's section
    quotes already); [] when ``topic`` is not a comparison. Repeated URLs count once."""
    frame = frame_question(topic)
    drugs = [d.lower() for d in drug_names(topic)]
    found: dict[int, list[tuple[float, ArmResult]]] = {}
    seen: set[str] = set()
    for r in results:
        if r.url in seen:
            continue
        seen.add(r.url)
        arm = _one_arm(r, frame)
        if arm is None:
            continue
        hit = document_evidence(vectors, [question], topic, r.title, result_text(r), drugs)
        stated = [
            p
            for p in hit.get(question.key, [])
            if p.passage not in taken
            and arms_of(p.passage, frame)[arm]
            and states_result(p.passage)
            and _fits(question.key, family_of(p))
        ]
        if stated:
            best = stated[0]  # passages come best first (``passages.rank_for``)
            rank = rank_for(question.key, best.score, best.passage)
            found.setdefault(arm, []).append((rank, ArmResult(arm, r, best)))
    out: list[ArmResult] = []
    for arm in sorted(found):
        ranked = sorted(found[arm], key=lambda x: (-x[0], x[1].result.url))
        out += [a for _, a in ranked[:MAX_PER_ARM]]
    return out


def _fits(key: str, family: str) -> bool:
    """A passage of outcome ``family`` answers question ``key`` in the arms' own trials: a harm
    (or both) for a question on harms, anything but a harm alone for the others."""
    return family in ("harm", "both") if key in HARMS else family != "harm"
