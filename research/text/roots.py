"""Greek and Latin combining forms of medical words and the plain words that speak of the same
organ or system: a language table, like a stemmer's, covering every organ system alike.

A question focused on a harm named with a combining form ("X hepatotoxicity", "X nephropathy")
is answered by sentences that use either the form ("hepatic enzymes") or the plain word ("liver
enzymes"). ``research.evidence.cues.focus_roots`` reads the focus's roots (the first five
letters of each focus word's stem) and adds their ``VERNACULAR`` words.

Source: the combining forms of standard medical terminology (e.g. Chabner, *The Language of
Medicine*, ch. 1–2); keyed by the five-letter root the judge derives.
"""

from __future__ import annotations

VERNACULAR: dict[str, tuple[str, ...]] = {
    "cardi": ("heart", "myocard"),
    "hepat": ("liver",),
    "nephr": ("kidney", "renal"),
    "neuro": ("nerve", "neuropath"),
    "pulmo": ("lung", "respirat"),
    "pneum": ("lung", "respirat"),
    "derma": ("skin", "cutaneous"),
    "osteo": ("bone", "skelet"),
    "gastr": ("stomach", "bowel", "intestin"),
    "hemat": ("blood", "haemat"),
    "haema": ("blood", "hemat"),
    "myelo": ("marrow", "blood count"),
    "ototo": ("hearing", "ear"),
    "ophth": ("eye", "vision", "ocular"),
    "encep": ("brain", "cerebr"),
    "cereb": ("brain",),
    "vascu": ("vessel", "arter", "vein"),
    "thyro": ("thyroid",),
    "pancr": ("pancrea",),
    "muscu": ("muscle", "myalg"),
}
