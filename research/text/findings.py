"""How much a sentence states a finding: the weight a report gives it when it chooses what to quote.

A report that answers a question quotes what the sources *found* — "Overall accuracy of SLNB was
93.0%.", "296 people died." — not how a study was run ("This parallel, non-blinded, randomised
study was approved by the National Research Ethics Service."), who took part ("In group one,
mean age of patients was 54.1"), or a web page's furniture ("Archived from the original on 11 June
2023."). The evidence judgement (``research.evidence.judge``) decides *whether* a passage answers
a syllabus question; this weight decides *which* of the passages that answer it a report quotes
first and which a source keeps.

``finding_weight(sentence) → [FURNITURE, 1]``:

* web furniture (archive notes, tweet links, bylines, navigation runs) and questions → ``FURNITURE``;
* a sentence about the participants or the conduct of a study that states no result (baseline,
  age, withdrawals, ethics approval, randomisation and allocation, what the control group
  received, CONSORT) → ``CONDUCT`` — unless it sets a quantity against another ("12% vs 25%");
* a claim reported as known before the study ("is well known to be reduced by", "studies have
  shown") → ``PLAIN``, unless it sets a quantity against another;
* otherwise ``PLAIN + (1 − PLAIN) · min(1, signals / SIGNALS_FULL)``, where the signals are: a
  quantity (a percentage, a ratio, a p-value, a count of people or events, a dose), a comparison
  ("vs", "compared with", "than", "between the two arms"), and a result verb or outcome statement
  ("reduced", "improved", "no significant difference", "died", "was arrested"), each counted once.

Among the results, ``contrasts`` marks the one a trial's abstract leads with: each group's figure
set against the other's, or an effect estimate ("headache in 7% vs 25%", "reduced by 33% in
one arm and by 80% in the other", "HR 0.81"): CONSORT item 17a asks for exactly that ("for each
primary and secondary outcome, results for each group, and the estimated effect size").
``quote_rank`` ranks a result that does not contrast ``CONTRAST_FLOOR`` lower.

No word list names a particular medicine, organ, event or field: the cues are those of any
report of a result (CONSORT's "results" items; Schulz et al., BMJ 2010;340:c332) or of a fact.
"""

from __future__ import annotations

import re

from research.text.sentences import STUDY_DESIGN

# A weight multiplies the evidence score (quote_rank): with these, a result scored 0.45 by the
# judgement is quoted before a sentence on the study's end points scored 0.9.
FURNITURE = 0.1  # what a page's furniture keeps: quoted only when nothing else is left
CONDUCT = 0.3  # a sentence on how a study was run or who took part, with no result
PLAIN = 0.4  # a sentence with no signal of a finding: still quotable, after those that state one
SIGNALS_FULL = 2  # signals at which a sentence weighs fully
# What the weight does to a closeness score where closeness still leads (a section's sentences,
# an expert's answer): × (ORDER_FLOOR + (1 − ORDER_FLOOR) × weight), so a result at 0.8 of the
# best closeness comes before a study's conduct at the best.
ORDER_FLOOR = 0.5
# A result that gives no group's figure against another's ranks this much of one that does: the
# sentence with "7% vs 25%" is quoted before "the intervention was effective" of the same trial.
CONTRAST_FLOOR = 0.8

