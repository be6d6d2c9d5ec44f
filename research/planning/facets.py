"""Facet phrasings of template questions, keyed by question key: what the evidence judgement
(``research.evidence.judge``) recognises as an answer to a template question, in the words sources
use, beside the question's label and description. No facet names a particular medicine, organ or
event (a test checks it).
"""

from __future__ import annotations

# A procedure's harms in the words surgical trials use (both questions on harms)
PROCEDURE_HARMS = (
    "complications and morbidity after the procedure: pain, swelling, numbness, infection"
)
# Facet phrasings of template questions, keyed by question key (module doc).
FACETS: dict[str, tuple[str, ...]] = {
    "mechanism.moa": (
        "binds the receptor and blocks its signalling",
        "monoclonal antibody target and pathway inhibition",
        "antibody-dependent cellular cytotoxicity and receptor internalisation",
        "inhibits an enzyme and the pathway it drives in the target cells",
        "mechanism of resistance",
    ),
    "clinical.efficacy": (
        "improved overall survival or disease-free survival",
        "hazard ratio for recurrence or death",
        "pathological complete response rate",
        "objective response rate and progression-free survival",
    ),
    "clinical.safety": (
        "adverse events and grade 3 or 4 toxicity",
        "organ failure or damage, a serious adverse reaction and a decline in organ function",
        "side effects, discontinuation due to toxicity",
    ),
    "competitive.landscape": (
        "compared with another drug or regimen",
        "combination with chemotherapy or another targeted agent",
        "alternative agents of the same class, newer agents or biosimilars",
    ),
    "market.status": (
        "approved by the FDA or EMA for this indication",
        "phase III trial stage of development",
        "commercial availability, pricing and cost-effectiveness",
    ),
    "ip.patents": (
        "patent expiry and market exclusivity",
        "follow-on products entering after patent protection ends",
        "new formulation such as subcutaneous administration",
    ),
    "background.overview": ("definition and key facts", "what it is and its scope"),
    "causes.risk": ("caused by or triggered by", "risk factors and who is more likely to have it"),
    "diagnosis.signs": ("symptoms and signs include", "diagnosed by tests or examination"),
    "treatment.management": (
        "treated with medicines or procedures",
        "treatment is not recommended or has no benefit",
        "first-line management and care",
    ),
    "prognosis.outcomes": (
        "chance of recurrence and long-term outcome",
        "risk of later complications compared with the general population",
    ),
    "epidemiology.burden": (
        "occurs in a percentage of people",
        "incidence and prevalence by age",
    ),
    "history.timeline": ("began in the year", "key dates and events in order", "was founded"),
    "key.actors": ("people and organisations involved", "led by, founded by, members"),
    "impact.effects": ("consequences and measurable outcomes", "reception and significance"),
    "debate.controversies": ("criticism and disputes", "competing views and controversy"),
    "outlook.future": ("current status and recent developments", "plans for the future"),
    "efficacy.comparison": (
        "improved disease-free survival compared with",
        "hazard ratio for recurrence or death",
        "fewer recurrences or deaths than",
        "no significant difference in overall survival between the two arms",
    ),
    "harms.comparison": (
        "more adverse events than",
        "higher incidence of grade 3 or 4 toxicity",
        "discontinued treatment because of side effects",
        PROCEDURE_HARMS,
    ),
    "subgroups.benefit": (
        "benefit was greater in patients with",
        "subgroup analysis by age or risk",
        "interaction between treatment and subgroup",
    ),
    "sequencing.switching": (
        "switching after two to three years",
        "sequential treatment compared with monotherapy",
        "extended treatment duration beyond five years",
    ),
    "qol.adherence": (
        "quality of life scores were similar",
        "adherence and early discontinuation",
        "symptoms reported by patients",
    ),
    "guidance.open": (
        "guidelines recommend",
        "remains uncertain and further trials are needed",
        "meta-analysis of randomised trials",
        # a trial's conclusion for practice, in the words abstracts close with
        "should or should not be used routinely",
        "can be safely omitted or avoided in selected patients",
        "may be a reasonable option",
    ),
    "efficacy.intervention": (
        "significantly improved compared with control",
        "reduced the risk of",
        "effect size and confidence interval",
    ),
    "harms.intervention": (
        "adverse events were mild",
        "well tolerated with few side effects",
        "serious adverse events occurred",
        PROCEDURE_HARMS,
    ),
    "delivery.dose": (
        "dose and schedule of administration",
        "sessions per week for a number of weeks",
        "duration of treatment",
    ),
    "comparators.alternatives": (
        "compared with placebo or usual care",
        "no difference between the groups",
        "superior to the standard option",
    ),
    "indications.technique": ("indicated for patients with", "the procedure was performed"),
    "accuracy.outcomes": ("detection rate and false-negative rate", "sensitivity and specificity"),
    "risks.complications": ("complications occurred in", "morbidity after the procedure"),
}
