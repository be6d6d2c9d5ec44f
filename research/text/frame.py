"""What kind of question an analyst typed, and its key terms: the question frame.

``frame_question("Statins versus fibrates as primary prevention in older adults")``
→ kind ``comparison``, arms ``["Statins", "fibrates"]``, setting ``"primary prevention in older
adults"``. The syllabus of a run is
chosen by the kind (``research.planning.syllabus``), and every search query of the run carries the
frame's ``key_terms`` (both arms and the population), so the research never drifts to one arm's
head word ("Taxanes Safety Profile").

Kinds (checked in this order; pure text rules, measured on the labelled question sets of
``bench/data``, see docs/evidence.md):

* ``comparison`` — two interventions set against each other: "A versus B", "A vs B", "A compared
  with/to B", "A or B for …";
* ``drug`` — a medicine named by its INN stem, alone or with its setting ("Imatinib in
  chronic myeloid leukaemia"); a focused drug topic ("X hepatotoxicity in …") stays ``drug``;
* ``device`` — a device, test or procedure (surgery, biopsy, screening, implant, stent…);
* ``intervention`` — a treatment, exposure or programme for a condition or an outcome ("exercise
  for cancer-related fatigue", "effect of X on Y"), anything done *for* or *to prevent* or treat
  something ("compression stockings to prevent thrombosis", "a nerve block for hip surgery") or
  given to people the question names ("ivermectin for patients with malaria");
* ``event`` — something that happened (a storm, an election, a war, a tournament, a year);
* ``person`` — a person, band or organisation named in capitals ("Ada Lovelace");
* ``general`` — anything else.

Matching a text against a frame (which arms it names, whether a document is about the question,
the search queries that keep the frame's terms) is ``research.text.frame_match``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from research.text.asking import EVENT as _EVENT
from research.text.asking import in_sentence, restate
from research.text.entities import INN_STEM, topic_kind
from research.text.populations import POPULATION
from research.text.question_forms import (
    OCCASION_WORDS,
    appositive_name,
    asks_how_it_works,
    asks_what_happened,
    plain_form,
)
from research.text.stems import LETTERED, ArmWord
from research.text.stems import arm_word as _arm_word
from research.text.words import GENERIC, STOP, clean, content_words, word_key

KINDS = ("comparison", "intervention", "drug", "device", "event", "condition", "person", "general")
FRAMED_KINDS = frozenset({"comparison", "intervention", "device"})

_VERSUS = re.compile(
    r"\s+(?:versus|vs\.?|v\.|compared\s+(?:with|to)|in\s+comparison\s+(?:with|to)|against)\s+", re.I
)
# An add-on question compares the base treatment with and without the added one: "X added to Y
# for Z", "adding X to Y in Z", "the addition of X to Y", "X in addition to Y", "Y with or
# without X" are framed as the comparison "X plus Y" versus "Y alone".
_ADDED_TO = (
    re.compile(r"^(?:adding|(?:the\s+)?addition\s+of)\s+(.+?)\s+to\s+(.+)$", re.I),
    re.compile(r"^(.+?)\s+(?:added\s+to|in\s+addition\s+to|on\s+top\s+of)\s+(.+)$", re.I),
)
_WITH_OR_WITHOUT = re.compile(r"^(.+?)\s+with\s+or\s+without\s+(.+)$", re.I)
ADD_ON_MAX_WORDS = 6  # an added or base treatment's name; a longer stretch is not one
_OR_ARMS = re.compile(r"^(?:should\s+\w+\s+(?:use|get|take|receive)\s+)?(.+?)\s+or\s+(.+)$", re.I)
# Where an arm ends and its setting begins ("anthracyclines *as adjuvant therapy for* …"): the
# scene it is given in, or what it is given to do
_SCENE = r"as|in|for|among|during|after|before|within|across|at"
_TO_DO = r"to\s+(?:treat|prevent|improve|reduce|relieve|manage|control|lower|increase|enhance)"
_SETTING = re.compile(
    rf"\s+(?:{_SCENE}|with|on|{_TO_DO}|"
    r"(?:improve|reduce|relieve|prevent|affect|lower|increase|decrease|help|work|change)s?)\s+",
    re.I,
)
# ... but in "A with B versus C", "with" joins the first arm's treatments and sets no scene
_FIRST_ARM_END = re.compile(rf"\s+(?:{_SCENE}|{_TO_DO})\s+", re.I)
_SETTING_OPEN = re.compile(r"^(?:for|in|among)\s+", re.I)
_LEAD_IN = re.compile(
    r"^(?:(?:the\s+)?(?:efficacy|effectiveness|safety|effects?|role|impact|benefits?|use|value)\s+of\s+|"
    r"(?:does|do|is|are|can|should|how\s+(?:well\s+)?(?:does|do)|what\s+is)\s+)",
    re.I,
)
_INTERVENTION = re.compile(
    r"\b(?:therap(?:y|ies)|treatments?|exercise|training|acupuncture|supplement\w*|diet\w*|"
    r"vaccin\w*|interventions?|programmes?|programs?|counsell?ing|rehabilitation|yoga|"
    r"radiotherapy|chemotherapy|immunotherapy|hormon\w+|drugs?|medications?|inhibitors?|"
    r"agonists?|antagonists?|blockers?|vitamin\s+\w+|prophylaxis|education|mindfulness|"
    r"massage|smoking\s+cessation|administration|dosing|doses?)\b",
    re.I,
)
_DEVICE = re.compile(
    r"\b(?:devices?|implants?|stents?|pumps?|pacemakers?|catheters?|prosthe\w+|surgery|"
    r"surgical|biops(?:y|ies)|resection|mastectomy|lumpectomy|ectomy|transplant\w*|screening|"
    r"mammograph\w*|imaging|ultrasound|scan|MRI|CT|endoscop\w+|procedures?|ventilat\w+|"
    r"tests?|assays?|diagnostic\w*|monitors?|sensors?|wearables?)\b",
    re.I,
)
# A medical condition named as the topic ("Examplitis", "Fever fit syndrome"): the head words
# and word endings of disease names (the suffixes of medical terminology: -itis inflammation,
# -osis condition, -emia of the blood, -oma tumour, -pathy disease, -algia pain …).
_CONDITION_WORD = re.compile(
    r"\b(?:diseases?|disorders?|syndromes?|seizures?|convulsions?|infections?|fevers?|failure|"
    r"deficiency|injur(?:y|ies)|palsy|dementia|diabetes|asthma|hypertension|stroke|epilepsy|"
    r"migraine|allergy|allergies|cancers?|tumou?rs?|fractures?|poisoning|addiction|sepsis)\b",
    re.I,
)
# ... whose endings a name can share ("Paloma", "Tacoma"): read only when the words are not all
# capitalised like a name's
_CONDITION_ENDING = re.compile(
    r"\b\w+(?:itis|osis|aemia|emia|oma|omas|pathy|plegia|algia|trophy|megaly|iasis|penia|uria|"
    r"rrh(?:o)?ea)\b",
    re.I,
)
CONDITION_MAX_WORDS = 6  # a condition's name; a longer question asks something of it
# "X to prevent Y", "X for Y": X is done or given for an outcome or a condition.
_GIVEN = re.compile(
    r"\s+(?:for|to\s+(?:treat|prevent|reduce|relieve|improve|manage|control|lower|increase))\s+",
    re.I,
)
# A setting that names the people treated ("X for patients with Y", "X in women with Y") asks what
# X does for them, whatever X is called ("ivermectin", "a low-FODMAP diet"): ``POPULATION``.
# Where the condition an intervention is for ends and its population or occasion begins.
OCCASION = re.compile(rf"\s+(?:{OCCASION_WORDS})\s+", re.I)
_MODIFIER = re.compile(r"-(?:related|induced|associated|specific|dependent)$", re.I)
_CAUSE = re.compile(r"-(?:related|induced|associated)$", re.I)
_ORG = re.compile(
    r"\b(?:inc|corp(?:oration)?|company|ltd|llc|group|university|college|party|association|"
    r"foundation|institute|agency|band|club|team|society|council|ministry)\b\.?",
    re.I,
)
# Class words that name what an arm is, not which one: "kinase *inhibitors*".
_CLASS_WORDS = frozenset(
    """inhibitor inhibitors therapy therapies treatment treatments drug drugs agent agents
    medication medications regimen regimens use administration""".split()
)
_CLASS_KEYS = frozenset(word_key(w) for w in _CLASS_WORDS)
# Words of an arm that name a class by what it is not or leave it open ("non-hormonal", "other")
_OPEN_WORDS = frozenset(
    """non other others alternative alternatives novel new various different any all some
    intervention interventions strategy strategies approach approaches option options measure
    measures method methods""".split()
)


# Words that join or limit an arm's treatments, naming none: "X *plus* Y", "Y *alone*".
_JOIN_WORDS = frozenset("plus alone only".split())


def _open_word(word: str) -> bool:
    low = word.lower()
    return low in _OPEN_WORDS or low.startswith(("non-", "non‑"))


@dataclass(frozen=True)
class QuestionFrame:
    """The parsed question.

    Attributes:
        question: the question as typed (whitespace collapsed, trailing ``?.!`` off).
        kind: one of ``KINDS``.
        arms: the compared interventions (two for a comparison), the intervention (one) for an
            intervention or drug question, else ().
        setting: the words after the arms (population, condition, role), "" when none.
        key_terms: the phrases every search query of the run keeps, most specific first: the
            arms, then the setting's content words (at most ``MAX_SETTING_WORDS``).
    """

    question: str
    kind: str
    arms: tuple[str, ...] = ()
    setting: str = ""
    key_terms: tuple[str, ...] = field(default_factory=tuple)

    @property
    def framed(self) -> bool:
        """True for the kinds whose syllabus and queries are built from the frame's terms
        (comparison, intervention, device); the others keep their template's own."""
        return self.kind in FRAMED_KINDS

    def query_core(self, max_words: int = 8) -> str:
        """The key terms as one keyword string of at most ``max_words`` words (arms first)."""
        words: list[str] = []
        for term in self.key_terms:
            for w in content_words(term):
                if word_key(w) not in {word_key(x) for x in words}:
                    words.append(w)
        return " ".join(words[:max_words]) or self.question

    def arm_words(self) -> list[list[ArmWord]]:
        """Per arm, its naming words (``ArmWord``: Snowball English stems of the whole word, and
        of all its hyphen parts together: "full-thickness" is named by "full thickness", not by
        "full"; "H1N1-vaccine" counts once): the arm's content words without class words and
        open words ("kinase inhibitors" → kinas; "vitamin D" → vitamind, ``stems.LETTERED``). A
        word every arm
        of a comparison shares names none of them against the others and is left out ("mesh
        repair" of "laparoscopic mesh repair" vs "open mesh repair"), unless that would leave an
        arm no word. An open arm — class words only, or what it is not ("Interventions",
        "Non-hormonal treatments", "other options") — has no words: every text names it, and
        the setting alone tells a source on the question (``names_arm``)."""
        out = []
        for arm in self.arms:
            arm = LETTERED.sub(r"\1\2", arm)  # "vitamin D" is named by its letter too
            words = [
                w
                for w in content_words(arm)
                if word_key(w) not in _CLASS_KEYS and w.lower() not in _JOIN_WORDS
            ]
            out.append([_arm_word(w) for w in words if not _open_word(w)])
        out = [[w for w in arm if w.stems] for arm in out]
        if len(out) > 1:
            # a word every arm has, whole: "high-dose" and "standard-dose" share a part, and
            # the part that differs is what names each
            shared = set.intersection(*({w.whole for w in arm} for arm in out))
            kept = [[w for w in arm if w.whole not in shared] for arm in out]
            out = [k if k or not arm else arm for k, arm in zip(kept, out, strict=True)]
        return out

    def target_words(self) -> list[ArmWord]:
        """The naming words of what an intervention or a device is for — the condition or
        outcome before the setting's population or occasion ("hot flushes" of "… for hot flushes
        in women with X", "oedema" of "… to prevent oedema after surgery"); [] for other kinds and
        for a setting that names only the people treated ("… for patients with X"). A modifier
        that says what the condition comes from ("treatment-related", "drug-induced") is left out
        when another word remains: the condition is named without it."""
        head = self._condition_head()
        if not head or POPULATION.search(head):
            return []
        words = setting_words(head)
        plain = [w for w in words if not _MODIFIER.search(w)]
        return [_arm_word(w) for w in (plain or words)]

    def cause_words(self) -> list[str]:
        """What the condition an intervention is for comes from, when the question says it
        ("chemotherapy" of "chemotherapy-induced nausea", "radiation" of "radiation-associated
        dermatitis"): [] otherwise. The same condition from another cause is another population
        (nausea after surgery is not nausea from chemotherapy); a source on the question names
        the cause, if not in the same compound."""
        words = setting_words(self._condition_head())
        return [w.rsplit("-", 1)[0] for w in words if _CAUSE.search(w) and "-" in w]

    def _condition_head(self) -> str:
        """The setting of an intervention or a device up to its population or occasion ("hot
        flushes" of "hot flushes in women with X"); "" for other kinds and no setting."""
        if self.kind not in ("intervention", "device") or not self.setting:
            return ""
        return OCCASION.split(self.setting, maxsplit=1)[0]

    def arm_keys(self) -> list[set[str]]:
        """Per arm, the stems of its naming words (``arm_words``) as one set."""
        return [{k for w in arm for k in w.stems} for arm in self.arm_words()]