_FURNITURE = re.compile(
    r"\barchived\s+from\b|\bpic\.twitter\b|\bretrieved\s+(?:on\s+)?\d|\bhttps?://|\bwww\.|"
    r"\b(?:click|tap)\s+here\b|\bcookies?\b|\ball\s+rights\s+reserved\b|\bnewsletter\b|"
    r"\b(?:live\s+updates?|latest\s+news|photos?\s+about|videos?\s+about)\b|"
    r"\b(?:read|see)\s+(?:more|also)\b|\bfollow\s+us\b|@\w+|"
    # a page's note on its own table: "Note: In all results below, …", "In the following table"
    r"^note\s*:|\b(?:in\s+)?the\s+(?:following|table|list)\s+(?:table|below|above)\b|"
    r"\b(?:table|list)\s+(?:below|above)\b|\ball\s+results\s+(?:below|above)\b|"
    # a reference list's entry: "Doe, J.; Roe, Richard (10 June 2023)."
    r"^(?-i:[A-Z][\w'’-]+,\s+[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)?\s*;)",
    re.I,
)
# A sentence that opens with a bare pronoun points back at what the sentence before it named
# ("They also stated …", "It was …"): quoted alone, it says nothing of whom. A person's "He"
# or "She" is the topic itself and stays.
POINTS_BACK = re.compile(
    r"^(?:They|Their|It|Its|These|Those|This|That|Such)\s+(?:\w+ly\s+)?"
    r"(?:is|was|are|were|has|have|had|also|said|says|say|stated|will|would|could|can|may|"
    r"might|did|does|do|led|became|remains?|remained|included?|includes|comprised?)\b|"
    # ... or with a connective that sets it against the sentence before ("In contrast, no
    # improvement was seen in Group 2")
    r"^(?:In\s+contrast|By\s+contrast|Conversely|Similarly|Likewise|On\s+the\s+other\s+hand)\b|"
    # ... or that counts what is left after it ("No other significant effects were observed")
    r"^No\s+other\b"
)
POINTS_BACK_FACTOR = 0.6  # what such a sentence keeps of its rank among a source's passages
_CONDUCT = re.compile(
    r"\b(?:mean|median|average)\s+age\b|\branged\s+in\s+age\b|\b(?:were|was)\s+aged\b|"
    r"\bbaseline\b|\bdemographic|\bwithdr[eaw]w?n?\b|"
    r"\bdropped\s+out\b|\blost\s+to\s+follow-?up\b|\bethic(?:s|al)\b|\bapproved\s+by\s+the\b|"
    r"\binformed\s+consent\b|\binclusion\s+criteria\b|\bexclusion\s+criteria\b|"
    r"\b(?:were|was)\s+(?:excluded|included|enrolled|recruited|screened|allocated|stratified|"
    r"prospectively\s+randomi[sz]ed|randomi[sz]ed|randomly\s+assigned|put\s+into)\b|"
    r"\b(?:were|was)\s+followed[\s-]+up\b|\b(?:were|was)\s+monitored\s+for\b|"
    r"\b(?:were|was)\s+available\s+for\s+(?:long[\s-]+term\s+)?(?:follow[\s-]*up|analysis)\b|"
    # who agreed to take part, and how many a trial took in
    r"\bconsent(?:ed|ing|s)?\s+to\s+(?:participate|participation|contact|take\s+part)\b|"
    r"\bprovided\s+consent\b|\b(?:trial|study)\s+included\s+\d|\bstudy\s+participation\b|"
    # who a record review found, and on how many of them material was kept
    r"\b(?:patients|participants|women|men|subjects|cases)\s+were\s+identified\b|"
    r"\b(?:were|was)\s+available\s+(?:on|from|for)\s+\d[\d,]*\s+(?:of|patients|participants)\b|"
    r"\bwe\s+(?:show|present|report|describe)\s+(?:the\s+)?data\s+(?:from|of|on)\s+\d|"
    r"\b(?:were|was)\s+analy[sz]ed\s+in\s+\d|\b(?:were|was)\s+(?:evaluable|assessable)\b|"
    r"\b(?:randomi[sz]ed|randomly\s+assigned|enrolled|recruited)\s+\d[\d,]*\s+[a-z]|"
    r"\bgroups?\s+(?:are|were)\s+comparable\b|"
    r"\brandomi[sz]ation\b|\balloca(?:ted|tion)\b|\bCONSORT\b|\brandom\s+assignment\b|"
    r"\beligible\s+(?:patients|participants|women|men|subjects)\s+(?:were|had)\b|"
    r"\b(?:were|was)\s+(?:un)?masked\b|\bmasked\s+to\b|"
    r"\bwe\s+(?:randomly\s+)?(?:assigned|allocated|randomi[sz]ed|enrolled|recruited|accrued)\b|"
    # ... or the trial did (its allocation: ``_ALLOCATED``)
    r"\bthe\s+study\s+(?:enrolled|recruited)\b|"
    r"\b(?:control|intervention|comparison|study|experimental)\s+(?:group|arm)\s+(?:also\s+)?"
    r"(?:received|did\s+not\s+(?:receive|undergo)|underwent|was\s+given)\b|"
    r"\b(?:study|trial)\s+was\s+(?:performed|conducted|carried\s+out|designed)\b|"
    r"\bthis\s+group\s+(?:also\s+)?received\b|"
    r"\b(?:study|trial)\s+(?:had\s+an?\s+[\w-]+\s+)?design\b|\bdesign\s+of\s+the\s+(?:study|trial)\b|"
    r"\b(?:analys[ie]s|outcomes?|end\s?-?points?)\s+(?:assessed\s+)?included\b",
    re.I,
)
# An allocation: the study or its authors assigned participants to the arms (CONSORT item 8)
_ALLOCATED = re.compile(
    r"\b(?:the\s+study|we|(?:were|was))\s+(?:randomly\s+)?(?:assigned|allocated|randomi[sz]ed)\b",
    re.I,
)
# The statistical methods (CONSORT item 12): a sentence naming a model or a test with no
# p-value and no pair of percentages says how results were computed, not what they were.
_STATS_METHOD = re.compile(
    r"\b(?:Cox(?:[- ]regression)?|log-?rank|Kaplan-Meier|proportional[- ]hazards?|"
    r"logistic\s+regression|mixed[- ]effects?|generali[sz]ed\s+estimating|Fisher'?s\s+exact|"
    r"chi-?squared?|Wilcoxon|Mann-Whitney|ANOVA|t-tests?)\b",
    re.I,
)
# An effect estimate with its value ("HR 0.60", "hazard ratio, 0.82"), not only its name.
_ESTIMATE_VALUE = re.compile(
    r"(?:\b(?:a?HR|a?OR|RR)\b|(?i:hazard\s+ratio|odds\s+ratio|relative\s+risk))[^.;\d]{0,20}\d*\.\d"
)
_BALANCE = re.compile(
    r"\bthis\s+(?:study|trial|paper|article|report)\s+(?:reports|describes|presents|examines|"
    r"evaluates|investigates|assesses)\b|"
    r"(?<!from )\bbaseline\s+(?:[a-z]+\s+)?(?:characteristics|demographics|features|variables|data)\b|"
    r"\b(?:mean|median|average)\s+age\s+(?:of|was|were)?\s*\d[^.;]*\b(?:vs\.?|versus)\b|"
    r"\b(?:conducted|performed|carried\s+out|undertook)\s+an?\s+(?:[\w-]+,?\s+){0,5}"
    r"(?:study|trial|analysis|review|survey)\b|\b(?:trial|study)\s+(?:was\s+)?conducted\s+at\b|"
    r"\b(?:were|was)\s+compared\s+in\s+an?\b|\b(?:arms|groups|cohorts)\s+were\s+(?:well[- ])?balanced\b|"
    r"^(?:(?:final|long-term|interim|first)\s+)?(?:results|findings)\s+(?:of|from)\s+(?:the|an?)\b"
    r"[^.;:]{0,80}\.?$|"
    # a design named with no verb: "A multicenter randomized placebo-controlled phase III trial."
    r"^(?:an?|the)\s+(?:(?:multi-?cent(?:er|re)|single-cent(?:er|re)|international|national|"
    r"open-label|(?:double|single)-blind(?:ed)?|blinded|randomi[sz]ed|controlled|prospective|"
    r"placebo-controlled|retrospective|pilot|feasibility|phase\s+(?:[IV]+|\d)[ab]?|parallel-group|"
    r"non-?inferiority|crossover|cross-over|cluster|pragmatic|observational|cohort|,)\s*)+"
    r"(?:clinical\s+)?(?:trial|study)\.?$",
    re.I,
)
# A claim the source reports as known before it (the introduction's "it is well known", "studies
# have shown"), not as its own finding: the study's result is quoted before it (argumentative
# zoning's background zone, Teufel & Moens, Computational Linguistics 2002;28(4):409-445).
_BACKGROUND = re.compile(
    r"\b(?:is|are|was|were|has\s+been|have\s+been)\s+(?:well|widely|generally|commonly)\s+"
    r"(?:known|recogni[sz]ed|established|accepted|documented|described)\b|"
    r"\b(?:has|have)\s+(?:previously\s+)?been\s+(?:shown|reported|demonstrated|suggested|"
    r"proposed|described)\b|\b(?:previous|prior|earlier|numerous|several|many|other)\s+"
    r"(?:studies|trials|reports|authors|investigators)\b|\bstudies\s+have\s+(?:shown|"
    r"reported|demonstrated|suggested|found)\b|\bit\s+is\s+(?:known|recogni[sz]ed|accepted)\b|"
    r"\b(?:is|are)\s+known\s+to\b",
    re.I,
)
# A capitalised name of a group or a study ("the Northern Surgical Adjuvant Study Group", "the
# Health Outcomes and Reduced Incidence … Fracture Trial"): its words name who ran the study.
NAMED = re.compile(
    r"\b(?:[A-Z][\w-]*\s+(?:(?:and|of|for|with|in|or|&)\s+)?){1,12}(?:Project|Group|Study|Trial|"
    r"Program|Programme|Network|Consortium|Institute|Society|Association|Alliance|Foundation|"
    r"Organi[sz]ation|Collaborat\w+|Cooperative)\b"
)
_PERCENT = re.compile(r"\d+(?:\.\d+)?\s?%")
_P_VALUE = re.compile(r"\b[pP]\s?[<=>≤]\s?0?\.\d")
_QUANTITY = re.compile(
    rf"{_PERCENT.pattern}|{_P_VALUE.pattern}|\b(?:HR|OR|RR|CI|IQR)\b|"
    r"\bhazard\s+ratio\b|\bodds\s+ratio\b|\brelative\s+risk\b|"
    r"(?<!-)\b\d[\d,.]*\s+(?:of\s+\d[\d,.]*\s+)?(?:people|persons|patients|women|men|children|cases|"
    r"deaths?|events?|participants|subjects|times|fold)\b|\b\d+(?:\.\d+)?\s?(?:mg|g|Gy|ml|mmHg)\b|"
    r"\b(?:[1-9]\d*(?:\.\d+)?)\s?-?(?:point|fold|times)\b"
)
_COMPARISON = re.compile(
    r"\bvs\.?\b|\bversus\b|\bcompared\s+(?:with|to)\b|\bthan\b|\bbetween\s+the\s+(?:two\s+)?"
    r"(?:arms|groups)\b|\bin\s+(?:both|either)\s+(?:arms?|groups?)\b|\brelative\s+to\b",
    re.I,
)
_RESULT = re.compile(
    r"\b(?:improv|reduc|increas|decreas|prolong|lower|rais|prevent|relieved?|cut|halv|doubl|"
    r"shorten|extend|favou?r)(?:ed|es|ing|s)?\b|\bsignifican(?:t|tly|ce)\b|\bno\s+(?:significant\s+)?"
    r"(?:difference|differences|benefit|effect|increase|reduction)\b|\bdid\s+not\s+(?:differ|"
    r"improve|reduce|increase|change|affect|predict)\b|\bnot\s+(?:statistically\s+|significantly\s+)?"
    r"different\b|\b(?:was|were)\s+(?:observed|found|"
    r"associated|superior|inferior|similar|higher|lower|better|worse)\b|"
    r"\b(?:died|killed|injured|arrested|charged|convicted|announced|won|awarded|elected|"
    r"founded|collapsed|caused|resulted\s+in|led\s+to)\b",
    re.I,
)

