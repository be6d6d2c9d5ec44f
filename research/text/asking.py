"""A question typed as a question, read as the topic it is about and what it asks of that topic.

Analysts type questions ("What are the side effects of X?", "Is A better than B in S?", "Why did
X collapse?") as often as topics ("X in S"). The frame, the syllabus templates and the searches
read a topic phrase, so ``restate`` turns a question into one, by the standard question forms of
English (an interrogative opener, then an aspect "of" the subject):

* "What are the side effects / the causes of X?" → "X" (what it asks of X is the asked question);
* "What is the role / efficacy / evidence of X in S?" → "X in S" (does it work: the kind's own
  template asks it);
* "Is A better / safer / more effective than B in S?" → "A versus B in S" (a comparison);
* "Which is better for S, A or B?", "Should women with S take A or B?" → "A versus B for S",
  "A or B in women with S";
* "Is X necessary after Y?", "Is it safe to X during Y?", "What is the best treatment for S?" →
  "X after Y", "X during Y", "treatment for S" (whether it is needed, safe or best is whether
  it works);
* "Who was X?", "What is X?", "What happened at X?" → "X"; "What caused X?", "Why did X
  happen?" → "X".

A topic that is not a question comes back unchanged (whitespace collapsed, end punctuation off).
``asked`` is what the question asks beyond its topic ("What caused X?" asks for causes, "How did
A prepare for X?" for A's preparation): the syllabus leads with it (``research.planning.syllabus``).
"""

from __future__ import annotations

import re


def clean(text: str) -> str:
    """Whitespace runs collapsed to one space, stripped (``research.text.words.clean``, which
    reads this module: no import back)."""
    return " ".join(str(text or "").split())


_AUX = r"(?:is|are|was|were|do|does|did|has|have|had|can|could|should|will|would|might|may)"
_WH = r"(?:what|which|who|whom|whose|how|why|when|where)"
# Without its "?", only an interrogative with its verb opens a question ("What is …", "How did
# …"): "Will Smith", "May Day" and "When Harry Met Sally" are names
_WH_OPENER = re.compile(rf"^{_WH}(?:\s+(?:well|much|many|often|long))?\s+{_AUX}\s", re.I)
# "What is X", "Who was X": the subject follows the copula
_COPULA = re.compile(r"^(?:what|which|who)\s+(?:is|are|was|were)\s+", re.I)
# "Is A better than B", "Does X reduce Y", "How well does X work": a yes/no question on a subject
_YES_NO = re.compile(
    r"^(?:(?:how\s+(?:well|effective|safe|useful)\s+)?(?:is|are|was|were|do|does|did|can|could|"
    r"should|will|would|has|have)|what\s+is\s+known\s+about)\s+",
    re.I,
)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
# Aspects that ask whether or how well the subject works: the kind's template asks that already
_WORKS = (
    r"(?:role|efficacy|effectiveness|benefits?|evidence|value|use|effects?|impact|"
    r"clinical\s+(?:efficacy|evidence|benefit))"
)
# "the <aspect> of X": X is the topic; any aspect but whether it works is asked of it ("the
# evidence for X" asks whether it works too)
_ASPECT_OF = re.compile(
    rf"^(?:({_WORKS})\s+(?:of|for|on)|[a-z][a-z -]{{2,30}}?\s+of)\s+(.+)$", re.I
)
# "What is the best treatment for X": the treatments for X, whichever is best
_BEST = re.compile(
    r"^(?:best|most\s+effective|safest|recommended|preferred|optimal|standard)\s+", re.I
)
# "Is X necessary after Y": X after Y (whether it is needed is whether it works)
_NEEDED = re.compile(
    r"^(.+?)\s+(?:necessary|needed|required|effective|safe|useful|beneficial|recommended|"
    r"worthwhile|helpful|worth\s+it)\b\s*",
    re.I,
)
# "Is it safe to exercise during X": exercise during X
_IT_IS = re.compile(
    r"^it\s+(?:\w+\s+)?(?:safe|effective|necessary|useful|worth|better|advisable|helpful|"
    r"recommended)\s+to\s+",
    re.I,
)
# "Should women with X take A or B": A or B in women with X
_TAKE = re.compile(
    r"^(.{2,60}?)\s+(?:take|use|get|receive|be\s+given|be\s+offered|start|undergo|have)\s+(.+)$",
    re.I,
)
# The people a question or a setting names: patients, women, children… (not a condition's name;
# ``research.text.populations`` reads it too)
POPULATION = re.compile(
    r"\b(?:patients?|women|men|children|adolescents|adults|infants|neonates|newborns|people|"
    r"participants|survivors|smokers|persons?|individuals|residents|workers|pregnan\w+)\b",
    re.I,
)
# "Which is better for X, A or B": A versus B for X
_WHICH = re.compile(
    r"^which\s+(?:is|are|works?)\s+(?:better|safer|more\s+effective)(?:\s+((?:for|in)\s+.+?))?"
    r"\s*[,:]\s*(.+?)\s+or\s+(.+)$",
    re.I,
)
# "What happened at / in X": X (what happened is what an event's report opens with)
_HAPPENED = re.compile(r"^what\s+happened\s+(?:at|in|during|to|on|with)\s+(.+)$", re.I)
# "A better than B": a comparison written as a question
_THAN = re.compile(
    r"\s+(?:(?:any\s+)?(?:better|worse|safer|more\s+effective|less\s+effective|more\s+toxic|"
    r"superior|inferior|preferable)\s+(?:than|to)|as\s+(?:good|effective|safe)\s+as)\s+",
    re.I,
)
# "What caused X": the causes are the ask, X the topic
_CAUSED = re.compile(r"^what\s+(?:caused|triggered|led\s+to)\s+(.+)$", re.I)
# "Why did X happen / collapse": X (and its event noun, when the verb names one) is the topic
_WHY = re.compile(rf"^why\s+{_AUX}\s+(.+)$", re.I)
_HAPPEN = re.compile(r"\s+(?:happen|occur|take\s+place|start|begin|end)$", re.I)
_EVENT_VERBS = {
    "collapse": "collapse",
    "fail": "failure",
    "crash": "crash",
    "resign": "resignation",
}


