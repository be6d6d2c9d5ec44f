"""Named things in a question: medicines by their INN stem, the kind of topic, and the
``subject [focus] [in context]`` reading of a topic.

Pure text rules: no model, deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from research.text.asking import restate

# International nonproprietary name stems (WHO INN "Use of stems", 2018 edition) that end drug
# names: -mab antibodies, -tinib/-anib kinase inhibitors, -parib, -ciclib, -platin, -taxel,
# -rubicin, -statin, -pril, -sartan, -olol, -prazole, -floxacin, -cillin, -mycin, -cycline,
# -vir antivirals, -tide peptides, -lukast, -gliptin, -gliflozin, -dronate, -azole antifungals,
# -trozole and -mestane enzyme inhibitors, -xifen(e) and -strant anti-oestrogens, -dronic acid
# bisphosphonates, -setron and -pitant antiemetics, -caine anaesthetics, -parin heparins, -dipine
# calcium-channel blockers, -triptan, -afil, -glinide, -formin, -tidine, -zepam, -oxetine, -relin,
# -grastim colony-stimulating factors, -poetin erythropoietins; -citabine/-rabine nucleosides,
# -trexed/-trexate antifolates, -uracil, -fosfamide/-phosphamide and -mustine alkylators, -poside,
# -lutamide anti-androgens, -relix, -domide, -sertib kinase inhibitors, -ercept receptor fusions,
# -xaban/-gatran anticoagulants, -coxib/-profen/-fenac anti-inflammatories, -steride,
# -pramine/-triptyline antidepressants, -fungin, -nidazole, -vudine. A name has two letters or
# more before its stem ("heparin", "losartan"). Not -cept ("concept") nor -terone (hormones
# sources name as receptors).
INN_STEM = re.compile(
    r"\b[a-z]{2,}(?:mab|tinib|anib|rafenib|parib|ciclib|platin|taxel|rubicin|statin|pril|"
    r"sartan|olol|prazole|floxacin|cillin|mycin|cycline|vir|tide|lukast|gliptin|gliflozin|"
    r"dronate|dronic|conazole|tecan|lisib|degib|zomib|limus|vastatin|ximab|zumab|umab|trozole|"
    r"xifen|xifene|mestane|strant|setron|pitant|caine|parin|dipine|triptan|afil|glinide|"
    r"formin|tidine|zepam|oxetine|relin|grastim|poetin|citabine|rabine|trexed|trexate|poside|"
    r"mustine|lutamide|relix|domide|sertib|ercept|xaban|gatran|coxib|profen|fenac|steride|"
    r"pramine|triptyline|fungin|nidazole|vudine|uracil|fosfamide|phosphamide)\b",
    re.I,
)
# words that make a topic about a medicine even without an INN-stemmed name
_DRUG_WORDS = re.compile(
    r"\b(drugs?|medicines?|medications?|pharmacotherapy|chemotherapy|inhibitors?|"
    r"antibod(?:y|ies)|vaccines?|dosing|dosage|biosimilars?|pharmaceuticals?)\b",
    re.I,
)
# Words that complete a medicine's name rather than add a focus ("alendronic acid", "X sodium").
_SALT = re.compile(
    r"(?i:acid|sodium|potassium|calcium|magnesium|hydrochloride|mesylate|maleate|citrate|"
    r"sulfate|sulphate|phosphate|acetate|tartrate|succinate|besylate|tosylate)"
)
# A head that chooses between treatments or puts one onto another ("A or B", "X added to A",
# "adding X to A", "A plus X") has no focus: what is left beside the medicine is another treatment.
_CHOICE = re.compile(r"\s(?:or|versus|vs\.?|to|plus|without|combined)\s", re.I)
_CONTEXT = re.compile(r"\s+(?:in|for|among|during|with|after|versus|vs\.?|within|across)\s+", re.I)


def topic_kind(topic: str) -> str:
    """``"drug"`` when the topic names a medicine, else ``"general"``.

    A medicine is recognised by a word ending in a WHO INN stem (``rituximab``, ``imatinib``,
    ``olaparib``…) or a medicine word (drug, vaccine, inhibitor, chemotherapy…).
    """
    text = topic if isinstance(topic, str) else ""
    return "drug" if INN_STEM.search(text) or _DRUG_WORDS.search(text) else "general"


def drug_names(topic: str) -> list[str]:
    """The medicines a topic names by their WHO INN stem (``"Imatinib hepatotoxicity"`` →
    ``["Imatinib"]``), in order, without repeats; [] for a topic that names none."""
    text = topic if isinstance(topic, str) else ""
    return list(dict.fromkeys(m.group(0) for m in INN_STEM.finditer(text)))


# "<name> [word] (<SHORT FORM>" with the name in any case and the short form capitalised as written
_ABBREVIATION = r"\b(?i:{name})(?:\s+[a-z]+)?\s*\(\s*([A-Z][A-Za-z0-9-]{{1,7}})\s*[;,)]"


def abbreviations(text: str, names: list[str]) -> list[str]:
    """The short forms ``text`` defines for the medicines ``names`` ("examplumab (EXB)" →
    ["EXB"]), in order, without repeats: a document's later sentences name the medicine by
    them. [] when it defines none."""
    found: list[str] = []
    for name in names:
        pattern = re.compile(_ABBREVIATION.format(name=re.escape(name)))
        found += [m.group(1) for m in pattern.finditer(text or "")]
    return list(dict.fromkeys(found))


def names_any(text: str, short_forms: Sequence[str]) -> bool:
    """True when ``text`` has one of ``short_forms`` as a whole word, case as written."""
    return any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", text) for s in short_forms)


def split_topic(topic: str) -> tuple[str, str, str]:
    """``(subject, focus, context)`` of a topic read as ``subject [focus] [in context]``.

    ``Imatinib hepatotoxicity in chronic myeloid leukaemia`` → ``("Imatinib",
    "hepatotoxicity", "chronic myeloid leukaemia")``; a topic without a medicine name or
    without other head words has no focus (``("Large language model", "", "")``).
    """
    t = restate(topic)
    parts = _CONTEXT.split(t, maxsplit=1)
    head, context = parts[0], (parts[1] if len(parts) > 1 else "")
    words = head.split()
    drugs = [w for w in words if INN_STEM.fullmatch(re.sub(r"[^A-Za-z]", "", w))]
    if not drugs or topic_kind(topic) != "drug" or _CHOICE.search(head):
        return t, "", ""  # "A or B in S" chooses between treatments: no focus on either
    focus = " ".join(
        w
        for w in words
        if w not in drugs and w.lower() not in ("and", "of", "the", "&") and not _SALT.fullmatch(w)
    )
    return " ".join(drugs), focus, context