# The figures of a result (a number not part of a word: "7", "25.4", "0.81"), and what sets them
# against each other besides a comparison: "respectively", "whereas", two arms or groups named,
# an effect estimate.
_FIGURE = re.compile(r"(?<![\w.\-/])(?:\d+(?:[.,·]\d+)?|\.\d+)(?![\w/])")
_YEAR = re.compile(r"(?:19|20)\d\d")
_RESPECTIVELY = re.compile(
    r"\brespectively\b|\bwhereas\b|\bwhile\b|\bin\s+contrast\b|\bagainst\b", re.I
)
_GROUP = re.compile(r"\b(?:arms?|groups?|cohorts?|controls?|placebo)\b", re.I)
_ESTIMATE = re.compile(
    r"(?-i:\b(?:HR|OR|RR|aHR|aOR)\b)|\bhazard\s+ratio\b|\bodds\s+ratio\b|\b(?:relative|"
    r"absolute)\s+risk\b|\b95\s?%\s?(?:CI|confidence)\b",
    re.I,
)

# Every signal of a finding as one pattern: what a result's answer looks like in any trial report
# (the judgement reads it as the answer cues of the questions that ask for results).
RESULT_CUES = re.compile(f"(?-i:{_QUANTITY.pattern})|{_COMPARISON.pattern}|{_RESULT.pattern}", re.I)

