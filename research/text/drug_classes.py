"""Drug classes by the WHO INN stem their members share: a language resource, like a stemmer's
rules, not a topic's vocabulary (it lists the classes of the stem book, whatever a bench asks).

A question that names a class ("statins versus placebo") is answered by a trial that names a
member ("atorvastatin"): ``class_endings`` gives the endings a phrase's classes imply and
``names_member`` finds one in a text (``research.text.frame_match.arms_named``).
"""

from __future__ import annotations

import re

# Classes of medicines whose members share a WHO INN stem ("The use of stems in the selection of
# International Nonproprietary Names", WHO/EMP/RHT/TSN): a question that names the class ("statins
# versus …") is answered by a trial that names a member ("atorvastatin"). Keyed by a word that
# names the class (its plural is looked up by the singular); the stems are the INN endings of its
# members.
DRUG_CLASSES: dict[str, tuple[str, ...]] = {
    "aromatase": ("trozole", "mestane"),
    "bisphosphonate": ("dronate", "dronic"),
    "statin": ("statin",),
    "taxane": ("taxel",),
    "anthracycline": ("rubicin", "antrone"),
    "platinum": ("platin",),
    "proton": ("prazole",),
    "ace": ("pril",),
    "beta-blocker": ("olol",),
    "fluoroquinolone": ("floxacin",),
    "penicillin": ("cillin",),
    "tetracycline": ("cycline",),
    "leukotriene": ("lukast",),
    "dpp-4": ("gliptin",),
    "gliptin": ("gliptin",),
    "sglt2": ("gliflozin",),
    "sglt-2": ("gliflozin",),
    "parp": ("parib",),
    "cdk4/6": ("ciclib",),
    "cdk4": ("ciclib",),
    "tyrosine": ("tinib",),
    "azole": ("conazole",),
    "triptan": ("triptan",),
    "benzodiazepine": ("zepam", "zolam"),
    "ssri": ("oxetine", "traline", "opram"),
    "heparin": ("parin",),
    "channel": ("dipine",),
    "gnrh": ("relin", "relix"),
    "lhrh": ("relin", "relix"),
    "mtor": ("limus",),
    "proteasome": ("zomib",),
    "phosphodiesterase": ("afil",),
    "pde5": ("afil",),
    "angiotensin-receptor": ("sartan",),
    "sartan": ("sartan",),
    "arb": ("sartan",),
}
_MEMBER_WORD = re.compile(r"[A-Za-z][A-Za-z-]{4,}")


def class_endings(phrase: str) -> tuple[str, ...]:
    """The INN endings of the members of the drug classes ``phrase`` names (``DRUG_CLASSES``),
    a hyphenated word by its parts too: "statins versus placebo" → ("statin",),
    "platinum-based" → ("platin",); () when it names none."""
    words = re.findall(r"[a-z0-9][a-z0-9/-]*", phrase.lower())
    # a class named in a compound ("platinum-based", "anthracycline-containing") by its part
    # ... but not "non-platinum": a class by what it is not names none
    words = [w for w in words if not w.startswith("non-")]
    words += [part for w in words if "-" in w for part in w.split("-")]
    found = (DRUG_CLASSES.get(w) or DRUG_CLASSES.get(w.removesuffix("s"), ()) for w in words)
    return tuple(dict.fromkeys(e for endings in found for e in endings))


def names_member(text: str, endings: tuple[str, ...]) -> bool:
    """True when ``text`` names a medicine whose name ends in one of ``endings`` (a member of
    the class they stand for; the ending alone, e.g. "statin", also counts)."""
    if not endings:
        return False
    return any(w.lower().endswith(endings) for w in _MEMBER_WORD.findall(text))
