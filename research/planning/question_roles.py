"""The roles syllabus questions play in a run, by question key: which are the ones a report
exists to answer (``PRIMARY``), which ask what harm a treatment does (``HARMS``), which only a
source on both arms of a comparison answers (``BOTH_ARMS``, ``ON_BOTH_ARMS``), which are asked of
the sources that answer the main ones (``FROM_MAIN``), which a definition answers
(``DEFINED_BY``), and how much a sentence of the other family of outcome keeps under each
(``outcome_fit``). The templates themselves are ``research.planning.kinds``.
"""

from __future__ import annotations

# Questions asked of the studies that answer the main ones (``PRIMARY``, ``HARMS``): who benefits
# more is a subgroup of a trial of the question (``pipeline.answers.fill``).
FROM_MAIN = frozenset({"subgroups.benefit"})

# Questions only a source that names both arms of a comparison can answer.
BOTH_ARMS = frozenset({"efficacy.comparison", "harms.comparison", "qol.adherence"})
# ... and what guidelines and reviews say on A versus B: a source on one arm only (another
# setting's trial of radiotherapy under "can radiotherapy be omitted") counts for none of them
# (``research.evidence.passages``), though it is no candidate for an arm's own result
# (``BOTH_ARMS``: ``pipeline.indirect``)
ON_BOTH_ARMS = BOTH_ARMS | {"guidance.open"}

# The questions a report on a treatment exists to answer (does it work, and how well): their
# sections get ``PRIMARY_WEIGHT`` times the sentences of the others (``pipeline.answers``), so a
# trial's second result can be quoted beside its first.
PRIMARY = frozenset(
    {"efficacy.comparison", "efficacy.intervention", "accuracy.outcomes", "clinical.efficacy"}
)
PRIMARY_WEIGHT = 2
# The question a sentence that says what the topic is answers ("X was an American drummer …",
# ``research.text.definitions``): the evidence judgement scores it there by its form, and the
# lead of a report on a person, an event or a general topic opens with it.
DEFINED_BY = frozenset({"background.overview"})

# The questions that ask what harm a treatment does: a sentence that reports only a benefit
# ("overall survival did not differ") does not answer them, as a sentence that reports only a harm
# does not answer the primary questions (``research.evidence.judge``, ``findings.outcome_family``).
HARMS = frozenset(
    {"harms.comparison", "harms.intervention", "risks.complications", "clinical.safety"}
)
# A comparison's primary outcomes are named (survival, recurrence, response, accuracy: its
# question's description): a result that names none of them ranks below one that does.
NAMED_OUTCOMES = frozenset({"efficacy.comparison"})
MISFIT_FACTOR = 0.5  # what a passage of the other family of outcome only keeps (``outcome_fit``)
# what a result naming no outcome of benefit keeps under a question that names its outcomes:
# "more fractures and fewer thromboses" reads as a result by its cues alone
UNNAMED_FACTOR = 0.7
# The primary questions whose answer is a benefit whatever the question: an intervention's or a
# device's may be a harm avoided ("fewer wound complications" answers a question on preventing
# them), so a harm's words do not mark their sentences as off the question.
BENEFIT_ONLY = frozenset({"efficacy.comparison", "clinical.efficacy"})
_MISFIT = {**{k: "harm" for k in BENEFIT_ONLY}, **{k: "benefit" for k in HARMS}}


def outcome_fit(key: str, family: str) -> float:
    """What a sentence of outcome ``family`` (``research.text.findings.outcome_family``: computed
    once per sentence by the caller) keeps of its evidence score or lead weight for question
    ``key``: ``MISFIT_FACTOR`` when it reports only the other family (a harm for a comparison's
    or a drug's efficacy question, ``BENEFIT_ONLY``; a benefit for a question on harms,
    ``HARMS``), ``UNNAMED_FACTOR`` when it names no outcome of benefit under a question that
    names its outcomes (``NAMED_OUTCOMES``), else 1."""
    if family and family == _MISFIT.get(key):
        return MISFIT_FACTOR
    if key in NAMED_OUTCOMES and family not in ("benefit", "both"):
        return UNNAMED_FACTOR
    return 1.0


# The question a comparison that leaves a treatment out ("X versus no X") does not ask
NO_SWITCH = frozenset({"sequencing.switching"})