MAX_SETTING_WORDS = 4


def _strip_lead_in(text: str) -> str:
    return _LEAD_IN.sub("", text).strip()


# "newly diagnosed X" says when in the course of X, not who: a trial of the first treatment of X
# rarely says so, and a setting that needs the words leaves it out
_WHEN_DIAGNOSED = re.compile(r"\b(?:newly|recently)\s+diagnosed\b", re.I)


def setting_words(setting: str) -> list[str]:
    """The content words of a question's ``setting`` that a source on it names (stop words,
    generic words, class words and "newly diagnosed" left out), in order."""
    setting = _WHEN_DIAGNOSED.sub(" ", setting)
    words = [w for w in content_words(setting) if w.lower() not in STOP | GENERIC]
    return [w for w in words if word_key(w) not in {word_key(x) for x in _CLASS_WORDS}]


def _split_arm(text: str, end: re.Pattern[str] | None = None) -> tuple[str, str]:
    """``(arm, setting)`` of the text after a comparator ("anthracyclines as adjuvant therapy…"),
    split where ``end`` (default ``_SETTING``) first matches; a setting's opening "for" or "in"
    is dropped ("… work for older women" → "older women")."""
    parts = (end or _SETTING).split(text, maxsplit=1)
    arm = parts[0].strip(" ,;:")
    setting = _SETTING_OPEN.sub("", parts[1].strip()) if len(parts) > 1 else ""
    return arm, setting