def is_question(text: str) -> bool:
    """True when ``text`` is written as a question: it ends with "?" or opens with an
    interrogative word and its verb ("What is …", "How did …")."""
    t = clean(text)
    return t.endswith("?") or bool(_WH_OPENER.match(t))


def _why(body: str) -> str:
    """The topic of "why did X <verb>": X with the event noun its verb names ("Example
    Bank collapse"), or X alone."""
    body = _HAPPEN.sub("", body)
    words = body.split()
    if len(words) > 1 and words[-1].lower() in _EVENT_VERBS:
        return " ".join([*words[:-1], _EVENT_VERBS[words[-1].lower()]])
    return body


def _read(question: str) -> tuple[str, bool]:
    """``(topic, asks_more)``: the topic phrase of ``question`` and whether the question asks
    something of it that the topic's kind of report does not lead with (module doc)."""
    q = clean(question).rstrip("?.! ")
    if not is_question(question):
        part = _story_part(q)
        return (part[0], True) if part else (q, False)
    why, caused = _WHY.match(q), _CAUSED.match(q)
    which, happened = _WHICH.match(q), _HAPPENED.match(q)
    if which:
        where = f" {which.group(1)}" if which.group(1) else ""
        return f"{which.group(2)} versus {which.group(3)}{where}", False
    if happened:
        return _ARTICLE.sub("", happened.group(1)), False
    if why:
        return _why(why.group(1)), True
    if caused:
        return _ARTICLE.sub("", caused.group(1)), True
    if _COPULA.match(q):
        body = _BEST.sub("", _ARTICLE.sub("", _COPULA.sub("", q, count=1)))
        aspect = _ASPECT_OF.match(body)
        if not aspect:
            return body or q, False
        return _ARTICLE.sub("", aspect.group(2)), not aspect.group(1)
    if _YES_NO.match(q):
        body = _ARTICLE.sub("", _YES_NO.sub("", q, count=1))
        body = _IT_IS.sub("", body)
        take = _TAKE.match(body)
        if take and POPULATION.search(take.group(1)):
            body = f"{take.group(2)} in {take.group(1)}"
        # "as effective as" compares before "effective" asks whether it works
        parts = _THAN.split(body, maxsplit=1)
        if len(parts) == 2 and parts[0].strip() and parts[1].strip():
            return f"{parts[0].strip()} versus {parts[1].strip()}", False
        body = _NEEDED.sub(r"\1 ", body).strip()
        return body or q, False
    # "How did A prepare for X", "When did X …": the last name the question holds is its topic
    # (what it asks of the name is the asked question), or the whole question when it names none
    return _last_name(q) or q, True


# A name: capitalised words or numbers in a row ("Typhoon Examplo", "2022 Examplia floods")
_NAME = re.compile(r"(?:\b(?:[A-Z][\w'’.-]*|\d{4})\b\s*)+")
# Something that happened, by its noun or its year ("Storm Examplo", "the 2031 floods"): the
# frame reads it too (``research.text.frame``, kind ``event``)
EVENT = re.compile(
    r"\b(?:hurricane|storm|typhoon|cyclone|earthquake|flood\w*|wildfire|fire|eruption|election|"
    r"referendum|war|invasion|attack|shooting|bombing|crash|collapse|derailment|riot\w*|"
    r"protests?|strike|summit|olympics|championship|cup|tournament|festival|ceremony|awards?|"
    r"pandemic|epidemic|outbreak|scandal|crisis|disaster|launch|season|concert|tour)\b|"
    r"\b(?:19|20)\d{2}\b",
    re.I,
)
# Up to two lower-case words right after a name that end in an event's noun ("2031 Examplia
# floods", "Examplia train crash"): part of the name of what happened
_EVENT_TAIL = re.compile(r"^\s*((?:[a-z][\w-]*\s+){0,1}[a-z][\w-]*)")