# What a report of a result names when it speaks of benefit or of harm (CONSORT items 17 and 19:
# outcomes and harms): the families of outcome, not any particular organ or medicine.
_BENEFIT = re.compile(
    r"\b(?:survival|surviv\w+|recurren\w+|relapse\w*|remission|progression|mortality|"
    r"efficacy|effective(?:ness)?|accuracy|sensitivity|specificity|detection\s+rate|"
    r"false[- ]negative|response\s+rate|(?:complete|partial|objective|pathologic\w*)\s+response|"
    r"(?:local|disease|symptom)\s+control|cure[ds]?|event-free|disease-free|deaths?|died|"
    r"hazard\s+ratio|risk\s+(?:of|for)\s+(?:an?\s+)?(?:event|death|recurrence|relapse)|"
    r"(?-i:DFS|OS|PFS|EFS|RFS|DMFS|ORR|pCR|HR))\b",
    re.I,
)
_HARM = re.compile(
    r"\b(?:adverse|toxicit\w*|toxic|side[- ]effects?|complications?|morbidity|harms?|"
    r"safety|tolerab\w+|tolerated|grade\s*(?:≥\s*)?[2-5]\b|serious|"
    # stopping for harm, not the end of an earlier treatment ("since the discontinuation of prior X")
    r"discontinu\w+(?!\s+of\s+(?:the\s+)?(?:prior|previous|earlier))|"
    r"hospitali[sz]\w+|pain|infections?|swelling|numbness|sensory\s+loss|o?edema)\b",
    re.I,
)