def _framed(question: str, kind: str, arms: list[str], setting: str) -> QuestionFrame:
    arms = [clean(a).strip(" ,;:") for a in arms if clean(a).strip(" ,;:")]
    terms = [*arms, *setting_words(setting)[:MAX_SETTING_WORDS]]
    return QuestionFrame(question, kind, tuple(arms), clean(setting), tuple(dict.fromkeys(terms)))


def frame_question(question: str) -> QuestionFrame:
    """The frame of ``question`` (module doc). Deterministic; never raises (an empty question
    frames as ``general`` with no terms)."""
    q = clean(question).rstrip("?.! ")
    topic = restate(question)  # a question read as the topic it asks about
    body = _strip_lead_in(topic)
    if not body:
        return QuestionFrame(q, "general")
    body = plain_form(body)  # "A combined with B", "Can X be omitted …", "preventing X …"
    added = _add_on(body)
    if added:
        extra, base, setting = added
        base = in_sentence(base) if extra[:1].islower() else base  # "… plus examplumab"
        return _framed(q, "comparison", [f"{extra} plus {base}", f"{base} alone"], setting)
    parts = _VERSUS.split(body, maxsplit=1)
    if len(parts) == 2 and parts[0].strip() and parts[1].strip():
        second, setting = _split_arm(parts[1])
        first, before = _split_arm(parts[0], _FIRST_ARM_END)
        return _framed(
            q, "comparison", [first, second], " ".join(x for x in (before, setting) if x)
        )
    m = _OR_ARMS.match(body)
    if m and (_INTERVENTION.search(body) or INN_STEM.search(body)) and len(m.group(1).split()) <= 4:
        second, setting = _split_arm(m.group(2))
        if second and len(second.split()) <= 4:
            return _framed(q, "comparison", [m.group(1), second], setting)
    head, setting = _split_arm(body)
    if not setting and _names_condition(head):  # "Drug-induced examplitis": the condition itself
        return _framed(q, "condition", [], topic)
    if asks_what_happened(question):  # "What happened during the first flight test?"
        return _framed(q, "event", [], topic)
    if INN_STEM.search(head):
        # "X for women with Y", "X to prevent Y": what a medicine is given for, to whom, is an
        # intervention's question (PICO), not a drug's profile ("X in Y"), with no market status
        given = setting and _GIVEN.match(body[len(head) :]) and POPULATION.search(setting)
        return _framed(q, "intervention" if given else "drug", [head], setting)
    if _DEVICE.search(head):
        return _framed(q, "device", [head], setting)
    if (
        _INTERVENTION.search(head)
        or topic_kind(head) == "drug"
        or (setting and len(head.split()) <= 5 and _GIVEN.match(body[len(head) :]))
        or (setting and POPULATION.search(setting) and len(head.split()) <= 5)
    ):
        return _framed(q, "intervention", [head], setting)
    if asks_how_it_works(question):  # how a kind of election works: no one event's report
        return _framed(q, "general", [], topic)
    if _EVENT.search(topic):
        return _framed(q, "event", [], topic)
    if appositive_name(topic):  # "Ada Lovelace, English mathematician"
        return _framed(q, "person", [], topic)
    if _names_condition(topic):
        return _framed(q, "condition", [], topic)
    words = topic.split()
    if _ORG.search(topic) or _named(words):
        return _framed(q, "person", [], topic)
    return _framed(q, "general", [], topic)