def _last_name(question: str) -> str:
    """The name ``question`` is about, after its first word: the last run of capitalised words
    or years that names something that happened (``EVENT``, with the lower-case event noun right
    after it: "How did Examplia prepare for the 2031 Examplia floods?" → "2031 Examplia floods"),
    else the last run ("How did Storm Examplo affect Examplia?" → "Storm Examplo": a storm
    affects a country; "When did Ada Lovelace …" → "Ada Lovelace")."""
    first = question.split(" ", 1)
    rest = first[1] if len(first) > 1 else ""
    runs = []
    for m in _NAME.finditer(rest):
        run = m.group(0).strip()
        tail = _EVENT_TAIL.match(rest[m.end() :]) if rest[m.end() - 1 : m.end()] == " " else None
        after = tail.group(1).split() if tail else []
        # the event noun among the next two words ("… floods affect …" → "floods")
        ends = [k for k in (2, 1) if len(after) >= k and EVENT.fullmatch(after[k - 1])]
        if ends:
            run = " ".join([run, *after[: ends[0]]])
        runs.append(run)
    events = [r for r in runs if EVENT.search(r)]
    return (events or runs)[-1] if runs else ""


def restate(question: str) -> str:
    """The topic phrase of ``question`` (module doc); a text that is not a question comes back
    cleaned and unchanged. Deterministic; never raises."""
    return _read(question)[0]


def asked(question: str) -> str:
    """What ``question`` asks beyond its topic, as the question itself with its "?" ("How did A
    prepare for X?", "What caused X?", "What were the consequences of X?"), or "" when it asks
    only what the topic's kind of report answers: not a question, "Who was X?", "What is X?",
    the role, efficacy or harms of X, "Is A better than B?"."""
    topic, more = _read(question)
    q = clean(question).rstrip("?.! ")
    part = None if is_question(question) else _story_part(q)
    if part:  # "X crash investigation" asks what the investigation of the crash found
        event = part[0]
        # "the 2031 Examplia floods", but "Storm Examplo": a name takes no article
        named = event.split()[-1][:1].isupper()
        return _STORY_ASKS[part[1].lower()].format(event if named else f"the {event}")
    return f"{q[:1].upper()}{q[1:]}?" if more and topic else ""


# A topic that names an event and the part of its story the analyst wants ("Examplo Air Flight 1
# crash investigation", "2031 Examplia floods aftermath"): the event is the topic, and the part
# is asked as a question of it
_STORY_PART = re.compile(
    r"^(.+?\S)\s+(investigations?|inquiry|inquest|aftermath|response|reactions?|causes?|impact|"
    r"consequences)$",
    re.I,
)
_FIND = "What did the investigation of {} find?"
_STORY_ASKS = {
    "investigation": _FIND,
    "investigations": _FIND,
    "inquiry": _FIND,
    "inquest": _FIND,
    "aftermath": "What happened in the aftermath of {}?",
    "response": "How did authorities and others respond to {}?",
    "reaction": "How did authorities and others respond to {}?",
    "reactions": "How did authorities and others respond to {}?",
    "cause": "What caused {}?",
    "causes": "What caused {}?",
    "impact": "What was the impact of {}?",
    "consequences": "What were the consequences of {}?",
}


def _story_part(topic: str) -> tuple[str, str] | None:
    """``(event, part)`` of a topic that names an event (``EVENT``) and then a part of its story
    (``_STORY_PART``), else None ("immune response" names no event)."""
    m = _STORY_PART.match(topic)
    if not m or not EVENT.search(m.group(1)):
        return None
    return m.group(1), m.group(2)


def asked_label(label: str) -> bool:
    """True for a syllabus label that is the analyst's own question ("What caused X?", as
    ``planning.syllabus._asking`` labels it): it ends with "?". A template's labels never do."""
    return label.rstrip().endswith("?")


def label_in_sentence(label: str, *, first: bool = False) -> str:
    """A syllabus label as a sentence names it: a question quoted whole ("“How did A prepare for
    X?”"), any other label in lower case unless it opens the sentence (``first``)."""
    if asked_label(label):
        return f"“{label.strip()}”"
    return label if first else label.lower()


def in_sentence(term: str) -> str:
    """``term`` as typed, without the capital it has only for opening the question ("Examplumab"
    → "examplumab"; an acronym such as "ABC" keeps its capitals)."""
    head = (term.split() or [""])[0]
    return term if not head or head.isupper() else term[0].lower() + term[1:]