HARM_CUES = _HARM  # what a harm looks like in a sentence: the cues of the questions on harms


def outcome_family(sentence: str) -> str:
    """Which family of outcome ``sentence`` reports: "benefit" (survival, recurrence, response,
    accuracy…), "harm" (adverse events, toxicity, complications…), "both" or "" (neither named).
    Example: "OS and event-free survival were not statistically different." → "benefit"."""
    benefit, harm = bool(_BENEFIT.search(sentence)), bool(_HARM.search(sentence))
    return "both" if benefit and harm else "benefit" if benefit else "harm" if harm else ""


def states_result(sentence: str) -> bool:
    """True when ``sentence`` has a result verb or outcome statement ("was observed", "did not
    differ", "no significant difference", "died"), or a quantity beside a comparison."""
    return bool(
        _RESULT.search(sentence) or (_QUANTITY.search(sentence) and _COMPARISON.search(sentence))
    )


def finding_weight(sentence: str) -> float:
    """How much ``sentence`` states a finding, in ``[FURNITURE, 1]`` (module docstring).

    Example: "Overall accuracy of SLNB was 93.0%." → 0.7 (a quantity); "OS was not
    significantly different between the two arms (95.6% vs 94.9%)." → 1.0; "Archived from the
    original on 11 June 2023." → 0.2."""
    text = sentence.strip()
    if not text or text.endswith("?") or _FURNITURE.search(text):
        return FURNITURE
    # a trial's or a group's capitalised name says who ran it, not what it found: "The Health
    # Outcomes and Reduced Incidence … Trial randomly assigned 7765 women" reduced nothing
    text = NAMED.sub("the study", text)
    if (
        _STATS_METHOD.search(text)
        and not _P_VALUE.search(text)
        and not _ESTIMATE_VALUE.search(text)
        and len(_PERCENT.findall(text)) < 2
    ):
        return CONDUCT  # "… estimated using Cox proportional hazards models": how, not what
    signals = sum(1 for pattern in (_QUANTITY, _COMPARISON, _RESULT) if pattern.search(text))
    # a quantity set against another ("12% vs 25%") is a result whatever else the sentence says
    compared = bool(_QUANTITY.search(text) and _COMPARISON.search(text))
    if _BALANCE.search(text) and not (compared and _RESULT.search(text)):
        # "baseline characteristics were similar", "mean age of 55 vs 57 years", "we conducted
        # a randomized trial of A versus B": the arms' balance or the design, no finding
        return CONDUCT
    # ... but a dose or a duration set against a placebo ("assigned to 410 mg for 6 weeks versus
    # placebo") is the allocation: the conduct is exempt only for outcome figures
    if _CONDUCT.search(text) and not _RESULT.search(text) and not (compared and _measured(text)):
        return CONDUCT
    # who was allocated to what, however its adjectives read ("… receiving prolonged examplumab
    # … to A versus B"): conduct, unless the sentence gives an outcome's figures too
    if _ALLOCATED.search(text) and not _measured(text):
        return CONDUCT
    if _BACKGROUND.search(text) and not compared:
        return PLAIN  # what was known before the study: quotable, after what it found
    return PLAIN + (1 - PLAIN) * min(1.0, signals / SIGNALS_FULL)