_NONE_ARM = re.compile(r"^no\s+", re.I)


def leaves_out(arm: str) -> bool:
    """True for an arm that leaves a treatment out: "no X" of "X versus no X"."""
    return bool(_NONE_ARM.match(arm))


def _add_on(body: str) -> tuple[str, str, str] | None:
    """``(added, base, setting)`` of an add-on question (``_ADDED_TO``, ``_WITH_OR_WITHOUT``),
    None when ``body`` is none, either part runs past ``ADD_ON_MAX_WORDS`` words or neither
    names a treatment (``_treatment``)."""
    m = _WITH_OR_WITHOUT.match(body)
    if m:
        base = m.group(1)
        extra, setting = _split_arm(m.group(2))
    else:
        m = next((x for rx in _ADDED_TO if (x := rx.match(body))), None)
        if m is None:
            return None
        extra = m.group(1)
        base, setting = _split_arm(m.group(2))
    extra, base = extra.strip(" ,;:"), base.strip(" ,;:")
    if not extra or not base or max(len(extra.split()), len(base.split())) > ADD_ON_MAX_WORDS:
        return None
    if not any(_treatment(x) for x in (extra, base)):  # "names added to the register"
        return None
    return extra, base, setting


def _treatment(text: str) -> bool:
    """``text`` names a treatment: a medicine's INN stem, a drug, a therapy word or a device."""
    return bool(
        INN_STEM.search(text)
        or _INTERVENTION.search(text)
        or _DEVICE.search(text)
        or topic_kind(text) == "drug"
    )


def _named(words: list[str]) -> bool:
    """Two to five words, all capitalised: a person's or an organisation's name."""
    return 2 <= len(words) <= 5 and all(w[:1].isupper() for w in words)


def _names_condition(text: str) -> bool:
    """``text`` (at most ``CONDITION_MAX_WORDS`` words) names a medical condition: a disease's
    head word, or a disease's ending in words that are not all capitalised like a name's."""
    words = text.split()
    return len(words) <= CONDITION_MAX_WORDS and bool(
        _CONDITION_WORD.search(text) or (_CONDITION_ENDING.search(text) and not _named(words))
    )