def _measured(sentence: str) -> bool:
    """True when ``sentence`` gives an outcome's figures: two percentages, a p-value or an
    effect estimate (not a dose, a duration or a head count)."""
    return bool(
        len(_PERCENT.findall(sentence)) >= 2
        or _P_VALUE.search(sentence)
        or _ESTIMATE.search(sentence)
    )


def contrasts(sentence: str) -> bool:
    """True when ``sentence`` sets one group's figure against another's or gives an effect
    estimate (CONSORT item 17a): two or more figures beside a comparison, "respectively" or two
    named arms or groups, or a hazard, odds or risk ratio with its number.

    Example: "Headache occurred in 7% of the early group and 25% of the controls." → True;
    "The intervention significantly reduced symptoms." → False; "Fifteen women aged 40 to 65
    took part." → False (no comparison)."""
    figures = [m for m in _FIGURE.findall(sentence) if not _YEAR.fullmatch(m)]
    if len(set(figures)) < 2:
        return bool(_ESTIMATE.search(sentence) and figures)
    return bool(
        _COMPARISON.search(sentence)
        or _RESPECTIVELY.search(sentence)
        or len(_GROUP.findall(sentence)) >= 2
        or _ESTIMATE.search(sentence)
    )


def result_factor(sentence: str) -> float:
    """1.0 for a sentence that ``contrasts`` groups' figures, ``CONTRAST_FLOOR`` otherwise."""
    return 1.0 if contrasts(sentence) else CONTRAST_FLOOR


def quote_rank(score: float, sentence: str) -> float:
    """The order in which a report quotes evidence: its evidence score (``research.evidence.judge``,
    [0, 1]) times ``finding_weight`` times ``result_factor`` (a contrast of the groups' figures
    first) times ``POINTS_BACK_FACTOR`` for a sentence that opens with a bare pronoun
    (``POINTS_BACK``: "They also stated …"), rounded to 4 places so ties break on text order."""
    back = POINTS_BACK_FACTOR if POINTS_BACK.match(sentence.strip()) else 1.0
    return round(score * finding_weight(sentence) * result_factor(sentence) * back, 4)


def no_finding(sentence: str) -> bool:
    """True for a sentence on who took part in a study or how it was run (``CONDUCT`` weight or
    less: baseline, allocation, ethics; a page's furniture) or on its design or aim with no
    result (``research.text.sentences.STUDY_DESIGN`` and not ``states_result``)."""
    if finding_weight(sentence) <= CONDUCT:
        return True
    return bool(STUDY_DESIGN.search(sentence)) and not states_result(sentence)


def finding_factor(sentence: str) -> float:
    """``ORDER_FLOOR + (1 − ORDER_FLOOR) × finding_weight(sentence)``, in [0.55, 1]: the factor a
    closeness score is multiplied by where the closest sentences are taken, a result first."""
    return ORDER_FLOOR + (1 - ORDER_FLOOR) * finding_weight(sentence)
